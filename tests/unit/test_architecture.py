"""The layering the README promises, checked on the source: worker/ is a leaf, and the
SDK is imported in one module only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "handoff"
ABOVE_THE_WORKER = ("handoff.coordinator", "handoff.hosts", "handoff.backends", "handoff.checker", "handoff.report",
                    "handoff.runs", "handoff.lab", "handoff.cli", "handoff.faults", "handoff.doctor",
                    "handoff.containers", "handoff.export")


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "worker").glob("*.py")), ids=lambda p: p.name)
def test_nothing_in_the_worker_imports_from_above_it(path):
    upward = sorted(name for name in imports(path) if name.startswith(ABOVE_THE_WORKER))
    assert upward == []


def test_the_sdk_is_imported_in_one_module_only():
    importers = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                       if any(name == "copilot" or name.startswith("copilot.") for name in imports(path)))
    assert importers == ["worker/sdk.py"]
