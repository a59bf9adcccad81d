"""The sessions a stored run's steps used, read from its record.

A run's homes and throwaway stores are removed when it ends, so what is left of its
sessions is what the workers reported: for each scenario, each session id its steps
ended up using (a listing or the runtime may have chosen it), which steps and hosts
used it, where its files were kept, the prompts sent in it, and whether the last step
to use it closed it. The record keeps every id as it was observed (a lab run's
secret-shaped id is already withheld); a listing redacts what must not be shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from handoff.protocol import ActionDone, Ready, Turn
from handoff.runs.record import RunRecord, StepEvents
from handoff.stores.homes import is_home
from handoff.words import OPENING_ACTIONS, Action, HostKind


@dataclass(frozen=True)
class RunSession:
    scenario: str
    session_id: str
    steps: tuple[str, ...]  # the steps that used it, in order
    hosts: tuple[str, ...]  # the hosts they ran on, each once, in order
    store: str  # a StoreKind
    homes: tuple[str, ...]  # the HomeKinds its steps had
    started_at: float  # the first of its steps began
    ended_at: float  # the last of them ended
    turns: int  # the prompts sent in it (turn events)
    closed: bool  # the last step to use it closed it after its last prompt
    summary: str | None  # the first prompt
    home_dirs: tuple[str, ...]  # where its home was on this machine (local steps only), each once


def run_sessions(record: RunRecord, owner: str | None = None) -> list[RunSession]:
    """Each scenario's sessions, in the order the run first used them; with ``owner``,
    only those a step acting as that principal used."""
    found = []
    for scenario in record.scenarios:
        principals = {step.name: step.principal for step in scenario.scenario.steps}
        used: dict[str, list[StepEvents]] = {}
        for step in scenario.steps:
            view = step.view()
            session_id = view.reported_session_id
            if session_id:
                used.setdefault(session_id, []).append(view)
        for session_id, views in used.items():
            if owner is not None and not any(principals.get(v.record.step) == owner for v in views):
                continue
            found.append(_session(scenario.name, session_id, views))
    return found


def _session(scenario: str, session_id: str, views: list[StepEvents]) -> RunSession:
    turns = [turn for view in views for turn in view.turns if turn.session_id in (session_id, None)]
    homes = [ready.home for view in views if view.record.host == HostKind.LOCAL
             for ready in view.of(Ready) if ready.home]
    return RunSession(
        scenario=scenario,
        session_id=session_id,
        steps=tuple(view.record.step for view in views),
        hosts=_once(view.record.host for view in views),
        store=views[0].record.store,
        homes=_once(view.record.home for view in views),
        started_at=views[0].record.started_at,
        ended_at=views[-1].record.ended_at,
        turns=len(turns),
        closed=_closed(views[-1]),
        summary=next((" ".join(turn.prompt.split()) for turn in turns if turn.prompt.strip()), None),
        home_dirs=_once(homes),
    )


def _closed(view: StepEvents) -> bool:
    """The step closed the session after it last opened it or sent a prompt in it (a
    metadata or a listing may come after the close); a killed or timed-out step never
    closed it."""
    used = [i for i, event in enumerate(view.events)
            if isinstance(event, Turn) or (isinstance(event, ActionDone) and event.action in OPENING_ACTIONS)]
    after = view.events[used[-1] + 1:] if used else view.events
    return any(isinstance(event, ActionDone) and event.action == Action.CLOSE for event in after)


def _once(items) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def homes_still_there(sessions: list[RunSession]) -> list[Path]:
    """The homes, among those the run's local steps used, that still hold a session-state/
    (the lab's home; not a run's, which is removed when it ends)."""
    return [Path(home) for home in _once(home for s in sessions for home in s.home_dirs) if _still_a_home(home)]


def _still_a_home(home: str) -> bool:
    """A home the record names may be any path (too long, not permitted): one that cannot
    be looked at is not there to point at."""
    try:
        return is_home(Path(home))
    except OSError:
        return False
