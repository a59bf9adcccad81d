"""The browser a step in `handoff chat`'s page is done in: Debian's chromium, driven by
Playwright, headless, with a profile per device (its localStorage and its cookies)."""

from __future__ import annotations

import importlib.util
import shutil

# Off the closed network, chromium's own background connections fail and log errors.
QUIET = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run")


def chromium() -> str | None:
    return shutil.which("chromium")


def browser_problem() -> str | None:
    """Why a step cannot be done in a browser here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "a step in a browser needs Playwright: pip install -e '.[test]'"
    if chromium() is None:
        return "a step in a browser needs chromium: tools/ensure-system-packages installs Debian's (as root)"
    return None
