"""The layering, checked on the source: every import in handoff/ runs down the layer order
below and none runs in a circle; the SDK is imported in one module only.

A unit is a top-level module of handoff/ or a package (a folder). A module may import
from its own package and from any unit listed before its own, never from one after it.
The imports read are all of them: at the top of a module, inside a function (imported
late, to start faster, is still a dependency) and under ``TYPE_CHECKING`` (a type names a
dependency too).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "handoff"

# The layer order, written down once, bottom first: each line a layer, named for what it
# holds; within a line, a unit may use those before it.
LAYERS = (
    ("the words and plain data", ("words", "handoff", "errors", "confined", "printable", "session_ids",
                                  "runtime_markers", "fact", "protocol", "protocol_schema")),
    ("this machine", ("runtime_locator", "processes", "bounded_read", "eventlog", "owners", "versions")),
    ("what a worker talks to", ("witness", "stores", "guard")),
    ("the worker", ("worker",)),
    ("where and how workers run", ("containers", "inputs", "backends", "hosts", "worker_process", "leftovers",
                                   "faults")),
    ("the plan and its record", ("scenario", "scenario_fields", "scenario_files", "capacity", "skew", "runs")),
    ("judging, running, the lab, the chat", ("checker", "places", "chat", "coordinator", "lab", "conform")),
    ("what a person reads", ("report", "export", "doctor")),
    ("what each command does", ("app",)),
    ("the command: options in, exit codes out", ("commands", "cli", "__main__")),
)
ORDER = tuple(unit for _, units in LAYERS for unit in units)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def unit(module: str) -> str:
    """``handoff.report.cells`` -> ``report``; the package itself is ``handoff``."""
    return module.split(".")[1] if "." in module else module


def imports(path: Path) -> set[str]:
    """Every module name an import in ``path`` names, wherever the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: from the module's own package
                package = module_name(path).split(".")
                package = package[:len(package) - node.level + (path.name == "__init__.py")]
                module = ".".join(package + ([module] if module else []))
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # `from package import module`
    return found


@cache
def project_imports(module: str) -> frozenset[str]:
    """The modules of handoff/ that ``module`` imports."""
    return frozenset(name for name in imports(MODULES[module]) if name in MODULES and name != module)


def test_every_unit_has_its_place_in_the_layer_order():
    units = {unit(module) for module in MODULES}
    assert sorted(units - set(ORDER)) == [], "a new module or package: give it its layer in LAYERS"
    assert sorted(set(ORDER) - units) == [], "LAYERS names a unit that is gone"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_down_the_layer_order(module):
    mine = ORDER.index(unit(module))
    upward = sorted(name for name in project_imports(module)
                    if unit(name) != unit(module) and ORDER.index(unit(name)) > mine)
    assert upward == []


def test_no_module_imports_itself_through_others():
    """No circle among the modules (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in project_imports(module):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            circle = []
            while not circle or circle[-1] != module:
                circle.append(stack.pop())
            if len(circle) > 1:
                circles.append(sorted(circle))

    for module in MODULES:
        if module not in index:
            visit(module)
    assert circles == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("__init__.py")), ids=lambda path: module_name(path))
def test_a_package_face_holds_no_logic(path):
    """An ``__init__.py`` says what its package holds and imports nothing, so that using one
    module of a package loads that module only, and the logic has a name to be found by.
    (The project's version is the one value the package itself carries.)"""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    kept = [node for node in body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
            and not (isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__version__"])
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
    assert [ast.unparse(node).splitlines()[0] for node in kept] == []


@pytest.mark.parametrize("module", sorted(name for name in MODULES if unit(name) == "worker"))
def test_nothing_in_the_worker_imports_from_above_it(module):
    """The worker runs in processes of its own, on other hosts and in containers: it
    needs nothing the coordinator, the checker or the command know."""
    assert sorted(name for name in project_imports(module) if ORDER.index(unit(name)) > ORDER.index("worker")) == []


def test_the_sdk_is_imported_in_one_module_only():
    importers = sorted(str(path.relative_to(PACKAGE)) for path in MODULES.values()
                       if any(name == "copilot" or name.startswith("copilot.") for name in imports(path)))
    assert importers == ["worker/sdk.py"]
