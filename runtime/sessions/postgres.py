"""Session logs in PostgreSQL: the file logs' twin for ``memory.state: postgres``.

``session_log_events`` is append-only: one row per event, keyed ``(tenant, spec, session,
seq)``, seq 1..n per session. A row keeps the event's body exactly as sealed (``body``: the JSON
text of ``seq``, ``type``, ``at``, ``payload``) and its ``mac``, sealed as the file logs are
(``runtime.sessions.log.seal``) with a random key per tenant and spec kept in
``session_log_keys`` (created once, race-free; never shown to the agent, which has no database
connection). Readers verify every row's seal and skip one that does not verify, or that sits
at another ``seq`` than its sealed body names, so a row written by anything but the host is
never evidence.

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

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
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
        or moved within its session is not a second event)."""
        with translated("read a session log"), self.pool.connection() as conn:
            rows = conn.execute(
                f"SELECT seq, body, mac FROM session_log_events WHERE {_SCOPE} "
                "AND session = %(session)s ORDER BY seq",
                self._scope(session=session_id),
            ).fetchall()
        if not rows:
            return iter(())
        key = self.key()
        events: list[Event] = []
        for seq, body_text, mac in rows:
            try:
                body = json.loads(body_text)
            except (json.JSONDecodeError, RecursionError):
                continue
            event = verified_event(body, mac, key, session_id)
            if event is not None and event.seq == seq:
                events.append(event)
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

    def append(self, session_id: str, kind: str, payload: Any) -> Event:
        key = self.key()
        lock = advisory_key(f"specwire.session_log.{self.tenant}.{self.spec}.{session_id}")
        with (
            translated("append to a session log"),
            self.pool.connection() as conn,
            conn.transaction(),
        ):
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
        with translated(f"lock conversation {session_id}"):
            conn = psycopg.connect(_conninfo(self), autocommit=True, **_connect_kwargs(self))
        try:
            try:
                conn.execute("SELECT set_config('lock_timeout', %s, false)", (_ms(wait_s),))
                conn.execute("SELECT pg_advisory_lock(%s)", (lock,))
            except psycopg.errors.LockNotAvailable:
                raise LockTimeoutError(
                    f"conversation {session_id} is busy with another turn (waited {wait_s:g} s)"
                ) from None
            except psycopg.Error as exc:
                raise StoreError(
                    f"could not lock conversation {session_id}: {type(exc).__name__}"
                ) from exc
            yield
        finally:
            # Closing the connection releases the lock (also when this process dies).
            conn.close()


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
