"""The lab's demo app as it was, served beside the chat at ``/demo``: the control.

Before its last step, the lab's demo app keeps the whole conversation in the browser's
localStorage (its ``app.js``). This page does the same (handoff/chat/templates/demo.html): it shows
what the browser kept and sends the server each message alone, and the server knows the
session a user is in only in its memory. Each turn still goes through the same guarded
path as the chat's (handoff/chat/conversations.py), so the control differs from it in one
thing: what is kept where. A reload shows the conversation and the model still has it;
after the server restarts on a new home the page shows the same conversation while the
server has no session to go on with, so the next message starts a new one whose model was
never told; another device, whose browser kept nothing, shows nothing.
"""

from __future__ import annotations

from handoff.chat.conversations import Conversations


class DemoChats:
    """The session each user is in, as a server that kept no id anywhere else knows it."""

    def __init__(self, conversations: Conversations):
        self._conversations = conversations
        self.current: dict[str, str] = {}  # user -> session id, for as long as this process runs

    def new(self, user: str) -> str:
        """A new chat: an id minted for the user, its session created by the first turn."""
        self.current[user] = self._conversations.new(user)
        return self.current[user]

    async def turn(self, user: str, text: str) -> str | None:
        session_id = self.current.get(user) or self.new(user)
        return await self._conversations.turn(user, session_id, text)
