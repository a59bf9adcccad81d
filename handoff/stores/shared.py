"""The databases of one run: which URL a scenario's workers use, on which host.

Each scenario gets its own PostgreSQL schema (or its own SQLite file), so scenarios that
run in parallel never see each other's sessions in the registry. A schema is named for
the run and the scenario: ``handoff_<the run id's last part>_<scenario>``.

What a run wrote to a server the user named (`--store`) is the user's: its schemas are
kept, and `handoff sessions list --store URL` lists the sessions in all of them
(:func:`kept_registries`). Only the tool's own throwaway server is deleted, whole.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from handoff.stores.database import Database, PostgresDatabase, connect, sqlite_url
from handoff.stores.registry import MAX_LISTED, RegisteredSession, Registry
from handoff.words import StoreKind

SCHEMA_PREFIX = "handoff_"


def _with(url: str, host: str | None = None, **query: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if host is not None:
        userinfo = netloc.rpartition("@")[0]
        port = f":{parts.port}" if parts.port else ""
        netloc = f"{userinfo + '@' if userinfo else ''}{host}{port}"
    merged = dict(parse_qsl(parts.query), **query)
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(merged, quote_via=quote), parts.fragment))


def schema_name(tag: str, scenario: str) -> str:
    return f"{SCHEMA_PREFIX}{tag}_{scenario.replace('-', '_')}"


class RunDatabases:
    def __init__(self, run_dir: Path, postgres_url: str | None, lan_address: str | None, owned: bool,
                 tag: str | None = None):
        self.run_dir = run_dir
        self.postgres_url = postgres_url
        self.lan_address = lan_address  # where simulated hosts reach an owned server
        self.owned = owned
        self.tag = tag or secrets.token_hex(3)  # the run id's last part, so a kept schema names its run

    def url(self, scenario: str, store: str, on_simulated_host: bool) -> str | None:
        """The store URL for a worker of ``scenario``; None for the home directory."""
        if store == StoreKind.HOME:
            return None
        if store == StoreKind.SQLITE:
            return sqlite_url(self.run_dir / scenario / "store.db")
        schema = schema_name(self.tag, scenario)
        host = self.lan_address if (on_simulated_host and self.owned) else None
        return _with(self.postgres_url, host, options=f"-c search_path={schema}")

    def prepare(self, scenario: str, store: str) -> None:
        if store != StoreKind.POSTGRES:
            return
        database = connect(self.postgres_url)
        try:
            database.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema_name(self.tag, scenario)}"')
        finally:
            database.close()


def kept_registries(database: Database, owner: str | None = None) -> list[tuple[str, list[RegisteredSession]]]:
    """The registered sessions a store holds, by where they are kept: the registry on the
    URL's own search path (``""``), then on a PostgreSQL server each schema runs kept
    there (``handoff_<run>_<scenario>``), oldest name first; MAX_LISTED in all, at most."""
    found = []
    own = Registry.existing(database)
    if own is not None:
        found.append(("", own.sessions(owner)))
    if isinstance(database, PostgresDatabase):
        schemas = [row[0] for row in database.rows(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'session_registry' "
            "AND starts_with(table_schema, {p}) ORDER BY table_schema", (SCHEMA_PREFIX,))]
        for schema in schemas:
            if sum(len(sessions) for _, sessions in found) >= MAX_LISTED:
                break
            database.execute(f'SET search_path TO "{schema.replace(chr(34), chr(34) * 2)}"')
            found.append((schema, Registry(database, create=False).sessions(owner)))
    listed, left = [], MAX_LISTED
    for where, sessions in found:
        if sessions and left > 0:
            listed.append((where, sessions[:left]))
            left -= len(listed[-1][1])
    return listed