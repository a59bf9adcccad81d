"""``MODULE:FACTORY`` as `handoff conform` is given it: the factory an app passes to the
SDK as ``create_session_fs_handler``, imported from the current directory or PYTHONPATH.
Anything that is not one is bad input, said in a line, before a row runs."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any, Callable

from handoff.conform.suite import StandInSession
from handoff.errors import UserError
from handoff.worker.sdk import session_fs_handler

SPEC = re.compile(r"(?P<module>[A-Za-z_][\w.]*):(?P<factory>[A-Za-z_]\w*)")


def factory_named(spec: str) -> Callable[[Any], Any]:
    found = SPEC.fullmatch(spec)
    if found is None:
        raise UserError(f"{spec!r}: name the factory as MODULE:FACTORY, e.g. myapp.sessions:make_provider")
    if str(Path.cwd()) not in sys.path and "" not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as `python -m` would: the current directory's modules
    try:
        module = importlib.import_module(found["module"])
    except ModuleNotFoundError as error:
        raise UserError(f"{spec}: no module {error.name!r} here (the current directory or PYTHONPATH)") from None
    except Exception as error:  # the user's module ran and failed
        raise UserError(f"{spec}: importing {found['module']} failed: {type(error).__name__}: {error}") from None
    factory = getattr(module, found["factory"], None)
    if not callable(factory):
        raise UserError(f"{spec}: {found['module']} has no function {found['factory']!r}")
    try:
        session_fs_handler(factory(StandInSession("conform-check")))
    except TypeError as error:
        raise UserError(f"{spec}: not a factory of SessionFs providers ({error}); it is called with the session "
                        f"and returns a copilot.session_fs_provider.SessionFsProvider") from None
    except Exception as error:
        raise UserError(f"{spec}: calling it with a session failed: {type(error).__name__}: {error}") from None
    return factory
