"""Who may use the console: the owner's token, a session cookie, CSRF on every change.

The browser logs in once with the token (a POST form); the console answers with a cookie
holding a random session id (never the token): ``HttpOnly``, ``SameSite=Strict``. Every POST
must carry that session's CSRF token in its form and come from the console's own origin
(``Origin`` when the browser sends one, ``Sec-Fetch-Site: same-origin`` when it sends that).
Sessions live in this process only: a restart logs everyone out.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

COOKIE = "specwire_console"
TOKEN_ENV = "SPECWIRE_CONSOLE_TOKEN"
MIN_TOKEN_CHARS = 16
# Sessions kept at once; the oldest is dropped past it (a login per tab is plenty).
MAX_SESSIONS = 64


class TokenError(ValueError):
    """The configured token is unusable (one line for the owner)."""


def new_token() -> str:
    return secrets.token_urlsafe(24)


def check_token(token: str) -> str:
    if len(token) < MIN_TOKEN_CHARS or not token.isprintable() or token.strip() != token:
        raise TokenError(
            f"{TOKEN_ENV}: a token needs at least {MIN_TOKEN_CHARS} printable characters"
        )
    return token


@dataclass(frozen=True)
class Session:
    id: str
    csrf: str


class ConsoleAuth:
    """The token and the logged-in sessions of one console."""

    def __init__(self, token: str) -> None:
        self._token = check_token(token).encode()
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def login(self, offered: str) -> Session | None:
        """A new session when ``offered`` is the token; None otherwise."""
        if not hmac.compare_digest(offered.encode(), self._token):
            return None
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32))
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return session

    def session(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            return self._sessions.get(session_id)

    def logout(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)


def csrf_matches(session: Session, offered: str | None) -> bool:
    return offered is not None and hmac.compare_digest(offered.encode(), session.csrf.encode())


def same_origin(origin: str | None, fetch_site: str | None, own_origin: str) -> bool:
    """Whether a POST's headers say it comes from the console's own pages.

    Browsers send ``Sec-Fetch-Site`` on every request: when it is there it must be
    ``same-origin``. ``Origin`` must then be the console's own, or ``null``: under the
    console's ``Referrer-Policy: no-referrer`` Chromium sends ``Origin: null`` on its own form
    posts, so ``null`` alone proves nothing and is accepted only beside
    ``Sec-Fetch-Site: same-origin``. A client that sends neither header (a script holding the
    cookie) still needs the session's CSRF token."""
    if fetch_site is not None:
        return fetch_site == "same-origin" and origin in (None, "null", own_origin)
    return origin is None or origin == own_origin
