"""What the tool prints is partly data it did not write: titles and step names from
scenario files, answers, reasons and paths from stored runs, error messages naming a
value. A terminal obeys control characters in that text — an escape sequence can retitle
the window, clear the screen or hide a line — so everything the CLI prints goes through
:func:`visible`, which shows each control character as an escape (``\\x1b``) instead of
sending it. Newlines and tabs stay: the tool's own layout is made of them. JSON output is
unaffected in substance: its encoder already escapes every control character."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from typing import Iterator, TextIO

# C0 controls but tab and newline, DEL, and the C1 controls (which some terminals obey as
# the 7-bit escape sequences they stand for); and the characters that make text show other
# than it is: the bidi embeddings, overrides and isolates (a name shown reversed) and the
# line and paragraph separators (a row split in two).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    return CONTROL.sub(_escaped, text)


def one_line(text: str) -> str:
    """``text`` with every control character escaped, line breaks and tabs too: for a line
    that must stay one line (a comment in a generated file)."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda found: f"\\x{ord(found.group()):02x}", text)


class _Escaping(io.TextIOBase):
    """A text stream that writes through :func:`visible`."""

    def __init__(self, inner: TextIO):
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:
        return self.inner.encoding


def unescaped(stream: TextIO) -> TextIO:
    """The stream under the escaping, for a writer that sends control codes of its own
    and cleans the text it is given itself: the live progress display (rich, whose Text
    strips control characters from what it shows)."""
    return stream.inner if isinstance(stream, _Escaping) else stream


@contextlib.contextmanager
def printed_as_text() -> Iterator[None]:
    """Within it, what is printed on stdout and stderr shows control characters escaped."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Escaping(sys.stdout), _Escaping(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
