"""What a witness saw, counted as it answers, for the few lines `handoff witness` prints
when it stops: the requests of each principal (whose token sent them; BYOK requests
carry none), those refused, and every favourite the chats stated, with whose chats
carried it. Counts only, and at most MAX_FACTS facts (the rest counted together): it
stays small however long the witness runs and whatever its clients send."""

from __future__ import annotations

import threading
from collections import Counter

BYOK = "BYOK"  # what a request with no principal is counted under
MAX_FACTS = 20


class Tally:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: Counter[str] = Counter()
        self._chats: Counter[str] = Counter()
        self._refused = 0
        self._facts: dict[tuple[str, str], Counter[str]] = {}  # (topic, value) -> principal -> chats
        self._more_facts = 0  # chats that stated a fact beyond the first MAX_FACTS

    def chat(self, principal: str | None, stated: dict[str, str]) -> None:
        """A chat answered; ``stated``: the favourites its conversation states (topic -> value)."""
        who = principal or BYOK
        with self._lock:
            self._requests[who] += 1
            self._chats[who] += 1
            for fact in stated.items():
                if fact in self._facts or len(self._facts) < MAX_FACTS:
                    self._facts.setdefault(fact, Counter())[who] += 1
                else:
                    self._more_facts += 1

    def call(self, principal: str | None) -> None:
        """Any other request answered; with no principal, one refused."""
        with self._lock:
            if principal is None:
                self._refused += 1
            else:
                self._requests[principal] += 1

    def lines(self) -> list[str]:
        with self._lock:
            if not self._requests and not self._refused:
                return ["Seen: no request."]
            seen = [f"{who} {count} ({_plural(self._chats[who], 'chat')})" for who, count in sorted(self._requests.items())]
            if self._refused:
                seen.append(f"refused {self._refused} (no token, or one this witness did not issue)")
            lines = [f"Seen: {', '.join(seen)}."]
            for (topic, value), carriers in self._facts.items():
                by = ", ".join(f"{who} {count}" for who, count in sorted(carriers.items()))
                lines.append(f"Fact '{value}' (favourite {topic}): in the chats of {by}.")
            if self._more_facts:
                lines.append(f"Other facts, not told apart: stated {self._more_facts} more time(s).")
            return lines


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
