"""``FactStore``: episodic facts in one SQLite file (WAL, FTS5), never silently deleted.

Durability: ``journal_mode=WAL`` with ``synchronous=FULL``. Writes are rare (a tool call or an
end-of-turn capture) and each one is acknowledged to the model ("remembered (mem_…)"), so the
WAL is fsynced at every commit: an acknowledged fact survives a power loss, not only a process
crash (``NORMAL`` would only guarantee the latter). The cost is one fsync per write.

Ownership: the file at the path is checked to be a regular file and a fact store of ours
(``runtime.facts.ownership``: SQLite's ``application_id``, or the schema of an earlier version)
before SQLite opens it and before any setting (WAL…) changes; anything else is refused with its
bytes untouched. A new file is stamped with the id before it is switched to WAL.

Lazy creation: opening a store whose file does not exist creates nothing (so ``agent.py --help``
or a session that never writes leaves no trace). Reads of a missing database answer as an empty
store, writes that only change existing facts (forget, supersede, sweep) find nothing to change,
and the first write that adds a fact creates the parent directories (0700) and the file (0600).
A file created meanwhile by another process is picked up by the next read or write.

Concurrency: every write is one ``BEGIN IMMEDIATE`` transaction, so a writer takes the write lock
before it reads what it is about to change, and waits up to ``BUSY_TIMEOUT_MS`` for another
process instead of failing. Reads are single statements (a consistent WAL snapshot). Within a
process one connection is shared by threads under a lock.

Status is materialized at read time, in this order: superseded (``superseded_by`` or a superseded
tombstone), forgotten (a forgotten tombstone), expired (an expired tombstone or
``now >= expires_at``), live.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any

from runtime.errors import StoreError
from runtime.events import Clock, utc_now
from runtime.facts import ranking
from runtime.facts.model import (
    MAX_EVIDENCE,
    MAX_REASON_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TEXT_CHARS,
    Fact,
    FactStatus,
    InvalidRequestError,
    Provenance,
    RecallHit,
    SweepResult,
    Tombstone,
    TombstoneKind,
    from_ms,
    to_ms,
)
from runtime.facts.ownership import check_ownership, claim_new, is_regular_identity
from runtime.facts.schema import SCHEMA_VERSION, migrate, schema_version
from runtime.facts.text import (
    MAX_QUERY_TERMS,
    document_terms,
    match_expression,
    normalize_text,
    query_terms,
)
from runtime.ids import MEMORY_ID_RE, new_memory_id

BUSY_TIMEOUT_MS = 5000
SETUP_RETRY_S = 0.01

_COLUMNS = (
    "f.id, f.text, f.tags, f.created_at, f.expires_at, f.superseded_by, f.session_id, f.evidence"
)
_TOMBSTONE = "t.kind AS t_kind, t.at AS t_at, t.reason AS t_reason, t.superseded_by AS t_by"
_FROM = "facts f LEFT JOIN tombstones t ON t.target = f.id"
_LIVE = (
    "f.superseded_by IS NULL AND t.target IS NULL AND (f.expires_at IS NULL OR f.expires_at > :now)"
)
_STATUS = """CASE
    WHEN f.superseded_by IS NOT NULL OR t.kind = 'superseded' THEN 'superseded'
    WHEN t.kind = 'forgotten' THEN 'forgotten'
    WHEN t.kind = 'expired' OR f.expires_at <= :now THEN 'expired'
    ELSE 'live' END"""
_PROVEN = "(json_array_length(f.evidence) > 0)"
_LEXICAL = f"""
SELECT {_COLUMNS}, bm25(facts_fts) AS raw, {_PROVEN} AS proven
FROM facts_fts JOIN facts f ON f.seq = facts_fts.rowid LEFT JOIN tombstones t ON t.target = f.id
WHERE facts_fts MATCH :match AND {_LIVE}
ORDER BY raw * (CASE WHEN {_PROVEN} THEN :factor ELSE 1.0 END), f.seq
LIMIT :limit
"""


class FactStore:
    """Open with ``FactStore.open(path)``; usable as a context manager."""

    def __init__(self, path: Path, now: Clock) -> None:
        self._path = path
        self._now = now
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # (st_dev, st_ino) of the file the connection opened; None until connected.
        self._identity: tuple[int, int] | None = None
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, now: Clock = utc_now) -> FactStore:
        """Open the store at ``path``: an existing file is opened and migrated now.

        A missing file is not created (see "Lazy creation" above); opening fails early, creating
        nothing, when it could never be created (an ancestor is a file or is not writable).
        """
        path = Path(path)
        store = cls(path, now)
        if _file_exists(path):
            with store._lock:
                store._connection(create=False)
        else:
            problem = _creation_problem(path)
            if problem is not None:
                raise StoreError(f"cannot create the fact store at {path}: {problem}")
        return store

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is not None:
                with suppress(sqlite3.Error):
                    conn.execute("PRAGMA optimize")
                conn.close()

    def __enter__(self) -> FactStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self._path

    @property
    def clock(self) -> Clock:
        return self._now

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def schema_version(self) -> int:
        """The database's schema version; 0 while no database file exists."""
        with self._reading("read the schema version") as conn:
            return 0 if conn is None else schema_version(conn)

    # -- writes ----------------------------------------------------------------------------

    def remember(
        self,
        text: str,
        tags: Sequence[str] = (),
        *,
        ttl_ms: int | None = None,
        provenance: Provenance | None = None,
    ) -> Fact:
        new = _NewFact.build(text, tags, ttl_ms, provenance)
        with self._writing("remember") as conn:
            return self._insert(conn, new, self._now_ms())

    def remember_if_new(
        self,
        text: str,
        tags: Sequence[str] = (),
        *,
        ttl_ms: int | None = None,
        provenance: Provenance | None = None,
    ) -> tuple[Fact, bool]:
        """Like ``remember``, unless a live fact has the same normalized text: then that fact.

        The check and the insert are one transaction, so concurrent captures never duplicate.
        Returns ``(fact, created)``.
        """
        new = _NewFact.build(text, tags, ttl_ms, provenance)
        with self._writing("remember") as conn:
            now = self._now_ms()
            existing = self._same_text(conn, new.norm_text, now)
            if existing is not None:
                return existing, False
            return self._insert(conn, new, now), True

    def supersede(
        self,
        old_id: str,
        text: str,
        tags: Sequence[str] = (),
        *,
        ttl_ms: int | None = None,
        provenance: Provenance | None = None,
        reason: str | None = None,
    ) -> Fact:
        """Write a replacement and tombstone the original, in one transaction."""
        _require_id(old_id)
        reason = _check_reason(reason)
        new = _NewFact.build(text, tags, ttl_ms, provenance)
        with self._updating("supersede") as conn:
            now = self._now_ms()
            status = None if conn is None else self._status(conn, old_id, now)
            if status is None:
                raise StoreError(f"no memory with id {old_id}")
            if status != "live":
                raise StoreError(f"cannot supersede {old_id}: it is {status}, not live")
            assert conn is not None
            replacement = self._insert(conn, new, now)
            conn.execute(
                "UPDATE facts SET superseded_by = ? WHERE id = ?", (replacement.id, old_id)
            )
            self._tombstone(conn, "superseded", old_id, now, reason, replacement.id)
            return replacement

    def forget(self, id_or_query: str, *, reason: str | None = None) -> list[Fact]:
        """Forget one id (an id-shaped argument never falls back to text) or every live fact
        that matches every term of the query (see ``forget_matching``).

        Returns the forgotten facts (best match first for a query); ``[]`` when nothing is live.
        """
        selector = id_or_query.strip()
        if MEMORY_ID_RE.match(selector):
            return self.forget_id(selector, reason=reason)
        return self.forget_matching(selector, reason=reason)

    def forget_id(self, fact_id: str, *, reason: str | None = None) -> list[Fact]:
        """Forget that fact only; ``[]`` when it is unknown or no longer live."""
        _require_id(fact_id)
        reason = _check_reason(reason)
        with self._updating("forget") as conn:
            now = self._now_ms()
            fact = None if conn is None else self._live_by_id(conn, fact_id, now)
            if conn is None or fact is None:
                return []
            self._tombstone(conn, "forgotten", fact.id, now, reason, None)
            return [fact]

    def forget_matching(
        self, query: str, *, reason: str | None = None, at_most: int | None = None
    ) -> list[Fact]:
        """Forget every live fact that matches **every** term of the query, as text, never as an id.

        AND semantics, unlike recall's OR: forgetting "billing plan" must not take "our project
        plan is due Friday" with it. Stop words are ignored (a query of stop words only forgets
        nothing), and a query with more than ``MAX_QUERY_TERMS`` distinct terms is refused rather
        than cut (dropping a term would widen what is forgotten). With ``at_most``, a query
        matching more facts than that forgets nothing and is refused.
        """
        reason = _check_reason(reason)
        terms = query_terms(query, limit=None)
        if len(terms) > MAX_QUERY_TERMS:
            raise InvalidRequestError(
                f"the forget query has too many distinct words ({len(terms)}; at most "
                f"{MAX_QUERY_TERMS})"
            )
        match = match_expression(terms, every=True)
        if match is None:
            return []
        with self._updating("forget") as conn:
            if conn is None:
                return []
            now = self._now_ms()
            facts = [hit.fact for hit in self._lexical(conn, match, now, limit=-1)]
            if at_most is not None and len(facts) > at_most:
                raise InvalidRequestError(
                    f"that query matches {len(facts)} memories, more than {at_most} at once: "
                    "use more words or forget by id. Nothing was forgotten."
                )
            for fact in facts:
                self._tombstone(conn, "forgotten", fact.id, now, reason, None)
            return facts

    def sweep(self) -> SweepResult:
        """Tombstone every expired fact that has no tombstone yet (idempotent)."""
        with self._updating("sweep") as conn:
            if conn is None:
                return SweepResult(swept=0, live=0)
            now = self._now_ms()
            cursor = conn.execute(
                f"""INSERT INTO tombstones (kind, target, at)
                SELECT 'expired', f.id, :now FROM {_FROM}
                WHERE t.target IS NULL AND f.superseded_by IS NULL
                AND f.expires_at IS NOT NULL AND f.expires_at <= :now
                ORDER BY f.seq""",
                {"now": now},
            )
            swept = cursor.rowcount
            return SweepResult(swept=swept, live=self._count_live(conn, now))

    # -- reads -----------------------------------------------------------------------------

    def recall(self, query: str, k: int = 5) -> list[RecallHit]:
        """The ``k`` best live matches by BM25 (OR over non-stop-word tokens), best first.

        Lexical only for now; a hybrid ranker would fuse this list with a cosine ranking here.
        """
        if k < 1:
            raise InvalidRequestError(f"k must be at least 1 (got {k})")
        match = match_expression(query_terms(query))
        if match is None:
            return []
        with self._reading("recall") as conn:
            return [] if conn is None else self._lexical(conn, match, self._now_ms(), limit=k)

    def get(self, fact_id: str) -> FactStatus | None:
        with self._reading("read a memory") as conn:
            if conn is None:
                return None
            row = conn.execute(
                f"SELECT {_COLUMNS}, {_TOMBSTONE}, {_STATUS} AS status FROM {_FROM} "
                "WHERE f.id = :id",
                {"id": fact_id, "now": self._now_ms()},
            ).fetchone()
        return None if row is None else _fact_status(row)

    def list_facts(self) -> list[FactStatus]:
        """Every fact ever written, oldest first, with its status."""
        with self._reading("list memories") as conn:
            if conn is None:
                return []
            rows = conn.execute(
                f"SELECT {_COLUMNS}, {_TOMBSTONE}, {_STATUS} AS status FROM {_FROM} ORDER BY f.seq",
                {"now": self._now_ms()},
            ).fetchall()
        return [_fact_status(row) for row in rows]

    def size(self) -> int:
        with self._reading("count memories") as conn:
            return 0 if conn is None else self._count_live(conn, self._now_ms())

    def find_same_text(self, text: str) -> Fact | None:
        """The oldest live fact whose normalized text equals ``text``'s (lowercase, spaces)."""
        norm = normalize_text(text)
        if not norm:
            return None
        with self._reading("look up a memory") as conn:
            return None if conn is None else self._same_text(conn, norm, self._now_ms())

    def health_problem(self, *, timeout_s: float = 0.2) -> str | None:
        """Why the store cannot serve right now, or None. Never blocks past ``timeout_s``.

        A store whose file does not exist yet is healthy when the file could be created.
        """
        if not self._lock.acquire(timeout=timeout_s):
            return "health check timeout"
        try:
            if self._closed:
                return "the fact store is closed"
            conn = self._conn
            if conn is None and not _file_exists(self._path):
                problem = _creation_problem(self._path)
                return None if problem is None else f"the fact store cannot be created: {problem}"
            if conn is not None and self._identity is not None:
                problem = _identity_problem(self._path, self._identity)
                if problem is not None:
                    return problem
            if not os.access(self._path.parent, os.W_OK | os.X_OK):
                return "the fact store directory is not writable"
            if not os.access(self._path, os.R_OK | os.W_OK):
                return "the fact store file is not readable and writable"
            if conn is not None:
                try:
                    conn.execute("SELECT count(*) FROM facts WHERE seq < 0").fetchone()
                except sqlite3.Error as exc:
                    return f"the fact store cannot be read: {exc}"
            return None
        finally:
            self._lock.release()

    # -- internals -------------------------------------------------------------------------

    def _now_ms(self) -> int:
        return to_ms(self._now())

    def _connection(self, *, create: bool) -> sqlite3.Connection | None:
        """The open connection (call under the lock), connecting on first use.

        Without ``create``, a missing database file gives None and nothing is created.
        """
        if self._closed:
            raise StoreError(f"the fact store is closed ({self._path.name})")
        if self._conn is not None:
            return self._conn
        if not create and not _file_exists(self._path):
            return None
        conn = _connect(self._path, create=create)
        try:
            identity = _identity(self._path)
        except OSError as exc:
            conn.close()
            raise StoreError(f"cannot open the fact store at {self._path}: {exc.strerror}") from exc
        self._conn, self._identity = conn, identity
        return conn

    @contextmanager
    def _reading(self, action: str) -> Iterator[sqlite3.Connection | None]:
        """A read; None when no database file exists (the caller answers as an empty store)."""
        with self._lock:
            conn = self._connection(create=False)
            try:
                yield conn
            except sqlite3.Error as exc:
                raise _store_error(action, exc) from exc

    @contextmanager
    def _writing(self, action: str) -> Iterator[sqlite3.Connection]:
        """A write that adds facts: creates the database file if it does not exist yet."""
        with self._lock:
            conn = self._connection(create=True)
            assert conn is not None
            with self._transaction(conn, action) as tx:
                yield tx

    @contextmanager
    def _updating(self, action: str) -> Iterator[sqlite3.Connection | None]:
        """A write that only changes existing facts: None, creating nothing, without a file."""
        with self._lock:
            conn = self._connection(create=False)
            if conn is None:
                yield None
                return
            with self._transaction(conn, action) as tx:
                yield tx

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection, action: str) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, refused when the file was removed or replaced."""
        if self._identity is not None:
            problem = _identity_problem(self._path, self._identity)
            if problem is not None:
                raise StoreError(f"cannot {action}: {problem}; reopen the store")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _store_error(action, exc) from exc
        try:
            yield conn
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            raise _store_error(action, exc) from exc
        except BaseException:
            _rollback(conn)
            raise

    def _insert(self, conn: sqlite3.Connection, new: _NewFact, now: int) -> Fact:
        expires = None if new.ttl_ms is None else now + new.ttl_ms
        for attempt in range(3):
            fact_id = new_memory_id()
            try:
                conn.execute(
                    """INSERT INTO facts (id, text, norm_text, terms, tags, created_at,
                    expires_at, session_id, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        fact_id,
                        new.text,
                        new.norm_text,
                        document_terms(new.text, new.tags),
                        json.dumps(list(new.tags), ensure_ascii=False),
                        now,
                        expires,
                        new.provenance.session_id,
                        json.dumps(list(new.provenance.evidence), ensure_ascii=False),
                    ),
                )
            except sqlite3.IntegrityError as exc:
                if "facts.id" in str(exc) and attempt < 2:
                    continue  # a 64-bit id collision: draw again
                raise
            return Fact(
                id=fact_id,
                text=new.text,
                tags=new.tags,
                created_at=from_ms(now),
                expires_at=None if expires is None else from_ms(expires),
                superseded_by=None,
                provenance=new.provenance,
            )
        raise AssertionError("unreachable")

    def _tombstone(
        self,
        conn: sqlite3.Connection,
        kind: TombstoneKind,
        target: str,
        now: int,
        reason: str | None,
        superseded_by: str | None,
    ) -> None:
        conn.execute(
            "INSERT INTO tombstones (kind, target, at, reason, superseded_by) "
            "VALUES (?, ?, ?, ?, ?)",
            (kind, target, now, reason, superseded_by),
        )

    def _lexical(
        self, conn: sqlite3.Connection, match: str, now: int, *, limit: int
    ) -> list[RecallHit]:
        rows = conn.execute(
            _LEXICAL,
            {"match": match, "now": now, "factor": ranking.EVIDENCE_FACTOR, "limit": limit},
        ).fetchall()
        return [
            RecallHit(_fact(row), ranking.lexical_score(row["raw"], bool(row["proven"])))
            for row in rows
        ]

    def _status(self, conn: sqlite3.Connection, fact_id: str, now: int) -> str | None:
        row = conn.execute(
            f"SELECT {_STATUS} AS status FROM {_FROM} WHERE f.id = :id",
            {"id": fact_id, "now": now},
        ).fetchone()
        return None if row is None else str(row["status"])

    def _live_by_id(self, conn: sqlite3.Connection, fact_id: str, now: int) -> Fact | None:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM {_FROM} WHERE f.id = :id AND {_LIVE}",
            {"id": fact_id, "now": now},
        ).fetchone()
        return None if row is None else _fact(row)

    def _same_text(self, conn: sqlite3.Connection, norm: str, now: int) -> Fact | None:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM {_FROM} WHERE f.norm_text = :norm AND {_LIVE} "
            "ORDER BY f.seq LIMIT 1",
            {"norm": norm, "now": now},
        ).fetchone()
        return None if row is None else _fact(row)

    def _count_live(self, conn: sqlite3.Connection, now: int) -> int:
        row = conn.execute(f"SELECT count(*) FROM {_FROM} WHERE {_LIVE}", {"now": now}).fetchone()
        return int(row[0])


class _NewFact:
    """A validated fact about to be written."""

    __slots__ = ("norm_text", "provenance", "tags", "text", "ttl_ms")

    def __init__(
        self, text: str, tags: tuple[str, ...], ttl_ms: int | None, provenance: Provenance
    ) -> None:
        self.text = text
        self.norm_text = normalize_text(text)
        self.tags = tags
        self.ttl_ms = ttl_ms
        self.provenance = provenance

    @classmethod
    def build(
        cls,
        text: str,
        tags: Sequence[str],
        ttl_ms: int | None,
        provenance: Provenance | None,
    ) -> _NewFact:
        return cls(
            _check_text(text),
            _check_tags(tags),
            _check_ttl(ttl_ms),
            _check_provenance(provenance or Provenance()),
        )


def _check_text(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequestError("a memory needs non-empty text")
    text = text.strip()
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidRequestError(
            f"memory text is too long ({len(text)} characters; at most {MAX_TEXT_CHARS})"
        )
    return text


def _check_tags(tags: Sequence[str]) -> tuple[str, ...]:
    if isinstance(tags, str):
        raise InvalidRequestError("tags must be a list of strings, not one string")
    cleaned: dict[str, None] = {}
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            raise InvalidRequestError("every tag must be a non-empty string")
        tag = tag.strip()
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidRequestError(f"tag is too long (at most {MAX_TAG_CHARS} characters)")
        cleaned[tag] = None
    if len(cleaned) > MAX_TAGS:
        raise InvalidRequestError(f"too many tags ({len(cleaned)}; at most {MAX_TAGS})")
    return tuple(cleaned)


def _check_ttl(ttl_ms: int | None) -> int | None:
    if ttl_ms is None:
        return None
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms <= 0:
        raise InvalidRequestError(f"ttl_ms must be a positive whole number (got {ttl_ms!r})")
    return ttl_ms


def _check_provenance(provenance: Provenance) -> Provenance:
    session_id = provenance.session_id
    if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
        raise InvalidRequestError("provenance.session_id must be a non-empty string")
    evidence = tuple(dict.fromkeys(provenance.evidence))
    if any(not isinstance(ref, str) or not ref.strip() for ref in evidence):
        raise InvalidRequestError("provenance.evidence must hold non-empty tool-use ids")
    if len(evidence) > MAX_EVIDENCE:
        raise InvalidRequestError(f"too much evidence ({len(evidence)}; at most {MAX_EVIDENCE})")
    return Provenance(session_id, evidence)


def _check_reason(reason: str | None) -> str | None:
    if reason is None:
        return None
    reason = reason.strip()
    if not reason:
        return None
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidRequestError(f"reason is too long (at most {MAX_REASON_CHARS} characters)")
    return reason


def _require_id(fact_id: str) -> None:
    if not isinstance(fact_id, str) or not MEMORY_ID_RE.match(fact_id):
        raise InvalidRequestError(f"not a memory id: {fact_id!r} (expected mem_<16 hex>)")


def _fact(row: sqlite3.Row) -> Fact:
    expires = row["expires_at"]
    return Fact(
        id=row["id"],
        text=row["text"],
        tags=tuple(_json_strings(row["tags"])),
        created_at=from_ms(row["created_at"]),
        expires_at=None if expires is None else from_ms(expires),
        superseded_by=row["superseded_by"],
        provenance=Provenance(row["session_id"], tuple(_json_strings(row["evidence"]))),
    )


def _fact_status(row: sqlite3.Row) -> FactStatus:
    tombstone = None
    if row["t_kind"] is not None:
        tombstone = Tombstone(
            kind=row["t_kind"],
            at=from_ms(row["t_at"]),
            reason=row["t_reason"],
            superseded_by=row["t_by"],
        )
    return FactStatus(_fact(row), row["status"], tombstone)


def _json_strings(raw: Any) -> list[str]:
    value = json.loads(raw) if isinstance(raw, str) else []
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """Connect (creating the file, mode 0600, and its parents when ``create``) and migrate.

    Setting up a brand-new file races with other processes doing the same: switching to WAL
    needs an exclusive lock, and SQLite answers "database is locked" at once, without waiting,
    when waiting could deadlock. Such a setup is retried until ``BUSY_TIMEOUT_MS`` has passed.
    """
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _create_private(path)
        except OSError as exc:
            raise StoreError(f"cannot create the fact store at {path}: {exc.strerror}") from exc
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return _connect_once(path)
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise StoreError(f"cannot open the fact store at {path}: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the fact store at {path}: {exc}") from exc
        time.sleep(SETUP_RETRY_S)


def _connect_once(path: Path) -> sqlite3.Connection:
    # Whose file it is, decided before SQLite opens it and before any setting changes.
    ownership = check_ownership(path, max_version=SCHEMA_VERSION)
    conn = sqlite3.connect(
        str(path),
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        if not is_regular_identity(path, ownership.identity):
            raise StoreError(f"the fact store at {path} was replaced while it was being opened")
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if ownership.verdict == "new":
            claim_new(conn, path)
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"the fact store at {path} cannot use WAL (got {mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _is_busy(exc: sqlite3.Error) -> bool:
    message = str(exc)
    return "locked" in message or "busy" in message


def _file_exists(path: Path) -> bool:
    """Whether something is at ``path``; an error other than "missing" counts as yes, so that
    connecting reports it."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def _creation_problem(path: Path) -> str | None:
    """Why the file at ``path`` could not be created now, or None. Creates nothing.

    The nearest existing ancestor must be a directory this process may write into.
    """
    for ancestor in (path.parent, *path.parent.parents):
        try:
            mode = os.stat(ancestor).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            return f"{ancestor} cannot be checked ({exc.strerror})"
        if not stat.S_ISDIR(mode):
            return f"{ancestor} is not a directory"
        if not os.access(ancestor, os.W_OK | os.X_OK):
            return f"{ancestor} is not writable"
        return None
    return None


def _create_private(path: Path) -> None:
    """Create the database file with mode 0600 if it does not exist (never widen a mode)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _identity(path: Path) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino


def _identity_problem(path: Path, identity: tuple[int, int]) -> str | None:
    """Writes to an unlinked SQLite file succeed and vanish; refuse them instead."""
    try:
        current = _identity(path)
    except FileNotFoundError:
        return "the fact store file was removed while open"
    except OSError as exc:
        return f"the fact store file cannot be checked ({exc.strerror})"
    if current != identity:
        return "the fact store file was replaced while open"
    return None


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _store_error(action: str, exc: sqlite3.Error) -> StoreError:
    message = str(exc)
    if _is_busy(exc):
        return StoreError(
            f"cannot {action}: the fact store is busy (another process holds its write lock); "
            "try again"
        )
    return StoreError(f"cannot {action}: {message}")
