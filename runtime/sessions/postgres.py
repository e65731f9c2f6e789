"""Session logs in PostgreSQL: the file logs' twin for ``memory.state: postgres``.

``session_log_events`` is append-only: one row per event, keyed ``(tenant, spec, session,
seq)``, seq 1..n per session. A row keeps the event's body exactly as sealed (``body``: the JSON
text of ``seq``, ``type``, ``at``, ``payload``) and its ``mac``, sealed as the file logs are
(``runtime.sessions.log.seal``) with a random key per tenant and spec kept in
``session_log_keys`` (created once, race-free; never shown to the agent, which has no database
connection). Readers verify every row's seal and skip one that does not verify, or that sits
at another ``seq`` than its sealed body names, so a row written by anything but the host is
never evidence.

A reader keeps what it verified (``_prefixes``): per-turn hosts read a conversation's whole log
on every turn, and fetching, parsing and verifying every row again makes a conversation
quadratic. The rows only grow, so a read asks the server for a digest of the rows it verified
(their count and an md5 over each row's seal and body, computed where the rows are) and
fetches, parses and verifies only the rows after them; a prefix that changed in any row (an
erasure re-seals the rows it redacts), lost one or is keyed differently is read again from
the start.

An append takes the next number under a transaction-scoped advisory lock of its session: two
writers of one session (there should never be two: a conversation's turns are ordered by
``conversation_lock``) still get distinct numbers, never a gap. Each append commits on its own,
so a killed worker loses no event it wrote.

``conversation_lock`` orders a conversation's turns across every worker: a session-level
advisory lock held on a connection of its own (never one of the pool's) for the whole turn.
The server drops it when that connection closes, so a worker that dies (even by SIGKILL) never
leaves a conversation locked.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.errors import LockTimeoutError, StoreError
from specwire.runtime.pg.migrations import advisory_key, migrate_once
from specwire.runtime.pg.pool import translated
from specwire.runtime.sessions.log import Event, event_body, seal, verified_event

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

COMPONENT: Final = "session_logs"
KEY_BYTES: Final = 32

SESSION_LOG_MIGRATIONS: Final[tuple[tuple[int, tuple[str, ...]], ...]] = (
    (
        1,
        (
            """CREATE TABLE session_log_keys (
                tenant text NOT NULL,
                spec text NOT NULL,
                key bytea NOT NULL CHECK (octet_length(key) = 32),
                PRIMARY KEY (tenant, spec)
            )""",
            """CREATE TABLE session_log_events (
                tenant text NOT NULL,
                spec text NOT NULL,
                session text NOT NULL,
                seq bigint NOT NULL CHECK (seq > 0),
                kind text NOT NULL,
                body text NOT NULL,
                mac text NOT NULL,
                PRIMARY KEY (tenant, spec, session, seq)
            )""",
        ),
    ),
)

_SCOPE: Final = "tenant = %(tenant)s AND spec = %(spec)s"
_ROWS: Final = (
    f"SELECT seq, body, mac FROM session_log_events WHERE {_SCOPE} AND session = %(session)s "
    "AND seq > %(after)s ORDER BY seq"
)
# The rows a reader verified, as the server sees them now: how many, and an md5 over each row's
# seal and body in order (a row's own md5 first, so the server never builds a string the size
# of the log).
_PREFIX: Final = (
    "SELECT count(*), coalesce(md5(string_agg(md5(mac || body), '' ORDER BY seq)), '') "
    f"FROM session_log_events WHERE {_SCOPE} AND session = %(session)s AND seq <= %(upto)s"
)


@dataclass(frozen=True)
class _VerifiedPrefix:
    """The events of a session's rows up to ``upto``, already verified, and each of those
    rows' md5 over its seal and body, as the server computes it (``_PREFIX``)."""

    key: bytes
    upto: int
    row_digests: tuple[str, ...]
    events: tuple[Event, ...]

    def digest(self) -> tuple[int, str]:
        """What ``_PREFIX`` answers while these rows are unchanged."""
        if not self.row_digests:
            return 0, ""
        return len(self.row_digests), _md5("".join(self.row_digests))


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


# Per connection pool (a database; weak keys), the most recently read sessions' verified
# prefixes by (tenant, spec, session); bounded per pool.
_PREFIX_LIMIT: Final = 256
_prefixes: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, str, str], _VerifiedPrefix]] = (
    weakref.WeakKeyDictionary()
)
_prefixes_lock = threading.Lock()


def _known_prefix(pool: Any, name: tuple[str, str, str]) -> _VerifiedPrefix | None:
    with _prefixes_lock:
        known = _prefixes.get(pool)
        return known.get(name) if known is not None else None


def _remember_prefix(pool: Any, name: tuple[str, str, str], prefix: _VerifiedPrefix) -> None:
    with _prefixes_lock:
        known = _prefixes.setdefault(pool, OrderedDict())
        known[name] = prefix
        known.move_to_end(name)
        while len(known) > _PREFIX_LIMIT:
            known.popitem(last=False)


# Per connection pool (a database; weak keys), how many turns of this process may hold a
# conversation lock, each on a connection of its own, at once: ``SPECWIRE_MAX_TURNS`` (default
# 16). A turn past it waits here, holding no connection, so a burst of conversations cannot
# take every connection the server allows (the pool's 10, the worker's lease and listener, and
# these, per worker).
MAX_TURNS_VARIABLE: Final = "SPECWIRE_MAX_TURNS"
DEFAULT_MAX_TURNS: Final = 16
_slots: weakref.WeakKeyDictionary[Any, threading.BoundedSemaphore] = weakref.WeakKeyDictionary()
_slots_lock = threading.Lock()


def _turn_slots(pool: Any) -> threading.BoundedSemaphore:
    with _slots_lock:
        slots = _slots.get(pool)
        if slots is None:
            raw = os.environ.get(MAX_TURNS_VARIABLE, "").strip()
            if raw and not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 10_000):
                raise StoreError(
                    f"{MAX_TURNS_VARIABLE} must be a whole number from 1 to 10000 (got {raw!r})"
                )
            slots = threading.BoundedSemaphore(int(raw) if raw else DEFAULT_MAX_TURNS)
            _slots[pool] = slots
        return slots


class PostgresSessionLogs:
    """One tenant's spec's session logs in the database (``runtime.sessions.store.SessionLogs``)."""

    def __init__(
        self, pool: ConnectionPool[Any], *, tenant: str, spec: str, now: Clock = utc_now
    ) -> None:
        self.pool = pool
        self.tenant = tenant
        self.spec = spec
        self._now = now
        migrate_once(pool, COMPONENT, SESSION_LOG_MIGRATIONS)
        self._key: bytes | None = None
        # The sessions whose conversation lock this object holds: the lock's connection, and
        # what keeps its appends one at a time (``append`` writes through it).
        self._held: dict[str, tuple[Any, threading.Lock]] = {}
        self._held_lock = threading.Lock()

    def _scope(self, **more: Any) -> dict[str, Any]:
        return {"tenant": self.tenant, "spec": self.spec, **more}

    def key(self) -> bytes:
        """The key sealing this tenant's spec's logs, created on first use."""
        if self._key is None:
            with translated("read the session logs' key"), self.pool.connection() as conn:
                conn.execute(
                    "INSERT INTO session_log_keys (tenant, spec, key) "
                    "VALUES (%(tenant)s, %(spec)s, %(key)s) ON CONFLICT DO NOTHING",
                    self._scope(key=secrets.token_bytes(KEY_BYTES)),
                )
                row = conn.execute(
                    f"SELECT key FROM session_log_keys WHERE {_SCOPE}", self._scope()
                ).fetchone()
            if row is None:
                raise StoreError("the session logs' key could not be created")
            self._key = bytes(row[0])
        return self._key

    def open(self, session_id: str) -> PostgresSessionLog:
        return PostgresSessionLog(self, session_id)

    def events(self, session_id: str) -> Iterator[Event]:
        """The session's host-sealed events in order; a row whose seal fails is skipped, and
        so is one at another number than the one its sealed body holds (a genuine row copied
        or moved within its session is not a second event). Rows verified by an earlier read
        in this process are not fetched again while they are unchanged (``_prefixes``)."""
        name = (self.tenant, self.spec, session_id)
        known = _known_prefix(self.pool, name)
        with translated("read a session log"), self.pool.connection() as conn:
            if known is not None:
                row = conn.execute(_PREFIX, self._scope(session=session_id, upto=known.upto))
                found = row.fetchone()
                if found is None or (int(found[0]), str(found[1])) != known.digest():
                    known = None  # edited, shortened or replaced: read it all again
            rows = conn.execute(
                _ROWS, self._scope(session=session_id, after=known.upto if known else 0)
            ).fetchall()
        if known is None and not rows:
            return iter(())
        key = self.key()
        if known is not None and known.key != key:
            known = None
            with translated("read a session log"), self.pool.connection() as conn:
                rows = conn.execute(_ROWS, self._scope(session=session_id, after=0)).fetchall()
        if known is not None and not rows:
            return iter(known.events)
        events = list(known.events) if known is not None else []
        row_digests = list(known.row_digests) if known is not None else []
        for seq, body_text, mac in rows:
            row_digests.append(_md5(mac + body_text))
            try:
                body = json.loads(body_text)
            except (json.JSONDecodeError, RecursionError):
                continue
            event = verified_event(body, mac, key, session_id)
            if event is not None and event.seq == seq:
                events.append(event)
        if rows:
            prefix = _VerifiedPrefix(key, int(rows[-1][0]), tuple(row_digests), tuple(events))
            _remember_prefix(self.pool, name, prefix)
        return iter(events)

    def exists(self, session_id: str) -> bool:
        with translated("read a session log"), self.pool.connection() as conn:
            row = conn.execute(
                f"SELECT 1 FROM session_log_events WHERE {_SCOPE} AND session = %(session)s "
                "LIMIT 1",
                self._scope(session=session_id),
            ).fetchone()
        return row is not None

    def sessions(self) -> list[str]:
        """Every session with a log, in id order."""
        with translated("list the session logs"), self.pool.connection() as conn:
            rows = conn.execute(
                f"SELECT DISTINCT session FROM session_log_events WHERE {_SCOPE} ORDER BY 1",
                self._scope(),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def summaries(self, limit: int) -> list[tuple[str, int, str]]:
        """(session, bytes of its rows, time of its latest event) of at most ``limit``
        sessions, the latest written first (the time as its rows' sealed bodies state it; a
        body without one counts as oldest)."""
        with translated("list the session logs"), self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT session, sum(octet_length(body) + octet_length(mac)), "
                'coalesce(max(substring(body from \'^\\{"at": "([^"]*)"\')), \'\') '
                f"FROM session_log_events WHERE {_SCOPE} GROUP BY session "
                "ORDER BY 3 DESC, 1 LIMIT %(limit)s",
                self._scope(limit=limit),
            ).fetchall()
        return [(str(row[0]), int(row[1]), str(row[2])) for row in rows]

    def append(self, session_id: str, kind: str, payload: Any) -> Event:
        key = self.key()
        with self._held_lock:
            held = self._held.get(session_id)
        if held is None:
            with translated("append to a session log"), self.pool.connection() as conn:
                return self._append(conn, key, session_id, kind, payload)
        # During a turn the conversation lock's own connection writes: once the server ended
        # that session (and with it the lock, so another worker may run a turn of this
        # conversation), the turn cannot write another event; it fails instead.
        conn, one_at_a_time = held
        with translated("append to a session log"), one_at_a_time:
            return self._append(conn, key, session_id, kind, payload)

    def _append(self, conn: Any, key: bytes, session_id: str, kind: str, payload: Any) -> Event:
        lock = advisory_key(f"specwire.session_log.{self.tenant}.{self.spec}.{session_id}")
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
            row = conn.execute(
                f"SELECT coalesce(max(seq), 0) FROM session_log_events WHERE {_SCOPE} "
                "AND session = %(session)s",
                self._scope(session=session_id),
            ).fetchone()
            seq = (int(row[0]) if row else 0) + 1
            body = event_body(seq, kind, iso(self._now()), payload)
            conn.execute(
                "INSERT INTO session_log_events (tenant, spec, session, seq, kind, body, mac) "
                "VALUES (%(tenant)s, %(spec)s, %(session)s, %(seq)s, %(kind)s, %(body)s, "
                "%(mac)s)",
                self._scope(
                    session=session_id,
                    seq=seq,
                    kind=kind,
                    body=json.dumps(body, ensure_ascii=False, sort_keys=True),
                    mac=seal(key, session_id, body),
                ),
            )
        return Event(seq, kind, body["at"], body["payload"])

    @contextmanager
    def conversation_lock(self, session_id: str, wait_s: float) -> Iterator[None]:
        """Hold the conversation for one turn, across every worker on this database: a
        session-level advisory lock on a connection of its own, waiting up to ``wait_s``."""
        import psycopg

        lock = advisory_key(f"specwire.conversation.{self.tenant}.{self.spec}.{session_id}")
        slots = _turn_slots(self.pool)
        started = time.monotonic()
        if not slots.acquire(timeout=max(0.0, wait_s)):
            raise LockTimeoutError(
                f"conversation {session_id} waited {wait_s:g} s for one of this worker's "
                f"{MAX_TURNS_VARIABLE} turn slots"
            )
        try:
            with translated(f"lock conversation {session_id}"):
                conn = psycopg.connect(_conninfo(self), autocommit=True, **_connect_kwargs(self))
        except BaseException:
            slots.release()
            raise
        try:
            left = max(0.001, wait_s - (time.monotonic() - started))
            try:
                conn.execute("SELECT set_config('lock_timeout', %s, false)", (_ms(left),))
                conn.execute("SELECT pg_advisory_lock(%s)", (lock,))
            except psycopg.errors.LockNotAvailable:
                raise LockTimeoutError(
                    f"conversation {session_id} is busy with another turn (waited {wait_s:g} s)"
                ) from None
            except psycopg.Error as exc:
                raise StoreError(
                    f"could not lock conversation {session_id}: {type(exc).__name__}"
                ) from exc
            with self._held_lock:
                self._held[session_id] = (conn, threading.Lock())
            yield
        finally:
            with self._held_lock:
                if self._held.get(session_id, (None,))[0] is conn:
                    del self._held[session_id]
            # Closing the connection releases the lock (also when this process dies).
            conn.close()
            slots.release()


def _ms(seconds: float) -> str:
    return f"{max(1, int(seconds * 1000))}ms"


def _conninfo(logs: PostgresSessionLogs) -> str:
    conninfo = logs.pool.conninfo
    return conninfo() if callable(conninfo) else conninfo


def _connect_kwargs(logs: PostgresSessionLogs) -> dict[str, Any]:
    kwargs = getattr(logs.pool, "kwargs", None)
    return dict(kwargs) if isinstance(kwargs, dict) else {}


class PostgresSessionLog:
    """The writer of one session's log in the database (``SessionRecorder``)."""

    def __init__(self, logs: PostgresSessionLogs, session_id: str) -> None:
        self.logs = logs
        self._session_id = session_id

    @property
    def session_id(self) -> str:
        return self._session_id

    def append(self, kind: str, payload: Any) -> Event:
        return self.logs.append(self._session_id, kind, payload)

    def events(self) -> Iterator[Event]:
        return self.logs.events(self._session_id)
