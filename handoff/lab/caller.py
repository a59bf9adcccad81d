"""One SDK call of the lab, awaited: recorded as an action, and what it raises turned into
a one-line error that says what failed and, when it is the user's to fix, how (exit 2),
or that the lab could not complete (exit 3)."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from handoff.backends import explain
from handoff.errors import UserError
from handoff.guard.ids import shown
from handoff.lab.options import LabFailure, LabOptions


@dataclass(frozen=True)
class Caller:
    """Awaits one SDK call for the lab: records it, and turns what it raises into a
    one-line error that says what failed and, when it is the user's to fix, how."""

    options: LabOptions
    recorder: Any  # the run's Recorder, or None before the SDK is loaded

    async def __call__(self, what: str, call: Awaitable[Any], action: str | None = None,
                       detail: Callable[[Any], dict] | None = None, failed_as: str | None = None) -> Any:
        """Await ``call``, recording it as ``action`` (a failure as ``failed_as`` or
        ``action``); raise UserError (exit 2) or LabFailure (exit 3) when it fails."""
        started = time.monotonic()
        try:
            result = await call
        except (asyncio.TimeoutError, TimeoutError):
            message = "the model did not answer in time"
            self._record_failure(action or failed_as, message, started)
            raise LabFailure(f"{what}: {message}") from None
        except Exception as error:  # the SDK raises plain Exception for a failed turn
            message = self._unechoed(self.options.backend.scrub(runtime_message(error)))
            self._record_failure(action or failed_as, message, started)
        else:
            if action:
                self.recorder.action(action, ms(started), **(detail(result) if detail else {}))
            return result
        missing = re.search(r"Session not found\S*( \S+)?", message)
        if missing:
            raise UserError(f"{missing.group(0)} (no session with this id is stored in {self.options.home}; "
                            f"start one with `handoff lab`, using the same --home)")
        explained = explain(self.options.backend, message)
        if explained:
            raise UserError(f"{what}: {explained}")
        raise LabFailure(f"{what}: {message}")

    def _unechoed(self, message: str) -> str:
        """The runtime's message without a secret-shaped id the user gave (the runtime
        repeats ids in its errors)."""
        for given in filter(None, (self.options.session_id, self.options.resume)):
            message = message.replace(given, shown(given))
        return message

    def _record_failure(self, action: str | None, message: str, started: float) -> None:
        if action and self.recorder is not None:
            self.recorder.failed(action, message, ms(started))


def ms(since: float) -> int:
    return round((time.monotonic() - since) * 1000)


def runtime_message(error: BaseException) -> str:
    """The runtime's own words, on one line, without the JSON-RPC and SDK wrapping."""
    text = " ".join(str(error).split()) or type(error).__name__
    text = re.sub(r"^JSON-RPC Error -?\d+: (Request \S+ failed with message: )?", "", text)
    text = text.removeprefix("Session error: ")
    # The runtime's advice names its own variables (COPILOT_PROVIDER_API_KEY, ...), which
    # this tool does not use; the caller supplies advice about its own options instead.
    text = re.sub(r"\s*Check your COPILOT_PROVIDER_\S.*$", "", text)
    return text[:400]
