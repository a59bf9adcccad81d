"""Mutants mutmut does not make, of the kinds a person makes by hand.

mutmut replaces operators, values and arguments one at a time; the bugs people write are
often of other shapes, and each kind here was first found by hand surviving the tests
(MUTATION.md's history, issue 44):

- **member**: one member removed from a tuple or set of constants. ``DELIVERED =
  (FactSeen.YES, FactSeen.NOT_RECORDED)`` or ``turn.verdict in (Verdict.UNKNOWN,
  Verdict.FAILED_LOUDLY)`` decide verdicts by what they hold.
- **conjunct**: one operand of an ``and``/``or`` dropped (``told.step is not
  finder.step`` gone from a rule of several conditions).
- **reorder**: two neighbouring checks that each end the function (``if ...: return`` or
  ``raise``) swapped, so the other one decides when both hold.
- **swap**: a call's two arguments, or a pair's two members, in the other order.
- **casefold**: an equality or ``in`` test made blind to case (a topic matched
  case-insensitively).

Each kind is made for every place in the code `make mutate` mutates (``[tool.mutmut]``
in pyproject.toml: ``only_mutate``, narrowed for some files to the functions
``handoff_only_functions`` lists); each mutant runs the unit tests that reach it with
``-x`` and is recorded as killed (one failed) or survived (none did), in
.state/mutation-handmade.json for tools/mutation_report.py. Names:
``module.where[kind: what]``.

A member literal counts when every member is a constant: a literal value, a name bound
at module level (an import, an enum, a function) or an attribute of one, or a tuple of
those. Not counted: the value of a ``return``/``yield`` (a record of several results,
not a collection), the right side of an unpacking assignment, a subscript (type hints).

The tests that reach a mutant come from one traced run of the unit tests (coverage.py,
one context per test): those that ran the mutated lines, or, for a module-level
constant, a line anywhere in handoff/ that names it. Each mutant runs in a process forked
from this one, which imports the mutated module from the mutated text (the files are not
changed), under a CPU-time limit.

    python tools/handmade_mutants.py                 # every mutant; writes the JSON
    python tools/handmade_mutants.py --list          # the mutants, not run
    python tools/handmade_mutants.py --only '*[conjunct:*' --verbose
    python tools/handmade_mutants.py --mutmut-names  # the names `mutmut run` is given
"""

from __future__ import annotations

import argparse
import ast
import difflib
import fnmatch
import functools
import importlib
import importlib.abc
import importlib.util
import json
import os
import resource
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "handoff"
STATE = ROOT / ".state"
RESULTS = STATE / "mutation-handmade.json"
TRACE = STATE / "mutation-handmade-trace"
TESTS = "tests/unit"
# A mutant's tests get this many times the CPU their traced run took, plus a margin.
CPU_MULTIPLIER, CPU_CONSTANT = 15, 10


# --- what is mutated: pyproject.toml's [tool.mutmut] ---------------------------------------

def config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]


def module_of(path: str) -> str:
    """handoff/report/outcomes.py -> handoff.report.outcomes"""
    return path.removesuffix(".py").replace("/", ".")


def mutated_files() -> dict[str, list[str] | None]:
    """Each file mutated (relative, posix) -> the functions of it mutated (qualified names:
    ``summary``, ``Cell.text``), or None for the whole file."""
    settings = config()
    narrowed = settings.get("handoff_only_functions", {})
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if any(fnmatch.fnmatch(relative, pattern) for pattern in settings["only_mutate"]):
            found[relative] = narrowed.get(relative)
    unknown = set(narrowed) - set(found)
    if unknown:
        raise SystemExit(f"handoff_only_functions names files only_mutate does not: {', '.join(sorted(unknown))}")
    for path, functions in narrowed.items():  # a function renamed or moved would silently leave mutation
        defined = {name for name, _ in _functions(ast.parse((ROOT / path).read_text(encoding="utf-8")))}
        missing = [f for f in functions if f not in defined]
        if missing:
            raise SystemExit(f"handoff_only_functions: {path} has no {', '.join(missing)} (renamed or moved?)")
    return found


def mutmut_names() -> list[str]:
    """The patterns `mutmut run` is given: every mutant of a whole file, and of a narrowed
    file those of its listed functions (mutmut names a method ``xǁClassǁmethod``)."""
    names = []
    for path, functions in mutated_files().items():
        module = module_of(path)
        if functions is None:
            names.append(f"{module}.*")
            continue
        for function in functions:
            parts = function.split(".")
            mangled = f"xǁ{'ǁ'.join(parts)}" if len(parts) > 1 else f"x_{function}"
            names.append(f"{module}.{mangled}__mutmut_*")
    return names


def selected(name: str, patterns: list[str] | None = None) -> bool:
    """Whether a mutmut mutant is one of those `make mutate` runs."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns or mutmut_names())


# --- finding the literals ----------------------------------------------------------------------

@dataclass
class Mutant:
    name: str  # handoff.checker.losses.DELIVERED[member: -FactSeen.NOT_RECORDED]
    module: str
    path: str
    line: int
    kind: str  # member | conjunct | reorder | swap | casefold
    diff: str
    uses: list[tuple[str, int]] = field(default_factory=list)  # the lines whose tests can kill it
    tests: list[str] = field(default_factory=list)
    status: str = "not checked"
    cpu: float = 0.0  # seconds of CPU its tests took in the traced run
    source: str = field(default="", repr=False)  # the mutated module's text


def _module_names(tree: ast.Module) -> set[str]:
    """Names bound at module level: imports, definitions, assignments."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _local_names(function: ast.AST) -> set[str]:
    names = {a.arg for a in ast.walk(function) if isinstance(a, ast.arg)}
    names |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def _constant(node: ast.AST, globals_: set[str], locals_: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in globals_ and node.id not in locals_
    if isinstance(node, ast.Attribute):
        return _constant(node.value, globals_, locals_)
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_constant(e, globals_, locals_) for e in node.elts)
    return False


class _Finder(ast.NodeVisitor):
    """The tuple and set literals of constants, each with its scope (``NAME`` for a
    module-level assignment, else the qualified name of the function it is in)."""

    def __init__(self, tree: ast.Module):
        self.globals = _module_names(tree)
        self.scopes: list[tuple[str, ast.AST]] = []
        self.found: list[tuple[ast.Tuple | ast.Set, str, ast.AST | None]] = []  # literal, scope, function
        self.excluded: set[int] = set()

    def _exclude(self, node: ast.AST | None) -> None:
        if isinstance(node, (ast.BoolOp, ast.IfExp)):  # x or (None, None): still the unpacked value
            for part in (node.values if isinstance(node, ast.BoolOp) else [node.body, node.orelse]):
                self._exclude(part)
        elif node is not None:
            self.excluded.add(id(node))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scopes.append((node.name, node))
        self.generic_visit(node)
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scopes.append((node.name, node))
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Return(self, node: ast.Return) -> None:
        self._exclude(node.value)
        self.generic_visit(node)

    def visit_Yield(self, node: ast.Yield) -> None:
        self._exclude(node.value)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
            self._exclude(node.value)
        if not self.scopes and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.scopes.append((node.targets[0].id, node))
            self.generic_visit(node)
            self.scopes.pop()
            return
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.visit(node.value)  # the slice is an index or a type's parameters, never a collection

    def visit_arguments(self, node: ast.arguments) -> None:
        pass  # annotations and defaults: evaluated once, at import

    def _literal(self, node: ast.Tuple | ast.Set) -> None:
        function = next((scope for _, scope in reversed(self.scopes)
                         if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        locals_ = _local_names(function) if function is not None else set()
        if (node.elts and id(node) not in self.excluded and not isinstance(getattr(node, "ctx", None), ast.Store)
                and all(_constant(e, self.globals, locals_) for e in node.elts)):
            scope = ".".join(name for name, _ in self.scopes) or "<module>"
            self.found.append((node, scope, function))
            return  # its members are removed, not theirs
        self.generic_visit(node)

    visit_Tuple = _literal
    visit_Set = _literal


def _offset(lines: list[str], line: int, column: int) -> int:
    """ast's (line, byte column) as an index into the text."""
    return sum(len(text) for text in lines[:line - 1]) + len(lines[line - 1].encode()[:column].decode())


def _without(source: str, node: ast.Tuple | ast.Set, index: int) -> str:
    kept = [ast.get_source_segment(source, e) for i, e in enumerate(node.elts) if i != index]
    if isinstance(node, ast.Set):
        text = "{" + ", ".join(kept) + "}" if kept else "set()"
    else:
        text = "(" + ", ".join(kept) + ("," if len(kept) == 1 else "") + ")"
    lines = source.splitlines(keepends=True)
    start = _offset(lines, node.lineno, node.col_offset)
    end = _offset(lines, node.end_lineno, node.end_col_offset)
    return source[:start] + text + source[end:]


def _diff(before: str, after: str) -> str:
    changed = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return "\n".join(line for line in changed if line.startswith(("-", "+")) and not line.startswith(("---", "+++")))


def _uses(name: str) -> list[tuple[str, int]]:
    """The lines of handoff/ that read a module-level name (not imports, not its assignment)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        relative = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            if ((isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load))
                    or (isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load))):
                found.append((relative, node.lineno))
    return sorted(set(found))


def mutants() -> list[Mutant]:
    found: list[Mutant] = []
    for path, functions in mutated_files().items():
        source = (ROOT / path).read_text(encoding="utf-8")
        tree = ast.parse(source)
        made = [*_members(source, tree, path, functions), *_shapes(source, tree, path, functions)]
        seen: dict[str, int] = {}
        for mutant in made:
            seen[mutant.name] = seen.get(mutant.name, 0) + 1
            if seen[mutant.name] > 1:
                mutant.name += f"#{seen[mutant.name]}"
            ast.parse(mutant.source)
        found += made
    return found


def _mutant(path: str, scope: str, kind: str, what: str, source: str, mutated: str, node: ast.AST,
            uses: list[tuple[str, int]] | None = None) -> Mutant:
    what = " ".join(what.split())
    first, last = node.lineno, getattr(node, "end_lineno", node.lineno)
    return Mutant(f"{module_of(path)}.{scope}[{kind}: {what}]", module_of(path), path, first, kind,
                  _diff(source, mutated), uses or [(path, line) for line in range(first, last + 1)], source=mutated)


def _members(source: str, tree: ast.Module, path: str, functions: list[str] | None) -> list[Mutant]:
    """One member removed from each tuple or set of constants."""
    finder = _Finder(tree)
    finder.visit(tree)
    wanted_constants = set()
    if functions is not None:  # the module's constants that the listed functions read
        for scope, node in _functions(tree):
            if scope in functions:
                wanted_constants |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    found = []
    for node, scope, function in finder.found:
        top = scope.split(".")[0]
        if functions is not None and function is None and top not in wanted_constants:
            continue
        if functions is not None and function is not None and not _chosen(scope, functions):
            continue
        for index, element in enumerate(node.elts):
            removed = ast.get_source_segment(source, element)
            uses = None if function is not None or scope == "<module>" else _uses(top)
            found.append(_mutant(path, scope, "member", f"-{removed}", source, _without(source, node, index), node,
                                 uses))
    return found


def _chosen(scope: str, functions: list[str] | None) -> bool:
    return functions is None or any(scope == f or scope.startswith(f + ".") for f in functions)


# --- the shapes of hand-made bugs: conjunct, reorder, swap, casefold ------------------------------

FOLD = "_handmade_fold_"
FOLD_HELPER = f"""

def {FOLD}(value):  # made by tools/handmade_mutants.py: text compared without its case
    if type(value) is str:
        return value.casefold()
    if type(value) in (tuple, list, set, frozenset):
        return type(value)({FOLD}(item) for item in value)
    return value
"""
COMPARED = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}
# Calls whose two arguments mean the same in either order, or whose swap only fails loudly
SYMMETRIC = {"max", "min", "isinstance", "issubclass", "getattr", "hasattr", "setdefault", "get"}


def _own_nodes(function: ast.AST):
    """The nodes of a function, not those of the functions and classes defined in it
    (they are mutated as functions of their own)."""
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        pending.extend(ast.iter_child_nodes(node))


def _replaced(source: str, node: ast.AST, text: str) -> str:
    lines = source.splitlines(keepends=True)
    start = _offset(lines, node.lineno, node.col_offset)
    end = _offset(lines, node.end_lineno, node.end_col_offset)
    return source[:start] + text + source[end:]


def _ends(statement: ast.stmt) -> bool:
    """An ``if`` with no ``else`` whose body ends the function or the loop: a check."""
    return (isinstance(statement, ast.If) and not statement.orelse
            and isinstance(statement.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)))


def _exclusive(first: ast.If, second: ast.If) -> bool:
    """Two checks of one value's type (``isinstance(x, str)``, then ``isinstance(x, list)``):
    at most one holds, so their order means nothing."""
    def subject(test: ast.expr) -> str | None:
        if isinstance(test, ast.Call) and getattr(test.func, "id", None) == "isinstance" and len(test.args) == 2:
            return ast.dump(test.args[0])
        return None
    return subject(first.test) is not None and subject(first.test) == subject(second.test) and \
        ast.dump(first.test.args[1]) != ast.dump(second.test.args[1])


def _swapped_lines(source: str, first: ast.stmt, second: ast.stmt) -> str:
    lines = source.splitlines(keepends=True)
    a, b = slice(first.lineno - 1, first.end_lineno), slice(second.lineno - 1, second.end_lineno)
    return "".join(lines[:a.start] + lines[b] + lines[a.stop:b.start] + lines[a] + lines[b.stop:])


def _named_constants(node: ast.AST) -> bool:
    """``Verdict.KEPT`` or a tuple or set of such: an enum's members (a class's, by its
    capital), which a fold leaves as they are."""
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        return bool(node.elts) and all(_named_constants(e) for e in node.elts)
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id[:1].isupper())


def _folded(node: ast.AST) -> bool:
    """``text.lower()`` or ``text.casefold()``: already without its case."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("lower", "casefold") and not node.args)


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("id", "len", "int", "float", "round", "sum")


def _shapes(source: str, tree: ast.Module, path: str, functions: list[str] | None) -> list[Mutant]:
    found = []
    finder = _Finder(tree)
    finder.visit(tree)
    records = finder.excluded  # returned and unpacked values: records of results, not pairs
    hints = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.Subscript)  # tuple[str, ...]
             for inner in ast.walk(node.slice)}
    # a collection tested with `in`: the order of its members means nothing
    unordered = {id(node.comparators[0]) for node in ast.walk(tree)
                 if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))}
    for scope, function in _functions(tree):
        if not _chosen(scope, functions):
            continue
        segment = functools.partial(ast.get_source_segment, source)
        for node in _own_nodes(function):
            if isinstance(node, ast.BoolOp):
                word = "and" if isinstance(node.op, ast.And) else "or"
                for index, value in enumerate(node.values):
                    if _constant(value, finder.globals, _local_names(function)):
                        continue  # the default of an `or` (x or ""): a mutant of a value, mutmut's kind
                    kept = f" {word} ".join(segment(v) for i, v in enumerate(node.values) if i != index)
                    found.append(_mutant(path, scope, "conjunct", f"-{word} {segment(value)}", source,
                                         _replaced(source, node, f"({kept})"), node))
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARED:
                left, right = node.left, node.comparators[0]
                if any(isinstance(side, ast.Constant) and not isinstance(side.value, str) for side in (left, right)):
                    continue  # None, a number: no case to lose
                if any(_named_constants(side) for side in (left, right)):
                    continue  # Verdict.KEPT, (Verdict.UNKNOWN, ...): members of an enum, never folded
                if any(_folded(side) or _number(side) for side in (left, right)):
                    continue  # text.lower(): blind to case already; len(x), id(x): no text
                text = f"{FOLD}({segment(left)}) {COMPARED[type(node.ops[0])]} {FOLD}({segment(right)})"
                found.append(_mutant(path, scope, "casefold", segment(node), source,
                                     _replaced(source, node, text) + FOLD_HELPER, node))
            elif isinstance(node, ast.Call) and len(node.args) == 2 and not any(
                    isinstance(a, ast.Starred) for a in node.args):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                first, second = (segment(a) for a in node.args)
                if name in SYMMETRIC or first == second or all(isinstance(a, ast.Constant) for a in node.args):
                    continue
                mutated = _replaced(source, node.args[1], first)
                mutated = _replaced(mutated, node.args[0], second)  # the later one first: offsets hold
                found.append(_mutant(path, scope, "swap", f"{segment(node.func)}({first}, {second})", source,
                                     mutated, node))
            elif (isinstance(node, ast.Tuple) and len(node.elts) == 2 and isinstance(node.ctx, ast.Load)
                  and id(node) not in records | hints | unordered
                  and not all(_constant(e, finder.globals, _local_names(function)) for e in node.elts)):
                first, second = (segment(e) for e in node.elts)
                if first == second or isinstance(node.elts[0], ast.Starred) or isinstance(node.elts[1], ast.Starred):
                    continue
                mutated = _replaced(source, node.elts[1], first)
                mutated = _replaced(mutated, node.elts[0], second)
                found.append(_mutant(path, scope, "swap", f"({first}, {second})", source, mutated, node))
            for block in (getattr(node, field, None) for field in ("body", "orelse", "finalbody")):
                if isinstance(block, list):
                    for first, second in zip(block, block[1:]):
                        if _ends(first) and _ends(second) and not _exclusive(first, second):
                            found.append(_mutant(path, scope, "reorder", f"lines {first.lineno} and {second.lineno}",
                                                 source, _swapped_lines(source, first, second), first,
                                                 [(path, line) for line in range(first.lineno, second.end_lineno + 1)]))
        for first, second in zip(function.body, function.body[1:]):  # the function's own body
            if _ends(first) and _ends(second) and not _exclusive(first, second):
                found.append(_mutant(path, scope, "reorder", f"lines {first.lineno} and {second.lineno}", source,
                                     _swapped_lines(source, first, second), first,
                                     [(path, line) for line in range(first.lineno, second.end_lineno + 1)]))
    return found


def _functions(tree: ast.Module):
    """(qualified name, node) of every function and method."""
    def walk(nodes, prefix):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + node.name, node
                yield from walk(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, prefix + node.name + ".")
    yield from walk(tree.body, "")


# --- which tests reach which line: one traced run ------------------------------------------------

def trace() -> None:
    """Run the unit tests under coverage.py, one context per test; write the data and each
    test's duration. Run in a process of its own (``--trace``): the process that forks the
    mutants must not have imported handoff."""
    import coverage
    import pytest

    TRACE.mkdir(parents=True, exist_ok=True)
    measured = coverage.Coverage(data_file=str(TRACE / "coverage"), config_file=False, source=[str(PACKAGE)])
    durations: dict[str, float] = {}

    class Contexts:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            measured.switch_context(item.nodeid)
            started = time.process_time()
            yield
            durations[item.nodeid] = time.process_time() - started
            measured.switch_context("")

    measured.start()
    try:
        code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", TESTS], plugins=[Contexts()])
    finally:
        measured.stop()
        measured.save()
    ours = [str(ROOT / part) for part in ("handoff", "tests", "bench", "tools")]
    preload = sorted({name.split(".")[0] for name, module in sys.modules.items()
                      if not str(getattr(module, "__file__", "") or "").startswith(tuple(ours))
                      and not name.startswith(("handoff", "tests", "bench", "__main__", "conftest"))})
    (TRACE / "tests.json").write_text(json.dumps({"exit_code": int(code), "durations": durations,
                                                  "preload": preload}), encoding="utf-8")


def _tests_by_line() -> tuple[dict[tuple[str, int], set[str]], dict[str, float], list[str]]:
    import coverage

    run = json.loads((TRACE / "tests.json").read_text(encoding="utf-8"))
    if run["exit_code"] != 0:
        raise SystemExit(f"the unit tests failed unmutated (pytest exit code {run['exit_code']}; its output: "
                         f"{(TRACE / 'pytest.log').relative_to(ROOT)}): fix them first")
    data = coverage.CoverageData(basename=str(TRACE / "coverage"))
    data.read()
    by_line: dict[tuple[str, int], set[str]] = {}
    for measured in data.measured_files():
        relative = Path(measured).resolve().relative_to(ROOT).as_posix()
        for line, contexts in data.contexts_by_lineno(measured).items():
            by_line[(relative, line)] = {c for c in contexts if c}
    return by_line, run["durations"], run["preload"]


# --- running a mutant -------------------------------------------------------------------------

class _MutatedModule(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports one module from the mutant's text instead of its file."""

    def __init__(self, mutant: Mutant):
        self.mutant = mutant

    def find_spec(self, fullname, path, target=None):
        if fullname != self.mutant.module:
            return None
        file = str(ROOT / self.mutant.path)
        return importlib.util.spec_from_file_location(fullname, file, loader=self,
                                                      submodule_search_locations=None)

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        exec(compile(self.mutant.source, module.__file__, "exec", dont_inherit=True), module.__dict__)


NOT_MUTATED = 99  # the module was imported before the mutant could be put in


def _child(mutant: Mutant, cpu_seconds: int, verbose: bool) -> None:
    """In the forked process: import the mutant, run its tests, exit with pytest's code."""
    import pytest

    code = NOT_MUTATED
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        if not verbose:
            output = os.open(_log(os.getpid()), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(output, 1)
            os.dup2(output, 2)
        sys.dont_write_bytecode = True
        if mutant.module in sys.modules:
            os._exit(NOT_MUTATED)
        finder = _MutatedModule(mutant)
        sys.meta_path.insert(0, finder)
        code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *mutant.tests]))
        loaded = sys.modules.get(mutant.module)
        if loaded is None or loaded.__spec__ is None or loaded.__spec__.loader is not finder:
            code = NOT_MUTATED
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _log(pid: int) -> Path:
    return TRACE / f"mutant-{pid}.log"


def _status(wait_status: int, output: str) -> str:
    if os.WIFSIGNALED(wait_status):
        return "timeout" if os.WTERMSIG(wait_status) in (signal.SIGXCPU, signal.SIGKILL) else "crashed"
    code = os.WEXITSTATUS(wait_status)
    if code == 4 and ("ERROR collecting" in output or "errors during collection" in output):
        # The test ids are those of the unmutated run: a test module that no longer
        # imports (a scenario file the mutant refuses, say) is what makes them unknown.
        return "killed"
    return {0: "survived", 1: "killed", 2: "killed", 3: "killed", 5: "no tests",
            NOT_MUTATED: "not mutated"}.get(code, f"pytest exit code {code}")


def run(found: list[Mutant], jobs: int, verbose: bool) -> None:
    pending = list(found)
    running: dict[int, Mutant] = {}
    done = 0
    while pending or running:
        while pending and len(running) < jobs:
            mutant = pending.pop(0)
            if not mutant.tests:
                mutant.status = "no tests"
                continue
            cpu = int(CPU_MULTIPLIER * mutant.cpu) + CPU_CONSTANT
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _child(mutant, cpu, verbose)
            running[pid] = mutant
        if not running:
            continue
        pid, wait_status = os.wait()
        if pid not in running:  # not a mutant's process (an orphan this process was made to reap)
            continue
        mutant = running.pop(pid)
        log = _log(pid)
        output = log.read_text(errors="replace") if log.exists() else ""
        log.unlink(missing_ok=True)
        mutant.status = _status(wait_status, output)
        if mutant.status not in ("killed", "survived"):
            print(output[-3000:], flush=True)
        done += 1
        print(f"[{done}/{len(found)}] {mutant.status:9} {mutant.name} ({len(mutant.tests)} tests)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the mutants and the lines that pick their tests")
    parser.add_argument("--only", action="append", help="run only mutants whose name matches (fnmatch)")
    parser.add_argument("--verbose", action="store_true", help="show each mutant's pytest output")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--mutmut-names", action="store_true", help="print the mutant names `mutmut run` is given")
    parser.add_argument("--trace", action="store_true", help="(internal) the traced run of the unit tests")
    parser.add_argument("--reuse-trace", action="store_true", help="use the last traced run (the tests unchanged)")
    arguments = parser.parse_args()
    if arguments.mutmut_names:
        print(" ".join(mutmut_names()))
        return 0
    if arguments.trace:
        trace()
        return 0
    found = mutants()
    if arguments.only:
        found = [m for m in found if any(fnmatch.fnmatchcase(m.name, pattern) for pattern in arguments.only)]
    if arguments.list:
        for mutant in found:
            print(f"{mutant.name}  ({mutant.path}:{mutant.line}; tests from {len(mutant.uses)} line(s))")
        return 0
    started = time.monotonic()
    if not (arguments.reuse_trace and (TRACE / "tests.json").exists()):
        print(f"tracing the unit tests ({TESTS}) to find which reach which line ...", flush=True)
        TRACE.mkdir(parents=True, exist_ok=True)
        with open(TRACE / "pytest.log", "w") as log:
            subprocess.run([sys.executable, __file__, "--trace"], cwd=ROOT, check=True, stdout=log,
                           stderr=subprocess.STDOUT)
    by_line, durations, preload = _tests_by_line()
    for mutant in found:
        reached = set().union(*(by_line.get(use, set()) for use in mutant.uses))
        by_function: dict[str, float] = {}  # a parametrized test runs whole: its ids need not survive the shell
        for test in reached:
            function = test.split("[")[0]
            by_function[function] = by_function.get(function, 0.0) + durations.get(test, 0.0)
        mutant.tests = sorted(by_function, key=lambda test: (by_function[test], test))
        mutant.cpu = sum(by_function.values())
    for name in preload:  # what the tests import besides the project, imported once here for every fork
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that will not import here is imported (or not) in the fork
            pass
    leaked = sorted(name for name in sys.modules if name == "handoff" or name.startswith(("handoff.", "tests.")))
    if leaked:
        raise SystemExit(f"the project was imported before forking ({', '.join(leaked[:3])}): mutants cannot be put in")
    os.chdir(ROOT)
    TRACE.mkdir(parents=True, exist_ok=True)
    print(f"{len(found)} mutants, each a member removed from a tuple or set of constants", flush=True)
    run(found, arguments.jobs, arguments.verbose)
    results = {m.name: {k: v for k, v in asdict(m).items() if k not in ("source", "uses", "tests", "cpu")}
               | {"tests": len(m.tests)} for m in found}
    if arguments.only and RESULTS.exists():  # a partial run updates the last full one
        results = json.loads(RESULTS.read_text(encoding="utf-8"))["mutants"] | results
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"mutants": results}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    for mutant in found:
        counts[mutant.status] = counts.get(mutant.status, 0) + 1
    print(f"{RESULTS.relative_to(ROOT)}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
          + f" in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
