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
MAX_FACT_LENGTH = 200  # characters of the value, and of the topic

# The value is a run of characters that are neither a bare quote nor a backslash, or
# escaped characters.
REMEMBER_PATTERN = re.compile(
    r"Remember this: my favourite (?P<topic>.+?) is '(?P<value>(?:[^'\\]|\\.)*)'\. Reply with just OK\.",
    re.DOTALL,
)
QUESTION_PATTERN = re.compile(r"Which (?P<topic>.+?) did I say was my favourite\?")
# The fact can also reach the model through a tool the worker registers (a step's
# ``tools``): the prompt names the tool, the model calls it with the topic, and the tool's
# result states the fact. A tool's name is a word, as the OpenAI wire format wants it.
LOOKUP_PATTERN = re.compile(r"Look up my favourite (?P<topic>.+?) with the (?P<tool>\w+) tool\. Reply with just OK\.")
# How a tool's result, or a summary the witness writes when the runtime compacts, states
# the fact: the words of ``Fact.stated_text`` after a short lead-in.
# The topic of a long history's filler turns (a step's ``fill``): another topic than the
# fact's, so the only statement of the fact stays the turn that told it.
FILLER_TOPIC = "filler item"
STATED_PATTERN = re.compile(r"my favourite (?P<topic>.+?) is '(?P<value>(?:[^'\\]|\\.)*)'\.", re.DOTALL)


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

    def lookup_prompt(self, tool: str) -> str:
        """Asks the model to fetch the fact with ``tool`` (the fact is not in the prompt)."""
        return f"Look up my favourite {self.topic} with the {tool} tool. Reply with just OK."

    def lookup_result(self, topic: str) -> str:
        """What the lookup tool returns for ``topic``: the fact for its own topic, else nothing."""
        if topic != self.topic:
            return f"Found nothing about a favourite {topic}."
        return f"Found: {self.stated_text}."

    def filler_prompt(self, number: int) -> str:
        """The ``number``-th filler turn of a long history: a remember prompt (answered OK)
        about a topic that is never this fact's, whatever topic a run chose."""
        topic = FILLER_TOPIC if self.topic != FILLER_TOPIC else f"other {FILLER_TOPIC}"
        return Fact(str(number), topic).remember_prompt

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
