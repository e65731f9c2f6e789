"""The fact store's SQL statements and the mapping of their rows to value types.

Every function takes an open connection and the current time in epoch milliseconds; none opens,
commits or validates anything (``lifecycle`` owns the connection and its transactions,
``validation`` the input).

Status is materialized at read time, in this order: superseded (``superseded_by`` or a superseded
tombstone), forgotten (a forgotten tombstone), expired (an expired tombstone or
``now >= expires_at``), live.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.core.scopes import AGENT, CREW, ScopeKey
from specwire.runtime.facts.lexical import ranking
from specwire.runtime.facts.model import (
    Fact,
    FactStatus,
    Provenance,
    RecallHit,
    Tombstone,
    TombstoneKind,
    from_ms,
)
from specwire.runtime.facts.text import document_terms
from specwire.runtime.facts.validation import NewFact

_COLUMNS = (
    "f.id, f.text, f.tags, f.created_at, f.expires_at, f.superseded_by, f.session_id, f.evidence, "
    "f.scope, f.subject, f.fact_key, f.tier"
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
WHERE facts_fts MATCH :match AND {_LIVE} AND {{where}}
ORDER BY raw * (CASE WHEN {_PROVEN} THEN :factor ELSE 1.0 END), f.seq
LIMIT :limit
"""
_SWEEP = f"""INSERT INTO tombstones (kind, target, at)
SELECT 'expired', f.id, :now FROM {_FROM}
WHERE t.target IS NULL AND f.superseded_by IS NULL
AND f.expires_at IS NOT NULL AND f.expires_at <= :now
ORDER BY f.seq"""

# -- writes --------------------------------------------------------------------------------


_INSERT = """INSERT INTO facts (id, text, norm_text, terms, tags, created_at, expires_at,
session_id, evidence, scope, subject, fact_key, tier)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


def scope_filter(
    visible: Sequence[ScopeKey] | None, tiers: Sequence[str] | None = ()
) -> tuple[str, dict[str, object]]:
    """A condition on ``f`` and its named parameters: the fact's scope key is one of
    ``visible`` (None: any) and its tier one of ``tiers`` (empty: plain facts, without a tier;
    None: any)."""
    parts: list[str] = []
    params: dict[str, object] = {}
    if visible is not None:
        keys = []
        for n, key in enumerate(dict.fromkeys(visible)):
            params[f"scope{n}"], params[f"subject{n}"] = key.scope, key.subject
            keys.append(f"(f.scope = :scope{n} AND f.subject IS :subject{n})")
        parts.append("(" + " OR ".join(keys or ["0"]) + ")")
    if tiers is not None:
        if not tiers:
            parts.append("f.tier IS NULL")
        else:
            marks = []
            for n, tier in enumerate(dict.fromkeys(tiers)):
                params[f"tier{n}"] = tier
                marks.append(f":tier{n}")
            parts.append(f"f.tier IN ({', '.join(marks)})")
    return (" AND ".join(parts) or "1"), params


def insert(conn: sqlite3.Connection, new: NewFact, now: int) -> Fact:
    """Write a new fact under a fresh id (drawn again on the rare 64-bit collision)."""
    for attempt in range(3):
        fact_id = new_memory_id()
        try:
            conn.execute(_INSERT, _row(fact_id, new, now))
        except sqlite3.IntegrityError as exc:
            if "facts.id" in str(exc) and attempt < 2:
                continue
            raise
        return _written(fact_id, new, now, from_ms(now))
    raise AssertionError("unreachable")


def insert_many(conn: sqlite3.Connection, news: Sequence[NewFact], now: int) -> list[Fact]:
    """Write new facts, in order, under fresh ids (a row whose id is taken, the rare 64-bit
    collision, is written again under a new one). Call inside a transaction: a row that fails
    otherwise leaves the rows before it written, and the caller's transaction rolls back.

    No savepoint around the rows: SQLite keeps a savepoint's pages in a sub-journal, which cost
    a batch of 500 about a fifth of its time. A collision is found from the row ``executemany``
    was writing when it failed (it takes its rows one at a time).
    """
    if len(news) == 1:
        return [insert(conn, news[0], now)]
    ids = [new_memory_id() for _ in news]
    start = 0
    redrawn: dict[int, int] = {}
    while start < len(news):
        at = [start]
        try:
            conn.executemany(_INSERT, _rows_from(ids, news, now, at))
        except sqlite3.IntegrityError as exc:
            failed = at[0]
            if "facts.id" not in str(exc) or redrawn.get(failed, 0) >= 2:
                raise
            if not _written_before(conn, ids[start:failed]):
                raise  # not where we think it failed: the caller's transaction rolls back
            redrawn[failed] = redrawn.get(failed, 0) + 1
            ids[failed] = new_memory_id()
            start = failed
            continue
        break
    created = from_ms(now)
    return [_written(fact_id, new, now, created) for fact_id, new in zip(ids, news, strict=True)]


def _rows_from(
    ids: Sequence[str], news: Sequence[NewFact], now: int, at: list[int]
) -> Iterator[tuple[object, ...]]:
    """The rows from ``at[0]`` on, ``at[0]`` following the row handed out last."""
    for index in range(at[0], len(news)):
        at[0] = index
        yield _row(ids[index], news[index], now)


def _written_before(conn: sqlite3.Connection, ids: Sequence[str]) -> bool:
    """Whether every id of ``ids`` (rows just written) is stored."""
    if not ids:
        return True
    found = conn.execute(
        "SELECT count(*) FROM facts WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(ids)),),
    ).fetchone()[0]
    return int(found) == len(ids)


def _written(fact_id: str, new: NewFact, now: int, created: datetime) -> Fact:
    """The fact ``_row(fact_id, new, now)`` stored."""
    return Fact(
        id=fact_id,
        text=new.text,
        tags=new.tags,
        created_at=created,
        expires_at=None if new.ttl_ms is None else from_ms(now + new.ttl_ms),
        superseded_by=None,
        provenance=new.provenance,
        scope=new.scope,
        key=new.key,
        tier=new.tier,
    )


def insert_with_id(conn: sqlite3.Connection, fact_id: str, new: NewFact, now: int) -> None:
    """Write a new fact under a given id (a released quarantined write keeps its id)."""
    conn.execute(_INSERT, _row(fact_id, new, now))


def _row(fact_id: str, new: NewFact, now: int) -> tuple[object, ...]:
    return (
        fact_id,
        new.text,
        new.norm_text,
        document_terms(new.text, new.tags),
        _json_list(new.tags),
        now,
        None if new.ttl_ms is None else now + new.ttl_ms,
        new.provenance.session_id,
        _json_list(new.provenance.evidence),
        new.scope.scope,
        new.scope.subject,
        new.key,
        new.tier,
    )


def _json_list(items: tuple[str, ...]) -> str:
    """``json.dumps(list(items), ensure_ascii=False)``, without the encoder for plain strings."""
    if not items:
        return "[]"
    if all(item.isascii() and item.isprintable() and _PLAIN.isdisjoint(item) for item in items):
        return '["' + '", "'.join(items) + '"]'
    return json.dumps(list(items), ensure_ascii=False)


_PLAIN = frozenset('"\\')


def mark_superseded(conn: sqlite3.Connection, old_id: str, replacement_id: str) -> None:
    conn.execute("UPDATE facts SET superseded_by = ? WHERE id = ?", (replacement_id, old_id))


UPDATED: str = "updated"  # the reason on an edited fact's old version
_KEPT = (
    "text, norm_text, terms, tags, created_at, expires_at, session_id, evidence, scope, subject, "
    "fact_key, tier"
)
_KEPT_MARKS = ", ".join("?" for _ in _KEPT.split(","))


def edit_live(conn: sqlite3.Connection, fact_id: str, new: NewFact, now: int) -> str:
    """Edit live fact ``fact_id`` to ``new``'s text and tags in place (schema version 6): its
    old version is written back under its old ``seq`` as a fact of its own (a new id, the same
    creation time, scope and provenance), superseded by ``fact_id`` with reason ``updated``, and
    the edited fact moves to a new, higher ``seq``. Returns the old version's id. Call inside a
    write transaction, on a live plain fact."""
    old = conn.execute(f"SELECT seq, {_KEPT} FROM facts WHERE id = ?", (fact_id,)).fetchone()
    (top,) = conn.execute(
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'facts'), 0), "
        "(SELECT max(seq) FROM facts))"
    ).fetchone()
    new_seq = int(top) + 1
    # The old seq's vectors dangle between the move and the old version's insert.
    conn.execute("PRAGMA defer_foreign_keys = ON")
    conn.execute(
        "UPDATE facts SET seq = ?, text = ?, norm_text = ?, terms = ?, tags = ? WHERE id = ?",
        (
            new_seq,
            new.text,
            new.norm_text,
            document_terms(new.text, new.tags),
            _json_list(new.tags),
            fact_id,
        ),
    )
    conn.execute(
        "UPDATE sqlite_sequence SET seq = ? WHERE name = 'facts' AND seq < ?", (new_seq, new_seq)
    )
    for attempt in range(3):
        old_id = new_memory_id()
        try:
            conn.execute(
                f"INSERT INTO facts (seq, id, superseded_by, {_KEPT}) "
                f"VALUES (?, ?, ?, {_KEPT_MARKS})",
                (old[0], old_id, fact_id, *tuple(old)[1:]),
            )
        except sqlite3.IntegrityError as exc:
            if "facts.id" in str(exc) and attempt < 2:
                continue
            raise
        break
    tombstone(conn, "superseded", old_id, now, UPDATED, fact_id)
    return old_id


def tombstone(
    conn: sqlite3.Connection,
    kind: TombstoneKind,
    target: str,
    now: int,
    reason: str | None,
    superseded_by: str | None,
) -> None:
    conn.execute(
        "INSERT INTO tombstones (kind, target, at, reason, superseded_by) VALUES (?, ?, ?, ?, ?)",
        (kind, target, now, reason, superseded_by),
    )


def sweep_expired(conn: sqlite3.Connection, now: int) -> int:
    """Tombstone every expired fact that has no tombstone yet; returns how many."""
    return conn.execute(_SWEEP, {"now": now}).rowcount


# -- reads ---------------------------------------------------------------------------------


def lexical(
    conn: sqlite3.Connection,
    match: str,
    now: int,
    *,
    limit: int,
    visible: Sequence[ScopeKey] | None = None,
    tiers: Sequence[str] | None = (),
) -> list[RecallHit]:
    """Live facts matching the FTS5 expression, best first (``limit`` -1: all of them), among
    those ``scope_filter(visible, tiers)`` admits."""
    where, params = scope_filter(visible, tiers)
    rows = conn.execute(
        _LEXICAL.format(where=where),
        {
            "match": match,
            "now": now,
            "factor": ranking.EVIDENCE_FACTOR,
            "limit": limit,
            **params,
        },
    ).fetchall()
    return [
        RecallHit(_fact(row), ranking.lexical_score(row["raw"], bool(row["proven"])))
        for row in rows
    ]


def live_hits_by_seq(
    conn: sqlite3.Connection, ranked: Sequence[tuple[int, float]], now: int
) -> list[RecallHit]:
    """The live facts among the ranked ``(seq, score)`` pairs, as hits in the given order."""
    rows = live_rows_by_seq(conn, _COLUMNS, [seq for seq, _ in ranked], now)
    by_seq = {int(row["seq"]): row for row in rows}
    return [RecallHit(_fact(by_seq[seq]), score) for seq, score in ranked if seq in by_seq]


def live_proven(conn: sqlite3.Connection, seqs: Sequence[int], now: int) -> dict[int, bool]:
    """Of ``seqs``, the live ones, each with whether it is backed by evidence (no row decoded)."""
    rows = live_rows_by_seq(conn, f"{_PROVEN} AS proven", seqs, now)
    return {int(row["seq"]): bool(row["proven"]) for row in rows}


def live_rows_by_seq(
    conn: sqlite3.Connection, columns: str, seqs: Sequence[int], now: int
) -> list[sqlite3.Row]:
    """``seq`` and ``columns`` of the live facts among ``seqs`` (any order)."""
    if not seqs:
        return []
    marks = ", ".join("?" * len(seqs))
    rows: list[sqlite3.Row] = conn.execute(
        f"SELECT f.seq AS seq, {columns} FROM {_FROM} WHERE f.seq IN ({marks}) AND "
        + _LIVE.replace(":now", "?"),
        [*seqs, now],
    ).fetchall()
    return rows


def seqs_admitted(
    conn: sqlite3.Connection,
    seqs: Sequence[int],
    visible: Sequence[ScopeKey] | None,
    tiers: Sequence[str] | None,
) -> list[int]:
    """Of ``seqs``, in their order, those ``scope_filter(visible, tiers)`` admits."""
    if not seqs:
        return []
    where, params = scope_filter(visible, tiers)
    marks = ", ".join(f":q{n}" for n in range(len(seqs)))
    params.update({f"q{n}": seq for n, seq in enumerate(seqs)})
    rows = conn.execute(
        f"SELECT f.seq FROM facts f WHERE f.seq IN ({marks}) AND {where}", params
    ).fetchall()
    admitted = {int(row[0]) for row in rows}
    return [seq for seq in seqs if seq in admitted]


def status_of(conn: sqlite3.Connection, fact_id: str, now: int) -> str | None:
    row = conn.execute(
        f"SELECT {_STATUS} AS status FROM {_FROM} WHERE f.id = :id",
        {"id": fact_id, "now": now},
    ).fetchone()
    return None if row is None else str(row["status"])


def fact_status(conn: sqlite3.Connection, fact_id: str, now: int) -> FactStatus | None:
    row = conn.execute(
        f"SELECT {_COLUMNS}, {_TOMBSTONE}, {_STATUS} AS status FROM {_FROM} WHERE f.id = :id",
        {"id": fact_id, "now": now},
    ).fetchone()
    return None if row is None else _fact_status(row)


def every_fact_status(
    conn: sqlite3.Connection,
    now: int,
    scopes: Sequence[str] | None = None,
    subject: str | None = None,
) -> list[FactStatus]:
    """Every fact ever written, oldest first, with its status; only those of ``scopes`` and
    whose subject is ``subject`` when given."""
    where = ["1"]
    params: dict[str, object] = {"now": now}
    if scopes is not None:
        marks = [f":s{n}" for n in range(len(scopes))]
        params.update({f"s{n}": scope for n, scope in enumerate(scopes)})
        where.append(f"f.scope IN ({', '.join(marks) or 'NULL'})")
    if subject is not None:
        where.append("f.subject = :subject")
        params["subject"] = subject
    rows = conn.execute(
        f"SELECT {_COLUMNS}, {_TOMBSTONE}, {_STATUS} AS status FROM {_FROM} "
        f"WHERE {' AND '.join(where)} ORDER BY f.seq",
        params,
    ).fetchall()
    return [_fact_status(row) for row in rows]


def live_by_id(conn: sqlite3.Connection, fact_id: str, now: int) -> Fact | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE f.id = :id AND {_LIVE}",
        {"id": fact_id, "now": now},
    ).fetchone()
    return None if row is None else _fact(row)


def live_with_text(
    conn: sqlite3.Connection, norm: str, now: int, scope: ScopeKey = AGENT
) -> Fact | None:
    """The oldest live plain fact (no key) of ``scope`` whose normalized text is ``norm``."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE f.norm_text = :norm AND {_LIVE} "
        "AND f.scope = :scope AND f.subject IS :subject AND f.fact_key IS NULL "
        "ORDER BY f.seq LIMIT 1",
        {"norm": norm, "now": now, "scope": scope.scope, "subject": scope.subject},
    ).fetchone()
    return None if row is None else _fact(row)


def with_text_created(
    conn: sqlite3.Connection, norm: str, created_at: int, scope: ScopeKey = AGENT
) -> str | None:
    """The id of the oldest fact (any status) of ``scope`` with normalized text ``norm``
    written at ``created_at`` (epoch ms): how an import recognizes a fact it already brought
    in."""
    row = conn.execute(
        "SELECT id FROM facts WHERE norm_text = ? AND created_at = ? AND scope = ? "
        "AND subject IS ? ORDER BY seq LIMIT 1",
        (norm, created_at, scope.scope, scope.subject),
    ).fetchone()
    return None if row is None else str(row[0])


def live_keyed(conn: sqlite3.Connection, key: str, scope: ScopeKey, now: int) -> Fact | None:
    """The live fact with ``key`` in ``scope`` (at most one: keyed writes supersede)."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE f.fact_key = :key AND f.scope = :scope "
        f"AND f.subject IS :subject AND {_LIVE} ORDER BY f.seq DESC LIMIT 1",
        {"key": key, "scope": scope.scope, "subject": scope.subject, "now": now},
    ).fetchone()
    return None if row is None else _fact(row)


def count_live(conn: sqlite3.Connection, now: int) -> int:
    row = conn.execute(f"SELECT count(*) FROM {_FROM} WHERE {_LIVE}", {"now": now}).fetchone()
    return int(row[0])


# -- row mapping ---------------------------------------------------------------------------


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
        scope=scope_of(row["scope"], row["subject"]),
        key=row["fact_key"],
        tier=row["tier"],
    )


def scope_of(scope: str, subject: str | None) -> ScopeKey:
    """The ``ScopeKey`` of a row's columns (the two subject-less keys without a new object)."""
    if subject is None:
        if scope == "agent":
            return AGENT
        if scope == "crew":
            return CREW
    return ScopeKey(scope, subject)  # type: ignore[arg-type]  # the schema's CHECK keeps it


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


def fact_status_page(
    conn: sqlite3.Connection,
    now: int,
    *,
    status: str,
    scopes: Sequence[str] | None,
    subject: str | None,
    tag: str | None,
    text: str | None,
    before: str | None,
    limit: int,
) -> list[FactStatus]:
    """One page of facts, newest first (keyset: those older than the fact ``before``), of
    ``status`` (``all``: any), ``scopes``, ``subject``, ``tag`` and a case-insensitive
    ``text`` substring. Walks the ``seq`` key backwards, so a page costs what it reads, not
    the size of the store."""
    where = ["1"]
    params: dict[str, object] = {"now": now, "limit": limit}
    if status != "all":
        where.append(f"({_STATUS}) = :status")
        params["status"] = status
    if scopes is not None:
        marks = [f":s{n}" for n in range(len(scopes))]
        params.update({f"s{n}": scope for n, scope in enumerate(scopes)})
        where.append(f"f.scope IN ({', '.join(marks) or 'NULL'})")
    if subject is not None:
        where.append("f.subject = :subject")
        params["subject"] = subject
    if tag is not None:
        where.append("EXISTS (SELECT 1 FROM json_each(f.tags) WHERE json_each.value = :tag)")
        params["tag"] = tag
    if text is not None:
        where.append("instr(lower(f.text), lower(:text)) > 0")
        params["text"] = text
    if before is not None:
        where.append("f.seq < coalesce((SELECT seq FROM facts WHERE id = :before), -1)")
        params["before"] = before
    rows = conn.execute(
        f"SELECT {_COLUMNS}, {_TOMBSTONE}, {_STATUS} AS status FROM {_FROM} "
        f"WHERE {' AND '.join(where)} ORDER BY f.seq DESC LIMIT :limit",
        params,
    ).fetchall()
    return [_fact_status(row) for row in rows]


def created_times(conn: sqlite3.Connection) -> list[int]:
    """Every fact's creation time (epoch ms, any status), oldest first: memory growth."""
    return [int(row[0]) for row in conn.execute("SELECT created_at FROM facts ORDER BY seq")]
