"""Checks of the command line's inputs, made before anything starts.

Each raises :class:`UserError` with a message that names the option, says what is wrong
and how to fix it (exit code 2); none of them starts a process or changes a file.
"""

from __future__ import annotations

import ipaddress
import os
import stat
import tempfile
import unicodedata
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

from handoff.errors import UserError
from handoff.fact import MAX_FACT_LENGTH, Fact
from handoff.stores.database import redacted


def temporary_directory() -> None:
    """TMPDIR, when it is set, is a directory that can be written. Python falls back to
    /tmp without a word when it is not; the runtime does not, and every session it
    creates would fail ("Directory does not exist or cannot be accessed")."""
    given = os.environ.get("TMPDIR")
    if not given:
        return
    if os.path.exists(given) and not os.path.isdir(given):
        raise UserError(f"TMPDIR={given}: is not a directory; give a directory, or unset TMPDIR")
    if not os.path.isdir(given):
        raise UserError(f"TMPDIR={given}: no such directory; create it, or unset TMPDIR")
    if not os.access(given, os.W_OK | os.X_OK):
        raise UserError(f"TMPDIR={given}: cannot be written here (permission denied); give another, or unset TMPDIR")


def utf8(text: str) -> bool:
    """Whether ``text`` is UTF-8 (Python keeps bytes that are not as lone surrogates)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _shown(text: str) -> str:
    """``text`` with the bytes that are not UTF-8 written as \\xNN."""
    return text.encode(errors="surrogateescape").decode(errors="backslashreplace")


def arguments(given: list[str]) -> None:
    """What no option or argument of any command can mean: text that is not UTF-8 (the
    runtime, the JSON of a run and every report need it), and an option's empty value,
    which a path would take for the current directory and an address for every interface."""
    for position, argument in enumerate(given):
        named = _option_of(given, position)
        if not utf8(argument):
            raise UserError(f"{named or 'argument'} {_shown(argument)}: is not UTF-8 text; give it in UTF-8")
        if named and (argument == "" or argument == named + "="):  # an empty argument is the command's to name
            raise UserError(f"{named}: the value is empty; give one, or leave the option out")


# Variables the tool or the runtime reads as paths. A relative one means another place in
# every process that starts elsewhere (a worker in its host's directory); the runtime
# needs them in UTF-8 (they go into JSON-RPC and the run's record).
ABSOLUTE_PATH_VARIABLES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "TMPDIR")
PATH_VARIABLES = (*ABSOLUTE_PATH_VARIABLES, "COPILOT_CLI_PATH", "HANDOFF_RUNS_DIR")  # these two may be relative, as options


def environment() -> None:
    """The path variables above, where set: UTF-8 text, and absolute where a relative one
    would move with the current directory."""
    for name in PATH_VARIABLES:
        value = os.environ.get(name)
        if not value:
            continue
        if not utf8(value):
            raise UserError(f"{name}={_shown(value)}: is not UTF-8 text; give a path in UTF-8, or unset it")
        if name in ABSOLUTE_PATH_VARIABLES and not os.path.isabs(value):
            raise UserError(f"{name}={value}: is a relative path, which means another place in each process that "
                            f"starts elsewhere; give an absolute path, or unset it")


def current_directory() -> None:
    """The current directory still exists: every relative path is read against it."""
    try:
        os.getcwd()
    except FileNotFoundError:
        raise UserError("the current directory has been removed; cd to one that exists") from None


def _option_of(given: list[str], position: int) -> str | None:
    """The option a value belongs to: the one before it (``--home X``) or its own name (``--home=X``)."""
    argument = given[position]
    if argument.startswith("--") and "=" in argument:
        return argument.split("=", 1)[0]
    before = given[position - 1] if position else ""
    return before if before.startswith("-") and "=" not in before and before != "--" else None


def writable_file(path: Path, option: str, keep: tuple[Path, ...] = (), appended: bool = False) -> None:
    """``path`` can take the output when the command ends, and nothing is lost by it: an
    output is renamed into place, so what is there is replaced whole. So it must be a
    regular file, a link or nothing yet (not a directory, a device or a FIFO), in a
    directory that takes a new file, and none of the files in ``keep`` (what the tool
    reads: the scenarios, the stored runs' records). A link there is replaced, never
    followed: one planted by someone else leads nowhere. (``appended``:
    the file is added to, not replaced, so a link there is refused instead.)"""
    target = Path(os.path.realpath(path.parent)) / path.name
    if appended and target.is_symlink():
        raise UserError(f"{option} {path}: is a link, and a link is never followed; give the file itself")
    if target.is_dir() and not target.is_symlink():
        raise UserError(f"{option} {path}: is a directory; give a file name")
    if os.path.lexists(target) and not (target.is_symlink() or target.is_file()):
        raise UserError(f"{option} {path}: is not a regular file (a device, a FIFO or a socket), and the output "
                        f"would replace it; give a file name (to see the output, leave {option} out)")
    if any(target == Path(os.path.realpath(kept)) for kept in keep):
        raise UserError(f"{option} {path}: would overwrite {target}, which the tool reads; give another path")
    parent = target.parent
    if not parent.is_dir():
        raise UserError(f"{option} {path}: the directory {path.parent} does not exist")
    if os.path.lexists(target) and _sticky_elsewhere(target):
        raise UserError(f"{option} {path}: belongs to another user, in a directory where only its owner may replace "
                        f"it (sticky, as /tmp is); give another path")
    if target.is_file() and not target.is_symlink() and not os.access(target, os.W_OK):
        raise UserError(f"{option} {path}: cannot be written here (permission denied)")
    try:  # as in writable_directory (a full disk shows only when the file is written)
        descriptor, probe = tempfile.mkstemp(prefix=".handoff-probe-", dir=parent)
        os.close(descriptor)
        os.unlink(probe)
    except OSError as error:
        raise UserError(f"{option} {path}: no file can be made in {parent} ({error.strerror or error}); "
                        f"give another path") from None


def _sticky_elsewhere(entry: Path) -> bool:
    """Whether the rename that replaces ``entry`` would be refused: its directory is
    sticky and neither it nor the directory is ours (root may replace anything)."""
    me = os.geteuid()
    directory = entry.parent.stat()
    return (me != 0 and bool(directory.st_mode & stat.S_ISVTX) and entry.lstat().st_uid != me
            and directory.st_uid != me)


def distinct_outputs(outputs: dict[str, Path]) -> None:
    """Two outputs of one command are two files: the second would replace the first."""
    seen: dict[str, str] = {}
    for option, path in outputs.items():
        real = os.path.realpath(path)
        if real in seen:
            raise UserError(f"{seen[real]} and {option} name the same file, {path}; give each its own")
        seen[real] = option


def directory_or_nothing(path: Path, option: str) -> None:
    """``path`` is a directory or nothing yet, not a file that would read as an empty one."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: exists and is not a directory")


def fresh_directory(path: Path, option: str) -> None:
    """``path`` is a directory the run may fill: missing (it is made) or empty."""
    if path.is_dir() and any(path.iterdir()):
        raise UserError(f"{option} {path}: exists and is not empty; give a new or empty directory "
                        f"(nothing in it is overwritten)")
    writable_directory(path, option)


def writable_directory(path: Path, option: str) -> None:
    """``path`` is, or can be made, a directory this process may write in."""
    directory_or_nothing(path, option)
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("/"))
    under = f" under {existing}" if existing != path else ""
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: cannot be written{under} (permission denied)")
    try:  # the one sure test (a read-only mount, /proc): make a directory there, then remove it
        os.rmdir(tempfile.mkdtemp(prefix=".handoff-probe-", dir=existing))
    except OSError as error:
        raise UserError(f"{option} {path}: cannot be written{under} ({error.strerror or error})") from None


def network_url(text: str, option: str, schemes: tuple[str, ...], example: str, needs_host: bool = True) -> SplitResult:
    """A URL whose scheme, host and port are usable: every part a connection needs.
    (``needs_host`` False: no host means a local default, as for PostgreSQL's socket.)
    ``option`` ending in ``=`` is written right before the URL (``--host b=ssh://…``)."""
    shown = redacted(text)  # the message may be shown anywhere: never with a password in it
    given = option + shown if option.endswith("=") else f"{option} {shown}"
    if not one_line(text) or any(character.isspace() for character in text):
        raise UserError(f"{option.rstrip('=')}: the URL holds a space, a line break or a control character; "
                        f"percent-encode it (a space is %20); expected e.g. {example}")
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


# Characters that make a value show other than it is: zero-width spaces and joiners of
# words, a byte order mark, and the bidi embeddings, overrides and isolates. (Other
# formatting characters, such as the joiners emoji and some scripts need, are fine.)
HIDDEN = frozenset("\u200b\u2060\ufeff" + "".join(map(chr, range(0x202A, 0x202F))) + "".join(map(chr, range(0x2066, 0x206A))))


def one_line(text: str) -> bool:
    """No line break of any kind (also U+2028, U+0085) and no control character."""
    return not any(unicodedata.category(character) in ("Cc", "Zl", "Zp") for character in text)


def fact(value: str, topic: str) -> Fact:
    """The fact to remember, if every verdict about it can be told apart: the value must
    not be a word of the witness's own fixed answers (then an answer that names it would
    not tell a kept turn from a lost one), and both must be one line of text."""
    from handoff.witness.answer import NOT_KNOWN, OFF_SCRIPT  # the witness's words

    for option, text in (("--fact", value), ("--topic", topic)):
        if not text.strip():
            raise UserError(f"{option} must not be empty")
        if not one_line(text):
            raise UserError(f"{option}: must be one line of text, without line breaks or control characters")
        hidden = next((c for c in text if c in HIDDEN), None)
        if hidden:  # a zero-width space, a bidi override: every table would show the value other than it is
            raise UserError(f"{option}: holds the invisible formatting character U+{ord(hidden):04X}; give the text "
                            f"without it")
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
