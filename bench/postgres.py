"""A throwaway PostgreSQL server for a benchmark, and databases of their own on it."""

from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def throwaway_server() -> Iterator[str]:
    """The URL of a PostgreSQL server started for the benchmark and deleted after it."""
    from handoff.stores.postgres_server import ThrowawayPostgres

    server = ThrowawayPostgres(["127.0.0.1"])
    try:
        yield server.start()
    finally:
        server.stop()


def database_url(server_url: str, name: str) -> str:
    """``server_url`` with its database replaced by ``name`` (its query kept)."""
    head, _, _ = server_url.partition("?")[0].rpartition("/")
    query = server_url.partition("?")[2]
    return f"{head}/{name}" + (f"?{query}" if query else "")


def own_database(server_url: str, name: str, template: str | None = None) -> str:
    """A new database ``name`` on the server (a copy of ``template``, if given): its URL."""
    import psycopg

    copied = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"{copied}')
    return database_url(server_url, name)
