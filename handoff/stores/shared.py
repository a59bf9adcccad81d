"""The databases of one run: which URL a scenario's workers use, on which host.

Each scenario gets its own PostgreSQL schema (or its own SQLite file), so scenarios that
run in parallel never see each other's sessions in the registry. Schemas made on a
server the user named are dropped at the end of the run; a throwaway server is deleted
whole.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from handoff.stores.database import connect, sqlite_url


def _with(url: str, host: str | None = None, **query: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if host is not None:
        userinfo = netloc.rpartition("@")[0]
        port = f":{parts.port}" if parts.port else ""
        netloc = f"{userinfo + '@' if userinfo else ''}{host}{port}"
    merged = dict(parse_qsl(parts.query), **query)
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(merged, quote_via=quote), parts.fragment))


class RunDatabases:
    def __init__(self, run_dir: Path, postgres_url: str | None, lan_address: str | None, owned: bool):
        self.run_dir = run_dir
        self.postgres_url = postgres_url
        self.lan_address = lan_address  # where simulated hosts reach an owned server
        self.owned = owned
        self.tag = secrets.token_hex(3)
        self._schemas: list[str] = []

    def url(self, scenario: str, store: str, on_simulated_host: bool) -> str | None:
        """The store URL for a worker of ``scenario``; None for the home directory."""
        if store == "home":
            return None
        if store == "sqlite":
            return sqlite_url(self.run_dir / scenario / "store.db")
        schema = f"handoff_{self.tag}_{scenario.replace('-', '_')}"
        host = self.lan_address if (on_simulated_host and self.owned) else None
        return _with(self.postgres_url, host, options=f"-c search_path={schema}")

    def prepare(self, scenario: str, store: str) -> None:
        if store != "postgres":
            return
        schema = f"handoff_{self.tag}_{scenario.replace('-', '_')}"
        database = connect(self.postgres_url)
        try:
            database.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        finally:
            database.close()
        self._schemas.append(schema)

    def close(self) -> None:
        if self.owned or not self._schemas:
            return
        database = connect(self.postgres_url)
        try:
            for schema in self._schemas:
                database.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            database.close()
