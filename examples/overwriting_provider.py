"""A broken SessionFs provider, to see what `handoff conform` says of one: its append
overwrites the file instead of adding to it, a mistake easy to make on a key-value
store (a put where an append was meant). Everything else is the files provider's.

    handoff conform examples.overwriting_provider:factory
"""

from __future__ import annotations

from examples.files_provider import FilesProvider, root


class OverwritingProvider(FilesProvider):
    async def append_file(self, path: str, content: str, mode: int | None = None) -> None:
        await self.write_file(path, content, mode)  # the bug: the event log keeps its last line only


def factory(session) -> OverwritingProvider:
    return OverwritingProvider(root() / session.session_id)
