"""Debian's chromium for the tests that drive a page through Playwright: headless, a
fresh profile, no network of its own."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium")
NO_CHROMIUM = "no chromium here (tools/ensure-system-packages installs Debian's, as root)"
# Off the closed network, chromium's own background connections fail and log errors.
QUIET = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def launched(playwright):
    """A headless chromium, or the test skipped with the reason."""
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    return playwright.chromium.launch(executable_path=CHROMIUM, args=QUIET)
