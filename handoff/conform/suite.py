"""The suite: each contract row run on a fresh provider the factory makes, then the
persistence rows with the real runtime; each outcome ok, fail or unknown (the check could
not finish, or its evidence disagrees), and the report of them all."""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable

from handoff.conform import cost, lease, persistence
from handoff.conform.contract import ROWS, ContractRow
from handoff.conform.cost import Cost
from handoff.conform.lease import Superseded
from handoff.conform.persistence import Copied, Found, Heard, Shared
from handoff.fact import Fact
from handoff.worker.sdk import session_fs_handler

TOP = "/conform"  # every row works under it, in a session of its own, and removes it when done
ROW_SECONDS = 30.0  # a row that takes longer is unknown: the provider hangs, or waits on something
NOT_RUN = "a kill inside one of the provider's writes: not run by this version"


class Outcome:
    OK = "ok"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Row:
    name: str
    says: str
    required: bool
    outcome: str  # Outcome
    reason: str  # why it failed or is unknown; what held when ok


@dataclass(frozen=True)
class Report:
    provider: str  # what was judged, as named
    rows: tuple[Row, ...]
    not_run: tuple[str, ...] = field(default=(NOT_RUN,))

    def passed_required(self) -> bool:
        return all(row.outcome == Outcome.OK for row in self.rows if row.required)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed_required() else 1


@dataclass(frozen=True)
class StandInSession:
    """What the SDK passes the factory, as far as a provider reads it: the session's id."""
    session_id: str


@dataclass(frozen=True)
class PersistenceRow:
    name: str
    says: str
    run: Callable[[Callable[[Any], Any], str | None, Fact], Heard | Found | Copied | Shared | Cost | Superseded]
    required: bool = True


PERSISTENCE = (
    PersistenceRow("resume, same process", "created, told and closed through it, then resumed in the same process: "
                   "the answer names the fact, which the model was sent",
                   lambda factory, spec, fact: persistence.same_process(factory, fact)),
    PersistenceRow("resume, new process", "resumed by a new process with a home of its own, the provider the one "
                   "thing the two share: the fact kept", persistence.new_process),
    PersistenceRow("compaction, then new process", "compacted (its history replaced by the model's summary) before "
                   "the close, then resumed by a new process with a home of its own: the fact kept in the summary",
                   lambda factory, spec, fact: persistence.new_process(factory, spec, fact, compacted=True)),
    PersistenceRow("resume after a kill mid-turn", "the writer's runtime killed with SIGKILL while the model answered "
                   "its question; a runtime with a home of its own resumes it and asks: turn 1 kept",
                   lambda factory, spec, fact: persistence.killed_mid_turn(factory, fact)),
    PersistenceRow("the session's files, new process", "every file the runtime wrote through it (the event log, "
                   "workspace.yaml, the checkpoints' index, ...) reads back the same in a new process",
                   persistence.files_elsewhere),
    PersistenceRow("two resumers at once", "two runtimes, each with a home of its own, resumed it at once and "
                   "each asked: the log stayed one line of turns", lambda factory, spec, fact:
                   persistence.two_resumers(factory, fact), required=False),
    PersistenceRow("two resumers, the guard's lease", "the first writer's lease ran out and a second took it, "
                   "resumed, asked and closed; the first, superseded, asked: the log stayed as the second left it",
                   lambda factory, spec, fact: lease.superseded(factory, fact)),
    PersistenceRow(f"cost, {cost.TURNS[0]} and {cost.TURNS[-1]} turns", f"a real turn's calls played to "
                   f"{cost.TURNS[-1]} turns: every file reads back as written",
                   lambda factory, spec, fact: cost.cost(factory, fact)),
    PersistenceRow("discovery, new home", "a runtime with a home of its own, on the same provider, lists the "
                   "session and reads its metadata", lambda factory, spec, fact: persistence.discovery(factory, fact),
                   required=False),
)


def validate(factory: Callable[[Any], Any], name: str = "", rows: tuple[ContractRow, ...] = ROWS,
             spec: str | None = None, runtime: bool = True, fact: Fact = Fact()) -> Report:
    """Judge the provider ``factory`` makes. Each contract row gets a provider of its own,
    for a session id of its own, as the SDK makes one per session. With ``runtime``, the
    persistence rows follow, on the real runtime and the witness model; the new process
    imports the provider by ``spec`` (MODULE:FACTORY)."""
    judged = asyncio.run(_judged(factory, rows))
    if runtime:
        judged += [_persisted(row, factory, spec, fact) for row in PERSISTENCE]
    return Report(name or spec or getattr(factory, "__qualname__", repr(factory)), tuple(judged))


def _persisted(row: PersistenceRow, factory: Callable[[Any], Any], spec: str | None, fact: Fact) -> Row:
    heard = row.run(factory, spec, fact)
    outcome, reason = _judge(heard, fact, row.says)
    return Row(row.name, row.says, row.required, outcome, reason)


def _judge(heard: Heard | Found | Copied | Shared | Cost | Superseded, fact: Fact, says: str) -> tuple[str, str]:
    """As a run judges a question: the answer and the witness's record must agree."""
    if isinstance(heard, Superseded):
        return _judge_superseded(heard, says)
    if isinstance(heard, Cost):
        return _judge_cost(heard, says)
    if isinstance(heard, Found):
        return _judge_found(heard, says)
    if isinstance(heard, Shared):
        return _judge_shared(heard, says)
    if isinstance(heard, Copied):
        return _judge_copied(heard, says)
    if heard.problem:
        return (Outcome.UNKNOWN if heard.unsure else Outcome.FAIL), heard.problem
    named = fact.is_in(heard.answer)
    if named and heard.fact_sent:
        return Outcome.OK, says
    if not named and heard.fact_sent is False:
        return Outcome.FAIL, ("the resumed session did not have the fact: the model was not sent it, so the runtime "
                              "got no history through the provider")
    return Outcome.UNKNOWN, (f"the answer {'names' if named else 'lacks'} the fact, and the model was "
                             f"{'sent it' if heard.fact_sent else 'not sent it' if heard.fact_sent is False else 'never asked'}")


def _judge_shared(shared: Shared, says: str) -> tuple[str, str]:
    if shared.problem:
        return Outcome.UNKNOWN, shared.problem
    if shared.kept_out and not shared.branch_points:
        return Outcome.OK, (f"the second writer was kept out ({shared.kept_out}), the first asked, and the log stayed "
                            f"one line of turns ({shared.events} events)")
    if not shared.branch_points:
        return Outcome.OK, f"{says} ({shared.events} events)"
    marked = ", and the second resume's event says alreadyInUse" if shared.already_in_use else ""
    return Outcome.FAIL, (f"both wrote, and the log forks at {shared.branch_points} point(s){marked}: the provider lets "
                          f"a second writer in, as a runtime's own home does; a single-writer lease (the guard's) or "
                          f"a lock of the provider's must keep it out")


def _judge_copied(copied: Copied, says: str) -> tuple[str, str]:
    if copied.problem:
        return (Outcome.UNKNOWN if copied.unsure else Outcome.FAIL), copied.problem
    if not copied.written:
        return Outcome.FAIL, "this process reads none of the files the runtime wrote through it back"
    missing = sorted(set(copied.written) - set(copied.read_elsewhere))
    changed = sorted(path for path in copied.written if path in copied.read_elsewhere
                     and copied.read_elsewhere[path] != copied.written[path])
    if missing or changed:
        said = "; ".join(part for part in (missing and f"missing there: {_paths(missing)}",
                                           changed and f"different there: {_paths(changed)}") if part)
        return Outcome.FAIL, f"of the {len(copied.written)} files this process reads back, a new process finds {said}"
    return Outcome.OK, f"{says}: {len(copied.written)} files ({_paths(sorted(copied.written))})"


def _judge_superseded(moved: Superseded, says: str) -> tuple[str, str]:
    if moved.problem:
        return (Outcome.UNKNOWN if moved.unsure else Outcome.FAIL), moved.problem
    if not moved.kept_by_second:
        return Outcome.FAIL, "the second writer, holding the lease, asked and closed, and the log did not change"
    if moved.changed_after:
        return Outcome.FAIL, (f"the superseded writer's turn changed the log after the lease's new holder closed it "
                              f"(it was told: {_cut(moved.first_told)}): its write became durable")
    return Outcome.OK, f"{says}; the superseded writer was told: {_cut(moved.first_told)}"


def _cut(text: str, length: int = 120) -> str:
    return text if len(text) <= length else text[:length] + "…"


def _judge_cost(measured: Cost, says: str) -> tuple[str, str]:
    if measured.problem:
        return (Outcome.UNKNOWN if measured.unsure else Outcome.FAIL), measured.problem
    first, last = measured.grown[0], measured.grown[-1]
    growth = f"{last.call_ms / first.call_ms:.1f}x" if first.call_ms else "n/a"
    return Outcome.OK, (f"{says}. A turn: {measured.calls} call(s), {measured.written:,} bytes written. "
                        f"A call's median at {first.turns} turns {first.call_ms:.2f} ms, at {last.turns} "
                        f"{last.call_ms:.2f} ms ({growth}); reading the log back {first.read_ms:.1f} ms, then "
                        f"{last.read_ms:.1f} ms; stored {last.stored / last.turns:,.0f} bytes per turn")


def _paths(paths: list[str], shown: int = 3) -> str:
    """A few of ``paths`` by their last three parts, and how many more."""
    names = [("/".join(path.rsplit("/", 3)[-3:])) for path in paths[:shown]]
    return ", ".join(names) + (f" and {len(paths) - shown} more" if len(paths) > shown else "")


def _judge_found(found: Found, says: str) -> tuple[str, str]:
    if found.problem:
        return Outcome.FAIL, found.problem
    if found.listed and found.metadata:
        return Outcome.OK, says
    missed = " and ".join(what for what, seen in (("list_sessions does not list it", found.listed),
                                                   ("get_session_metadata returns None", found.metadata)) if not seen)
    return Outcome.FAIL, (f"{missed}: a runtime finds sessions by an index in its own home, which does not go "
                          f"through SessionFs; an app that lists sessions keeps a registry of its own (the resume "
                          f"rows say whether it can still resume them)")


async def _judged(factory: Callable[[Any], Any], rows: tuple[ContractRow, ...]) -> list[Row]:
    found = []
    run = secrets.token_hex(4)
    for index, row in enumerate(rows, 1):
        session_id = f"conform-{run}-{index}"
        root = f"{TOP}/{index}-{re.sub(r'[^a-z0-9]+', '-', row.name.lower()).strip('-')}"
        found.append(await _one(factory, row, session_id, root))
    return found


async def _one(factory: Callable[[Any], Any], row: ContractRow, session_id: str, root: str) -> Row:
    def judged(outcome: str, reason: str) -> Row:
        return Row(row.name, row.says, row.required, outcome, reason)

    try:
        handler = session_fs_handler(factory(StandInSession(session_id)))
    except Exception as error:  # the factory is the user's code: whatever it raises is the row's answer
        return judged(Outcome.UNKNOWN, f"the factory failed: {type(error).__name__}: {error}")
    try:
        problem = await asyncio.wait_for(row.check(handler, root), ROW_SECONDS)
    except asyncio.TimeoutError:
        return judged(Outcome.UNKNOWN, f"took more than {ROW_SECONDS:.0f} s: the provider hangs, or waits on something")
    except Exception as error:
        return judged(Outcome.UNKNOWN, f"the check could not finish: {type(error).__name__}: {error}")
    finally:  # what the row wrote goes, as far as the provider's own rm takes it (its store is the user's)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(handler.rm(SimpleNamespace(path=TOP, recursive=True, force=True)), ROW_SECONDS)
    return judged(Outcome.FAIL, problem) if problem else judged(Outcome.OK, row.says)
