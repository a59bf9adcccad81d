"""Checks of the command line's inputs, made before anything starts.

Each raises :class:`UserError` with a message that names the option, says what is wrong
and how to fix it (exit code 2); none of them starts a process or changes a file.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

from handoff.errors import UserError
from handoff.fact import Fact
from handoff.stores.database import redacted


def temporary_directory() -> None:
    """TMPDIR, when it is set, is a directory that can be written. Python falls back to
    /tmp without a word when it is not; the runtime does not, and every session it
    creates would fail ("Directory does not exist or cannot be accessed")."""
    given = os.environ.get("TMPDIR")
    if not given:
        return
    if not os.path.isdir(given):
        raise UserError(f"TMPDIR={given}: no such directory; create it, or unset TMPDIR")
    if not os.access(given, os.W_OK | os.X_OK):
        raise UserError(f"TMPDIR={given}: cannot be written here (permission denied); give another, or unset TMPDIR")


def writable_file(path: Path, option: str) -> None:
    """``path`` can be written when the run ends: not a directory, in a directory that
    exists and can be written, and writable itself if it exists."""
    if path.is_dir():
        raise UserError(f"{option} {path}: is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{option} {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UserError(f"{option} {path}: cannot be written here (permission denied)")


def fresh_directory(path: Path, option: str) -> None:
    """``path`` is a directory the run may fill: missing (it is made) or empty."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        raise UserError(f"{option} {path}: exists and is not empty; give a new or empty directory "
                        f"(nothing in it is overwritten)")
    writable_directory(path, option)


def writable_directory(path: Path, option: str) -> None:
    """``path`` is, or can be made, a directory this process may write in."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: exists and is not a directory")
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("/"))
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: cannot be written{' under ' + str(existing) if existing != path else ''} "
                        f"(permission denied)")


def network_url(text: str, option: str, schemes: tuple[str, ...], example: str, needs_host: bool = True) -> SplitResult:
    """A URL whose scheme, host and port are usable: every part a connection needs.
    (``needs_host`` False: no host means a local default, as for PostgreSQL's socket.)
    ``option`` ending in ``=`` is written right before the URL (``--host b=ssh://…``)."""
    shown = redacted(text)  # the message may be shown anywhere: never with a password in it
    given = option + shown if option.endswith("=") else f"{option} {shown}"
    try:
        parts = urlsplit(text)
        port = parts.port  # raises ValueError for a port out of range or not a number
    except ValueError as error:
        raise UserError(f"{given}: {_port_problem(error)}; expected e.g. {example}") from None
    if parts.scheme not in schemes:
        raise UserError(f"{given}: the scheme must be {' or '.join(schemes)}; expected e.g. {example}")
    if not parts.hostname and needs_host:
        raise UserError(f"{given}: no host name or address in it; expected e.g. {example}")
    if "[" in parts.netloc:
        try:
            ipaddress.IPv6Address(parts.hostname)
        except ValueError:
            raise UserError(f"{given}: [{parts.hostname}] is not an IPv6 address; expected e.g. {example}") \
                from None
    if port == 0:
        raise UserError(f"{given}: port 0 is not a port one can connect to; expected e.g. {example}")
    return parts


def _port_problem(error: ValueError) -> str:
    said = str(error)
    if "out of range" in said:
        return "the port is out of range (1-65535)"
    if "Invalid IPv6" in said:
        return "the IPv6 address in brackets is malformed"
    return "the port is not a number"


MAX_FACT_LENGTH = 200


def fact(value: str, topic: str) -> Fact:
    """The fact to remember, if every verdict about it can be told apart: the value must
    not be a word of the witness's own fixed answers (then an answer that names it would
    not tell a kept turn from a lost one), and both must be one line of text."""
    from handoff.witness.answer import NOT_KNOWN, OFF_SCRIPT  # the witness's words

    for option, text in (("--fact", value), ("--topic", topic)):
        if not text.strip():
            raise UserError(f"{option} must not be empty")
        if any(ord(character) < 32 or ord(character) == 127 for character in text):
            raise UserError(f"{option}: must be one line of text, without line breaks or control characters")
        if len(text) > MAX_FACT_LENGTH:
            raise UserError(f"{option}: at most {MAX_FACT_LENGTH} characters, got {len(text)}")
    chosen = Fact(value, topic)
    for reply, name in ((NOT_KNOWN.format(topic=topic), "'I don't know' answer"), (OFF_SCRIPT, "off-script answer")):
        if chosen.is_in(reply):
            raise UserError(f"--fact {value!r}: the witness's fixed {name} ({reply!r}) names it too, so an answer "
                            f"naming it could not tell a kept turn from a lost one; choose another value or --topic")
    return chosen


def engine(name: str) -> None:
    """``--engine``: one of the container engines the tool drives."""
    from handoff.containers.engine import ENGINES

    if name not in ENGINES:
        raise UserError(f"--engine {name}: choose one of {', '.join(ENGINES)}")
