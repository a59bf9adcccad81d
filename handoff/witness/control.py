"""The coordinator's side of the witness's controls (server.py): its answer holds
(ResponseHolds: hold the answer to one turn, wait until that request has arrived,
release it), and on the Copilot-API path a token for each step."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from urllib.parse import urlencode

from handoff.witness.server import CONTROL
from handoff.witness.tags import RUN_HEADER


class WitnessControl:
    def __init__(self, witness_url: str, run_token: str = ""):
        self.witness_url = witness_url
        self.headers = {RUN_HEADER: run_token} if run_token else {}

    def _call(self, action: str, scenario: str, step: str, turn: int, timeout: float = 10.0, **extra) -> dict:
        query = urlencode({"scenario": scenario, "step": step, "turn": str(turn), **extra})
        request = urllib.request.Request(f"{self.witness_url}{CONTROL}{action}?{query}", data=b"", method="POST",
                                         headers=self.headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    async def hold(self, scenario: str, step: str, turn: int) -> None:
        """The answer to this turn's request waits, once it arrives, until released."""
        await asyncio.to_thread(self._call, "hold", scenario, step, turn)

    async def held(self, scenario: str, step: str, turn: int, seconds: float) -> bool:
        """True once the request is there and waiting; False if it did not come in time."""
        answer = await asyncio.to_thread(self._call, "held", scenario, step, turn, seconds + 10, seconds=str(seconds))
        return bool(answer["held"])

    async def release(self, scenario: str, step: str, turn: int) -> None:
        await asyncio.to_thread(self._call, "release", scenario, step, turn)

    async def issue(self, principal: str, tags: dict[str, str]) -> str:
        """A token the witness issues to a step: its requests are then read with ``tags``
        and recorded as ``principal``'s, whatever headers they carry."""
        return await asyncio.to_thread(self._issue, principal, tags)

    def _issue(self, principal: str, tags: dict[str, str], timeout: float = 10.0) -> str:
        request = urllib.request.Request(f"{self.witness_url}{CONTROL}issue?{urlencode({'principal': principal})}",
                                         data=json.dumps(tags).encode(), method="POST", headers=self.headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())["token"]
