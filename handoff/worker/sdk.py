"""The one module that imports the Copilot SDK.

Everything else in the tool talks to sessions through :class:`Runtime`, so the SDK's
surface the tool depends on is visible in one screen: start a runtime with a chosen
home, create / resume / close a session, send a turn, read metadata and the list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Awaitable, Callable

from copilot import CopilotClient
from copilot.client import RuntimeConnection
from copilot.generated.rpc import SessionFSErrorCode, SessionFSReaddirWithTypesEntry
from copilot.session import CopilotSession, PermissionHandler
from copilot.session_fs_provider import SessionFsFileInfo, SessionFsProvider, create_session_fs_adapter
from copilot.tools import Tool, ToolInvocation, ToolResult

from handoff.stores.files import STATE_ROOT, SessionFiles

SDK_VERSION = package_version("github-copilot-sdk")  # of the environment this worker runs in
TURN_TIMEOUT_SECONDS = 60.0  # the SDK's own default
GITHUB_TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")  # what the runtime reads a token from
# Where the runtime's native HTTP clients read their certificate authorities from. It builds
# a client for each kind of service call, and each reads the whole trust store again
# (measured, runtime 1.0.102, SSL_CERT_DIR=/etc/ssl/certs with 290 entries: per process 23
# reads of the bundle and 7 scans of the directory on the Copilot API's path, 8 and 2 on
# BYOK; most of the CPU one path costs over the other, BENCHMARKS.md section 4).
TRUST_STORE_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")
# A trust store of one certificate whose key was thrown away when it was made, so it signs
# nothing: an empty one (/dev/null) fails every turn in the worker image ("no trust roots
# available"), and any real authority would be one the runtime does not need.
NO_TRUST_ROOT = Path(__file__).with_name("no-trust.pem")


def without_trust_store(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a runtime whose every address is plain HTTP: it verifies no
    certificate, so it is given :data:`NO_TRUST_ROOT` instead of reading the machine's
    trust store for every client it builds."""
    kept = {name: value for name, value in env.items() if name not in TRUST_STORE_VARIABLES}
    return {**kept, "SSL_CERT_FILE": str(NO_TRUST_ROOT)}


def plain_http(url: str) -> bool:
    return url.lower().startswith("http://")


@dataclass(frozen=True)
class Provider:
    """A BYOK OpenAI-compatible endpoint. It is not persisted with the session, so it is
    passed again on every create and resume."""

    base_url: str
    model: str
    headers: dict[str, str]
    api_key: str = field(default="handoff-witness-needs-no-key", repr=False)  # never in a message or log

    def config(self) -> dict:
        return {
            "type": "openai",
            "wire_api": "completions",
            "base_url": self.base_url,
            "api_key": self.api_key,
            "headers": self.headers,
        }

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """The runtime's environment: without the machine's trust store when the endpoint
        is plain HTTP (the witness, or the relay in front of a run's endpoint)."""
        return without_trust_store(base) if plain_http(self.base_url) else base


@dataclass(frozen=True)
class CopilotService:
    """The GitHub Copilot service itself instead of a BYOK provider: the runtime picks
    ``model`` from Copilot's own models and authenticates with a GitHub token, which is
    kept out of repr so it cannot end up in a message or a log. With ``api_url`` the
    runtime takes that address for the service and for the GitHub API (the witness,
    witness/copilot_api.py); ``headers`` then go with every turn, as an app's
    ``request_headers`` do: there is no provider to carry them."""

    model: str
    github_token: str = field(repr=False)
    api_url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def config(self) -> None:
        return None  # no BYOK provider: create/resume then use the Copilot service

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """The runtime's environment: with ``api_url``, pointed there, and without any
        GitHub token of the user's (only ``github_token`` is sent, never a real one); without
        the machine's trust store when that address is plain HTTP (the witness)."""
        if self.api_url is None:
            return base
        kept = {name: value for name, value in base.items() if name not in GITHUB_TOKEN_VARIABLES}
        pointed = {**kept, "COPILOT_API_URL": self.api_url, "COPILOT_DEBUG_GITHUB_API_URL": self.api_url}
        return without_trust_store(pointed) if plain_http(self.api_url) else pointed


@dataclass(frozen=True)
class RegisteredTool:
    """A tool the app registers on create and resume: what the model is told of it and
    what it answers. The SDK runs ``answer`` when the runtime asks for a call. A tool asks
    for permission only when ``asks_permission`` (a step that measures the permission
    handler); otherwise no handler's choice enters the measurement."""

    name: str
    description: str
    parameters: dict[str, Any]
    answer: Callable[[dict[str, Any]], str]
    asks_permission: bool = False
    # Awaited when a call starts, before it answers: where a fault inside the tool lands.
    entered: Callable[[], Awaitable[None]] | None = None

    def sdk_tool(self) -> Tool:
        async def handler(invocation: ToolInvocation) -> ToolResult:
            if self.entered is not None:
                await self.entered()
            arguments = invocation.arguments if isinstance(invocation.arguments, dict) else {}
            return ToolResult(text_result_for_llm=self.answer(arguments))

        return Tool(name=self.name, description=self.description, handler=handler, parameters=self.parameters,
                    skip_permission=not self.asks_permission)


@dataclass(frozen=True)
class SessionOptions:
    """What the app passes on every create and resume besides the provider and its tools.
    ``model`` None passes no model; ``system_note`` is appended to the runtime's system
    prompt; ``approves`` False passes no permission handler at all; ``memory_mode`` turns
    the session's memory on, its memories placed in the system prompt or user messages."""

    model: str | None
    # What a create names when ``model`` is None: on the lab's path a create names the
    # model and a resume none, the session keeping its own.
    created_with: str | None = None
    system_note: str | None = None
    working_directory: str | None = None
    approves: bool = True
    memory_mode: str | None = None  # "system-prompt" | "user-prompt"
    # Awaited when the runtime asks the app's permission handler, before it answers: where
    # a fault with a permission request pending lands.
    asked: Callable[[], Awaitable[None]] | None = field(default=None, compare=False)

    def arguments(self) -> dict[str, Any]:
        return {
            "memory": {"enabled": True, "mode": self.memory_mode} if self.memory_mode else None,
            "model": self.model,
            "system_message": {"mode": "append", "content": self.system_note} if self.system_note else None,
            "working_directory": self.working_directory,
            "on_permission_request": self._permission_handler() if self.approves else None,
        }

    def _permission_handler(self) -> Callable[..., Any]:
        """The app's handler: it approves, as the SDK's approve_all does, after ``asked``."""
        if self.asked is None:
            return PermissionHandler.approve_all
        asked = self.asked

        async def approve(request: Any, invocation: Any) -> Any:
            await asked()
            return PermissionHandler.approve_all(request, invocation)

        return approve


@dataclass(frozen=True)
class StoredSession:
    session_id: str
    modified: str
    summary: str | None


class StoreProvider(SessionFsProvider):
    """The SDK's SessionFs provider interface over the tool's database-backed files."""

    def __init__(self, files: SessionFiles):
        self.files = files

    async def read_file(self, path: str) -> str:
        return await self.files.read_file(path)

    async def write_file(self, path: str, content: str, mode: int | None = None) -> None:
        await self.files.write_file(path, content)

    async def append_file(self, path: str, content: str, mode: int | None = None) -> None:
        await self.files.append_file(path, content)

    async def exists(self, path: str) -> bool:
        return await self.files.exists(path)

    async def stat(self, path: str) -> SessionFsFileInfo:
        entry = await self.files.stat(path)
        return SessionFsFileInfo(
            is_file=not entry.is_dir, is_directory=entry.is_dir, size=entry.size,
            mtime=datetime.fromtimestamp(entry.mtime, UTC), birthtime=datetime.fromtimestamp(entry.birthtime, UTC),
        )

    async def mkdir(self, path: str, recursive: bool, mode: int | None = None) -> None:
        await self.files.mkdir(path, recursive)

    async def readdir(self, path: str) -> list[str]:
        return [name for name, _ in await self.files.readdir(path)]

    async def readdir_with_types(self, path: str) -> list[SessionFSReaddirWithTypesEntry]:
        return [
            SessionFSReaddirWithTypesEntry.from_dict({"name": name, "type": "directory" if is_dir else "file"})
            for name, is_dir in await self.files.readdir(path)
        ]

    async def rm(self, path: str, recursive: bool, force: bool) -> None:
        await self.files.rm(path, recursive, force)

    async def rename(self, src: str, dest: str) -> None:
        await self.files.rename(src, dest)


class Runtime:
    """One Copilot runtime process, owned by this worker, with its own COPILOT_HOME.

    With ``files`` (session id -> SessionFiles), the session's files go through a
    SessionFs provider to the database instead of to the home directory. With no
    ``provider`` the runtime is given no model settings and no token at all. ``tools`` are
    registered on every create and resume (None when there are none: the SDK's default);
    ``options`` are passed on each (by default: the provider's model, the SDK's defaults)."""

    def __init__(self, runtime_path: str, home: str, provider: Provider | CopilotService | None,
                 files: Callable[[str], SessionFiles] | None = None, tools: tuple[RegisteredTool, ...] = (),
                 options: SessionOptions | None = None, env: dict[str, str] | None = None,
                 fs_factory: Callable[[Any], Any] | None = None):
        session_fs = None
        if files is not None or fs_factory is not None:
            session_fs = {"initial_working_directory": "/work", "session_state_path": STATE_ROOT, "conventions": "posix"}
        self._client = CopilotClient(
            connection=RuntimeConnection.for_stdio(path=runtime_path),
            base_directory=home,
            github_token=getattr(provider, "github_token", None),  # set only for CopilotService
            use_logged_in_user=False,
            session_fs=session_fs,
            # None: this process's own (a worker's was made for it by the coordinator)
            env=provider.environment(dict(os.environ if env is None else env)) if provider is not None else env,
        )
        self._turn_headers = provider.headers if isinstance(provider, CopilotService) else {}
        self._options = options or SessionOptions(model=provider.model if provider else None)
        self._provider_config = provider.config() if provider else None
        self._files = files
        # A provider of the app's own (``fs_factory``: what an app passes as create_session_fs_handler,
        # handoff/conform/), else the tool's database-backed files.
        self._fs_handler = fs_factory or ((lambda session: StoreProvider(files(session.session_id))) if files else None)
        self._tools = [tool.sdk_tool() for tool in tools] or None

    async def start(self) -> str:
        """Start the runtime; returns its version."""
        await self._client.start()
        return (await self._client.get_status()).version

    async def stop(self) -> None:
        await self._client.stop()

    async def models(self) -> list[str]:
        """The ids ``list_models()`` offers (on the Copilot service's path; ``auto`` among them)."""
        return [model.id for model in await self._client.list_models()]

    async def create(self, session_id: str | None, model: str | None = None) -> CopilotSession:
        """``model``: this create's, instead of the options' (which every resume is given)."""
        return await self._client.create_session(
            session_id=session_id,
            provider=self._provider_config,
            streaming=False,
            tools=self._tools,
            create_session_fs_handler=self._fs_handler,
            **{**self._options.arguments(), **({"model": chosen} if (chosen := model or self._options.created_with) else {})},
        )

    async def resume(self, session_id: str) -> CopilotSession:
        return await self._client.resume_session(
            session_id,
            provider=self._provider_config,
            streaming=False,
            tools=self._tools,
            create_session_fs_handler=self._fs_handler,
            **self._options.arguments(),
        )

    async def resume_as_written(self, session_id: str, **written: Any) -> CopilotSession:
        """``resume_session`` called with ``written`` alone, as an app's source has it (the
        lab's call forms); on BYOK with the provider too, which no resume goes without."""
        given = {"provider": self._provider_config} if self._provider_config else {}
        return await self._client.resume_session(session_id, **written, **given)

    async def send(self, session: CopilotSession, prompt: str, headers: dict[str, str],
                   timeout: float = TURN_TIMEOUT_SECONDS) -> str | None:
        """Send one turn and return the assistant's final text (None if it gave none)."""
        reply = await session.send_and_wait(prompt, request_headers={**self._turn_headers, **headers}, timeout=timeout)
        return getattr(reply.data, "content", None) if reply else None

    @staticmethod
    async def compact(session: CopilotSession) -> tuple[int, str | None]:
        """Compact the session's history now, as /compact does: how many messages it
        removed, and the summary the model wrote, which replaces them."""
        result = await session.rpc.history.compact()
        if not result.success:
            raise RuntimeError("the runtime says the compaction did not succeed")
        return result.messages_removed, result.summary_content

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


class Passing(SessionFsProvider):
    """A provider passed every call: :meth:`before` is told of each call first (and may
    refuse it by raising), :meth:`saw` of each call that returned, with its arguments. What
    a wrapper notes or guards, the provider itself unchanged."""

    def __init__(self, inner: Any):
        self.inner = inner

    def before(self, op: str, *args: Any) -> None:
        """A call about to reach the provider: ``op`` is its method, ``args`` what it is given."""

    def saw(self, op: str, *args: Any) -> None:
        """A call the provider answered."""

    async def read_file(self, path: str) -> str:
        self.before("read_file", path)
        content = await self.inner.read_file(path)
        self.saw("read_file", path)
        return content

    async def write_file(self, path: str, content: str, mode: int | None = None) -> None:
        self.before("write_file", path, content)
        await self.inner.write_file(path, content, mode)
        self.saw("write_file", path, content)

    async def append_file(self, path: str, content: str, mode: int | None = None) -> None:
        self.before("append_file", path, content)
        await self.inner.append_file(path, content, mode)
        self.saw("append_file", path, content)

    async def exists(self, path: str) -> bool:
        self.before("exists", path)
        found = await self.inner.exists(path)
        self.saw("exists", path)
        return found

    async def stat(self, path: str) -> Any:
        self.before("stat", path)
        found = await self.inner.stat(path)
        self.saw("stat", path)
        return found

    async def mkdir(self, path: str, recursive: bool, mode: int | None = None) -> None:
        self.before("mkdir", path, recursive)
        await self.inner.mkdir(path, recursive, mode)
        self.saw("mkdir", path, recursive)

    async def readdir(self, path: str) -> list[str]:
        self.before("readdir", path)
        found = await self.inner.readdir(path)
        self.saw("readdir", path)
        return found

    async def readdir_with_types(self, path: str) -> list[Any]:
        self.before("readdir_with_types", path)
        found = await self.inner.readdir_with_types(path)
        self.saw("readdir_with_types", path)
        return found

    async def rm(self, path: str, recursive: bool, force: bool) -> None:
        self.before("rm", path, recursive, force)
        await self.inner.rm(path, recursive, force)
        self.saw("rm", path, recursive, force)

    async def rename(self, src: str, dest: str) -> None:
        self.before("rename", src, dest)
        await self.inner.rename(src, dest)
        self.saw("rename", src, dest)


class Fenced(Passing):
    """A provider behind a fence (handoff/guard/fence.py): every call that changes the
    session's files is checked first, and a refused one never reaches the provider."""

    CHANGES = ("write_file", "append_file", "mkdir", "rm", "rename")

    def __init__(self, inner: Any, fence: Any):
        super().__init__(inner)
        self.fence = fence

    def before(self, op: str, *args: Any) -> None:
        if op in self.CHANGES:
            self.fence.check(f"{op}({args[0]})")


def session_fs_handler(provider: Any) -> Any:
    """A SessionFs provider as the runtime's requests reach it: the SDK's own adapter, which
    turns what the provider raises into the error codes the runtime reads (handoff/conform/)."""
    if not isinstance(provider, SessionFsProvider):
        raise TypeError(f"{type(provider).__name__} is not a copilot.session_fs_provider.SessionFsProvider")
    return create_session_fs_adapter(provider)


FS_NOT_FOUND = SessionFSErrorCode.ENOENT.value  # the code of an error the runtime reads as "no such path"
