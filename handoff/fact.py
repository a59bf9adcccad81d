"""The fact a scenario asks the model to remember, and the two prompts that carry it.

The lab's sentences are the template: "Remember this: my favourite retail segment is
'At Risk'. Reply with just OK." and "Which retail segment did I say was my favourite?".
Both the topic ("retail segment") and the value ("At Risk") are data, so every value
travels through exactly the same code; nothing anywhere knows the default value.

The value is quoted with single quotes; a quote or backslash inside it is escaped with a
backslash so that a value such as O'Brien survives the round trip through the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_TOPIC = "retail segment"
DEFAULT_VALUE = "At Risk"

# The value is a run of characters that are neither a bare quote nor a backslash, or
# escaped characters.
REMEMBER_PATTERN = re.compile(
    r"Remember this: my favourite (?P<topic>.+?) is '(?P<value>(?:[^'\\]|\\.)*)'\. Reply with just OK\.",
    re.DOTALL,
)
QUESTION_PATTERN = re.compile(r"Which (?P<topic>.+?) did I say was my favourite\?")


def quote(value: str) -> str:
    """Escape a value for the single-quoted form the prompts use."""
    return value.replace("\\", "\\\\").replace("'", "\\'")


def unquote(text: str) -> str:
    """Undo :func:`quote`."""
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


@dataclass(frozen=True)
class Fact:
    value: str = DEFAULT_VALUE
    topic: str = DEFAULT_TOPIC

    @property
    def remember_prompt(self) -> str:
        return f"Remember this: my favourite {self.topic} is '{quote(self.value)}'. Reply with just OK."

    @property
    def question_prompt(self) -> str:
        return f"Which {self.topic} did I say was my favourite?"

    @property
    def stated_text(self) -> str:
        """The exact text that states the fact inside a conversation."""
        return f"my favourite {self.topic} is '{quote(self.value)}'"

    def is_in(self, answer: str | None) -> bool:
        """Does an answer name the value, as a whole word or phrase? Case-insensitive, as a
        person would read it; a short value such as "No" must not match inside "nothing"."""
        if not answer:
            return False
        text = answer.casefold()
        forms = {self.value.casefold(), quote(self.value).casefold()}
        return any(re.search(rf"(?<!\w){re.escape(form)}(?!\w)", text) for form in forms if form)
