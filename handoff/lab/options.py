"""What `handoff lab` is asked to do, checked before anything starts, and where it keeps
its files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from handoff.errors import UserError
from handoff.eventlog import SESSION_STATE
from handoff.fact import Fact
from handoff.protocol import Backend
from handoff.runtime_locator import PROJECT_ROOT
from handoff.session_ids import RULE as SAFE_ID_RULE, new_session_id, safe_id
from handoff.stores.homes import is_home

DEFAULT_HOME = PROJECT_ROOT / ".state" / "lab-home"
LOG_DIR = "handoff-lab"  # inside the home: the SDK's log and the witness's stderr

Write = Callable[[str], None]


class LabFailure(Exception):
    """The lab could not complete for a reason that is not the user's input (exit 3)."""


def new_lab_session_id() -> str:
    """The lab's own recipe: a readable prefix and random hex, cut to 24 characters."""
    return new_session_id("sdklabs")


@dataclass(frozen=True)
class LabOptions:
    backend: Backend
    fact: Fact
    home: Path = DEFAULT_HOME
    session_id: str | None = None  # --session-id: a stable id instead of a random one
    resume: str | None = None  # --resume ID: only turn 2, typically in a second process
    resume_most_recent: bool = False  # only turn 2, on the newest stored session
    third_turn: bool = False  # the lab's exercise: resume again after the metadata
    show_calls: bool = False  # beside each turn, the SDK call that made it and the process that called
    resume_forms: bool = False  # the lab's three resume_session call forms, each resumed and asked

    def check(self) -> None:
        """Reject contradictory or malformed options before anything starts."""
        chosen = [name for name, given in (("--resume", self.resume), ("--session-id", self.session_id),
                                           ("--resume-most-recent", self.resume_most_recent)) if given]
        if len(chosen) > 1:
            raise UserError(f"{' and '.join(chosen)} choose the session in different ways: give only one")
        if not self.fact.value.strip() or not self.fact.topic.strip():
            raise UserError("--fact and --topic must not be empty")
        for option, value in (("--resume", self.resume), ("--session-id", self.session_id)):
            if value is not None and not safe_id(value):  # not echoed: it may be a secret
                raise UserError(f"{option}: an id is {SAFE_ID_RULE} (it names a directory in the home)")
        home = self.home.expanduser()  # as the run will take it (--home=~/.copilot reaches us unexpanded)
        if home.exists() and not home.is_dir():
            raise UserError(f"--home {self.home}: exists and is not a directory")
        if self.resume and not is_home(home):
            # No session can be there, and the runtime would write its config and logs into it first;
            # in a Copilot home the runtime's own answer for an unknown id is what the lab shows.
            raise UserError(f"--resume: {self.home} is no Copilot home (it has no session-state/), so no session can "
                            f"be resumed there: give the --home the session was made in")
        if self.resume_most_recent and not _holds_sessions(home):
            # Said before the runtime starts: it would write its config and logs into the home first.
            raise UserError(f"no stored sessions in {self.home} to resume: run `handoff lab` first, with the same --home")


def _holds_sessions(home: Path) -> bool:
    """Whether ``home``'s session-state/ has any session's directory in it."""
    try:
        return is_home(home) and any(entry.is_dir() for entry in (home / SESSION_STATE).iterdir())
    except OSError:
        return True  # not ours to judge: the runtime's list_sessions says what it finds
