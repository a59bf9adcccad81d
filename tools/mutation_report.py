"""Write MUTATION.md from the results of `make mutate`: mutmut's, for the files and
functions [tool.mutmut] names, and the hand-made kinds mutmut does not make
(tools/handmade_mutants.py, .state/mutation-handmade.json). The score per module of the verdict
core and every surviving mutant, with the reason it is equivalent
(tests/mutation_equivalents.toml).

Exit 1 when a survivor has no reason, when mutants were left unchecked (a time-out
included), when the score is under the goal, or when a reason names a mutant that no
longer survives: a new survivor is either a missing test or an equivalent mutant someone
has to explain, and mutmut's names move when a function changes, so a stale reason could
otherwise come to explain another mutant.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTMUT = str(Path(sys.executable).with_name("mutmut"))
GOAL = 0.95

sys.path.insert(0, str(ROOT / "tools"))
import handmade_mutants  # noqa: E402  (tools/ is not a package)


def statuses() -> dict[str, str]:
    """mutmut's mutants that `make mutate` runs (not those of a narrowed file's other functions)."""
    done = subprocess.run([MUTMUT, "results", "--all", "true"], capture_output=True, text=True, cwd=ROOT, check=True)
    patterns = handmade_mutants.mutmut_names()
    found = {}
    for line in done.stdout.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name and handmade_mutants.selected(name, patterns):
            found[name] = status
    return found


def handmade() -> dict[str, dict]:
    """The hand-made mutants, by name: module, kind, diff, status."""
    if not handmade_mutants.RESULTS.exists():
        raise SystemExit(f"{handmade_mutants.RESULTS.relative_to(ROOT)} is missing: run tools/handmade_mutants.py")
    return json.loads(handmade_mutants.RESULTS.read_text(encoding="utf-8"))["mutants"]


def diff(name: str) -> str:
    shown = subprocess.run([MUTMUT, "show", name], capture_output=True, text=True, cwd=ROOT).stdout
    return "\n".join(line for line in shown.splitlines()
                     if line.startswith(("-", "+")) and not line.startswith(("---", "+++")))


def module(name: str) -> str:
    return name.split(".x", 1)[0]


def main() -> int:
    results = statuses()
    removed = handmade()
    results |= {name: found["status"] for name, found in removed.items()}
    reasons = {entry["mutant"]: entry["reason"]
               for entry in tomllib.loads((ROOT / "tests" / "mutation_equivalents.toml").read_text())["equivalent"]}
    by_module: dict[str, Counter] = defaultdict(Counter)
    for name, status in results.items():
        by_module[removed[name]["module"] if name in removed else module(name)][status] += 1
    survivors = sorted(name for name, status in results.items() if status == "survived")
    unchecked = sorted(name for name, status in results.items() if status not in ("killed", "survived"))
    unexplained = [name for name in survivors if name not in reasons]
    killed = sum(counts["killed"] for counts in by_module.values())
    score = killed / len(results) if results else 0.0
    kinds: dict[str, Counter] = defaultdict(Counter)
    for found in removed.values():
        kinds[found["kind"]][found["status"]] += 1
    by_kind = "; ".join(f"{kind} {counts['killed']} of {sum(counts.values())}" for kind, counts in sorted(kinds.items()))
    stale = sorted(name for name in reasons if results.get(name) != "survived")

    lines = ["# Mutation testing of the verdict core", "",
             "Written by `make mutate` (mutmut, with the unit tests as the oracle; see `[tool.mutmut]` in "
             "pyproject.toml). A mutant is a small deliberate bug — an operator flipped, a value replaced, a line "
             "dropped — put into the code that decides verdicts; a test suite that lets one pass would let the same "
             "bug pass. Every survivor is listed with the reason it cannot be told apart from the real code.", "",
             f"Run {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}: **{killed} of {len(results)} mutants "
             f"killed ({score:.1%})**; goal {GOAL:.0%}.", "",
             f"{len(removed)} of them are of the kinds people make by hand and mutmut does not (`tools/handmade_mutants.py`, "
             f"named `module.where[kind: what]`); killed, by kind: {by_kind}. "
             "Which code is mutated: `only_mutate` in `[tool.mutmut]`, and of `handoff_only_functions`' files only "
             "the functions listed there.", "",
             "| module | mutants | killed | survived | other | killed share |", "|---|---|---|---|---|---|"]
    for name in sorted(by_module):
        counts = by_module[name]
        total = sum(counts.values())
        other = total - counts["killed"] - counts["survived"]
        lines.append(f"| `{name}` | {total} | {counts['killed']} | {counts['survived']} | {other} | "
                     f"{counts['killed'] / total:.1%} |")
    lines += ["", "## Survivors", ""]
    for name in survivors:
        shown = removed[name]["diff"] if name in removed else diff(name)
        lines += [f"### `{name}`", "", "```diff", shown, "```", "",
                  f"Equivalent: {reasons[name]}" if name in reasons else "**UNEXPLAINED: add a test or a reason.**", ""]
    if not survivors:
        lines.append("None.")
    if unchecked:
        lines += ["## Not checked", "", *(f"- `{name}`: {results[name]}" for name in unchecked)]
    (ROOT / "MUTATION.md").write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    print(f"MUTATION.md: {killed}/{len(results)} killed ({score:.1%}); {len(survivors)} survived, "
          f"{len(unexplained)} unexplained, {len(unchecked)} not checked")
    for name in unexplained:
        print(f"unexplained survivor: {name}", file=sys.stderr)
    for name in stale:
        print(f"tests/mutation_equivalents.toml explains {name}, which is {results.get(name, 'no mutant now')}: "
              f"remove it or rename it", file=sys.stderr)
    if score < GOAL:
        print(f"the score {score:.1%} is under the goal of {GOAL:.0%}", file=sys.stderr)
    return 1 if unexplained or unchecked or stale or score < GOAL else 0


if __name__ == "__main__":
    sys.exit(main())
