"""Finding the runtime: COPILOT_CLI_PATH wins, else the npm-installed one, else a clear error."""

import pytest

from handoff import runtime_locator
from handoff.errors import UserError


def test_override_must_be_an_executable(monkeypatch, tmp_path):
    monkeypatch.setenv("COPILOT_CLI_PATH", str(tmp_path / "missing"))
    with pytest.raises(UserError, match="COPILOT_CLI_PATH=.* is not an executable file"):
        runtime_locator.locate_runtime()


def test_override_wins(monkeypatch, tmp_path):
    runtime = tmp_path / "copilot"
    runtime.write_text("#!/bin/sh\n")
    runtime.chmod(0o755)
    monkeypatch.setenv("COPILOT_CLI_PATH", str(runtime))
    assert runtime_locator.locate_runtime() == runtime


def test_missing_install_says_to_run_make_setup(monkeypatch, tmp_path):
    monkeypatch.delenv("COPILOT_CLI_PATH", raising=False)
    monkeypatch.setattr(runtime_locator, "RUNTIME_DIR", tmp_path)
    with pytest.raises(UserError, match="run `make setup`"):
        runtime_locator.locate_runtime()


def test_platform_package_is_npms_name():
    assert runtime_locator.platform_package().startswith("copilot-")
