"""The results as tables: printed to the terminal as each benchmark ends, and written
together to BENCHMARKS.md with the machine they were measured on.

A benchmark returns a :class:`Section` — plain data, so the same content renders twice
(terminal and Markdown) and a new benchmark needs no code here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tabulate import tabulate


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Section:
    key: str
    title: str
    method: str = ""  # how it was measured, and why that way
    tables: list[Table] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # what the numbers say
    problems: list[str] = field(default_factory=list)  # failed runs, skipped parts
    seconds: float = 0.0  # how long the benchmark itself took


def terminal(section: Section) -> str:
    lines = [f"== {section.title} ({section.seconds:.0f} s)"]
    for table in section.tables:
        if table.caption:
            lines += ["", table.caption]
        lines.append(tabulate(table.rows, headers=table.headers, tablefmt="simple", disable_numparse=True))
    for finding in section.findings:
        lines.append(f"  * {finding}")
    for problem in section.problems:
        lines.append(f"  ! {problem}")
    return "\n".join(lines) + "\n"


def markdown(section: Section) -> str:
    parts = [f"## {section.title}", ""]
    if section.method:
        parts += [section.method.replace("``", "`"), ""]  # docstrings use reST literals
    for table in section.tables:
        if table.caption:
            parts += [f"**{table.caption}**", ""]
        parts += [tabulate(table.rows, headers=table.headers, tablefmt="github", disable_numparse=True), ""]
    if section.findings:
        parts += ["What the numbers say:", ""] + [f"* {finding}" for finding in section.findings] + [""]
    if section.problems:
        parts += ["Problems in this run:", ""] + [f"* {problem}" for problem in section.problems] + [""]
    parts += [f"_This benchmark took {section.seconds:.0f} s._", ""]
    return "\n".join(parts)


def write(path: Path, machine: list[tuple[str, str]], sections: list[Section], preamble: str) -> None:
    """BENCHMARKS.md, written atomically: a reader never sees half a report."""
    parts = ["# Benchmarks", "", preamble, "", "## Machine and run", "",
             tabulate([[k, v] for k, v in machine], headers=["", ""], tablefmt="github", disable_numparse=True), ""]
    for section in sections:
        parts.append(markdown(section))
    parts += kept_blocks(path.read_text(encoding="utf-8")) if path.exists() else []
    temporary = path.with_name(path.name + ".partial")
    temporary.write_text("\n".join(parts).rstrip() + "\n", encoding="utf-8")
    temporary.replace(path)


# A section another command writes into the same file (`make soak`'s), between its own
# markers: that command replaces only its block, and `make bench` carries it over.
BLOCK = re.compile(r"<!-- (?P<name>[\w-]+): begin[^>]*-->\n.*?<!-- (?P=name): end -->\n?", re.S)


def block(name: str, content: str) -> str:
    return f"<!-- {name}: begin (written by `make {name}`; `make bench` keeps it) -->\n{content.rstrip()}\n<!-- {name}: end -->\n"


def kept_blocks(text: str) -> list[str]:
    return [found.group(0) for found in BLOCK.finditer(text)]


def replace_block(text: str, name: str, content: str) -> str:
    """``text`` with the block ``name`` holding ``content``: in its place, or appended."""
    new = block(name, content)
    for found in BLOCK.finditer(text):
        if found.group("name") == name:
            return text[:found.start()] + new + text[found.end():]
    return text.rstrip() + "\n\n" + new
