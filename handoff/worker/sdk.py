"""The one module that imports the Copilot SDK.

Everything else in the tool talks to sessions through :class:`Runtime`, so the SDK's
surface the tool depends on is visible in one screen: start a runtime with a chosen
home, create / resume / close a session, send a turn, read metadata and the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import version as package_version

from copilot import CopilotClient
from copilot.client import RuntimeConnection
from copilot.session import CopilotSession, PermissionHandler

SDK_VERSION = package_version("github-copilot-sdk")
TURN_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class Provider:
    """A BYOK OpenAI-compatible endpoint. It is not persisted with the session, so it is
    passed again on every create and resume."""

    base_url: str
    model: str
    headers: dict[str, str]
    api_key: str = "handoff-witness-needs-no-key"

    def config(self) -> dict:
        return {
            "type": "openai",
            "wire_api": "completions",
            "base_url": self.base_url,
            "api_key": self.api_key,
            "headers": self.headers,
        }


@dataclass(frozen=True)
class StoredSession:
    session_id: str
    modified: str
    summary: str | None


class Runtime:
    """One Copilot runtime process, owned by this worker, with its own COPILOT_HOME."""

    def __init__(self, runtime_path: str, home: str, provider: Provider):
        self._client = CopilotClient(
            connection=RuntimeConnection.for_stdio(path=runtime_path),
            base_directory=home,
            use_logged_in_user=False,
        )
        self._provider = provider

    async def start(self) -> str:
        """Start the runtime; returns its version."""
        await self._client.start()
        return (await self._client.get_status()).version

    async def stop(self) -> None:
        await self._client.stop()

    async def create(self, session_id: str | None) -> CopilotSession:
        return await self._client.create_session(
            session_id=session_id,
            model=self._provider.model,
            provider=self._provider.config(),
            streaming=False,
            on_permission_request=PermissionHandler.approve_all,
        )

    async def resume(self, session_id: str) -> CopilotSession:
        return await self._client.resume_session(
            session_id,
            model=self._provider.model,
            provider=self._provider.config(),
            streaming=False,
            on_permission_request=PermissionHandler.approve_all,
        )

    @staticmethod
    async def send(session: CopilotSession, prompt: str, headers: dict[str, str]) -> str | None:
        """Send one turn and return the assistant's final text (None if it gave none)."""
        reply = await session.send_and_wait(prompt, request_headers=headers, timeout=TURN_TIMEOUT_SECONDS)
        return getattr(reply.data, "content", None) if reply else None

    @staticmethod
    async def close(session: CopilotSession) -> None:
        await session.disconnect()

    @staticmethod
    def session_id(session: CopilotSession) -> str:
        return session.session_id

    async def metadata(self, session_id: str) -> StoredSession | None:
        found = await self._client.get_session_metadata(session_id)
        return None if found is None else _stored(found)

    async def list(self) -> list[StoredSession]:
        return [_stored(found) for found in await self._client.list_sessions()]


def _stored(metadata) -> StoredSession:
    return StoredSession(metadata.session_id, metadata.modified_time.isoformat(), metadata.summary)
