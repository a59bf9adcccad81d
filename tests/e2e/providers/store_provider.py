"""The project's own database store as a user would hand it to the SDK: a factory of
SessionFs providers over the store at $HANDOFF_CONFORM_STORE (a sqlite:/// or
postgresql:// URL), for `handoff conform`."""

from __future__ import annotations

import os
from functools import cache

from handoff.stores.database import Database, connect
from handoff.stores.files import SessionFiles
from handoff.worker.sdk import StoreProvider

HOME = "/home/conform/.copilot"


@cache
def _database(url: str) -> Database:
    database = connect(url)
    SessionFiles.create_schema(database)
    return database


def factory(session) -> StoreProvider:
    return StoreProvider(SessionFiles(_database(os.environ["HANDOFF_CONFORM_STORE"]), session.session_id, HOME))
