"""Who may use the chat: its local users, their passwords, and the logins browsers carry.

Everything is derived from the store's app key (handoff/chat/keys.py), so it outlives the
server: a server started again on the same store, or a second server sharing it, gives
the same users the same passwords and accepts the logins the first one handed out. A
login is a signed cookie value (user, expiry, HMAC), not a row anywhere, which is why a
restarted server still knows who a browser is. The session id the browser keeps is
never a credential: ownership is checked by the guard on every call.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass, field
from typing import Callable

LOGIN_SECONDS = 12 * 3600
_PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # nothing one misreads for another
PASSWORD_LENGTH = 12


def _mac(key: bytes, *fields: str) -> bytes:
    return hmac.new(key, "\x1f".join(fields).encode(), hashlib.sha256).digest()


@dataclass(frozen=True)
class Accounts:
    key: bytes = field(repr=False)
    users: tuple[str, ...]
    clock: Callable[[], float] = time.time

    def password(self, user: str) -> str:
        digest = _mac(self.key, "password", user)
        return "".join(_PASSWORD_ALPHABET[byte % len(_PASSWORD_ALPHABET)] for byte in digest[:PASSWORD_LENGTH])

    def log_in(self, user: str, password: str) -> str | None:
        """A login for the browser to keep (a cookie's value), or None: no such user, or
        not their password (the same answer for both)."""
        known = user in self.users
        expected = self.password(user) if known else self.password("")
        if not hmac.compare_digest(expected.encode(), password.encode()) or not known:
            return None
        expires = str(int(self.clock()) + LOGIN_SECONDS)
        return f"{user}.{expires}.{_mac(self.key, 'login', user, expires).hex()}"

    def user_of(self, login: str | None) -> str | None:
        """The user a login belongs to while it is good; None for anything else."""
        user, _, rest = (login or "").partition(".")
        expires, _, tag = rest.partition(".")
        if user not in self.users or not expires.isdigit() or int(expires) < self.clock():
            return None
        if not hmac.compare_digest(_mac(self.key, "login", user, expires).hex(), tag):
            return None
        return user
