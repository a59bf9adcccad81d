"""The lab's own path: the app talks to the GitHub Copilot API (here the witness's,
witness/copilot_api.py) with a GitHub token, not to a BYOK provider. What differs from
BYOK, in one place: the witness is given the tokens it issues and the runtime one of
them; the model is picked from ``list_models()`` as the lab's sample picks it; and a
resume passes no model at all, as the lab's ``resume_session(session_id)`` does (the
session keeps its own)."""

from __future__ import annotations

import json
import os

from handoff.errors import UserError
from handoff.witness import copilot_api
from handoff.witness.tags import TOKENS_VARIABLE

PREFERRED = "claude-haiku-4.5"  # the sample's choice when the service lists it
AUTO = "auto"  # what the runtime lists first: never picked by accident


class Tokens:
    """The tokens a lab's witness issues; the lab's runtime is the first principal."""

    def __init__(self) -> None:
        self.issued = copilot_api.issue()
        self.mine = next(token for token, principal in self.issued.items() if principal == copilot_api.PRINCIPALS[0])

    def witness_environment(self) -> dict[str, str]:
        return {**os.environ, TOKENS_VARIABLE: json.dumps(self.issued)}


def pick_model(listed: list[str], asked: str) -> str:
    """``asked`` when the service lists it, else one line naming what it lists; with
    none asked, the sample's: claude-haiku-4.5 if listed, else the first real model."""
    offered = [model for model in listed if model != AUTO]
    if asked:
        if asked in listed:
            return asked
        raise UserError(f"--model {asked}: the service offers no such model; it offers {', '.join(offered) or 'none'}")
    if not offered:
        raise UserError("the service lists no model (list_models offered only auto): nothing to pick")
    return PREFERRED if PREFERRED in offered else offered[0]
