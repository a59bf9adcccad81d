"""This machine as a host: workers forked from the zygote, or spawned as new interpreters."""

from __future__ import annotations

import sys
from pathlib import Path

from handoff.hosts.base import PIPES, USER_DIRS, Host, Launch, worker_env
from handoff.hosts.zygote import Zygote


class LocalHost(Host):
    """This machine. With a zygote, workers are forked from it, SDK already imported.
    Its workers run with a user directory of their own (``.state/hosts/local``), as each
    simulated host's do: the runtimes a crash scenario kills leave their in-use markers
    there, not in the real user's ~/.cache."""

    kind = "local"
    sees_run_files = True

    def __init__(self, name: str, zygote: Zygote | None = None):
        super().__init__(name)
        self.zygote = zygote
        self.user_dir = USER_DIRS / "local"
        self.user_dir.mkdir(parents=True, exist_ok=True)

    async def start_worker(self, tracker, store, stderr, cwd, launch=Launch()):
        env = worker_env(self.passed_env, str(self.user_dir))
        if self.zygote is not None:
            return await self.zygote.fork(env, cwd, stderr)
        return await tracker.spawn(sys.executable, "-m", "handoff.worker", stderr=stderr, cwd=cwd, env=env, **PIPES)

    def home(self, store: Path) -> str:
        return str(store)
