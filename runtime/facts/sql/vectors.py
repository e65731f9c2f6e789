"""The SQL of hybrid recall's vectors (``fact_vectors``, schema version 3).

Every read is incremental: it takes a cursor (the last row it saw) so that keeping the in-memory
matrix in step with the file never re-reads every row.
"""

from __future__ import annotations

import sqlite3

from specwire.runtime.facts.model import Fact
from specwire.runtime.facts.sql.queries import _COLUMNS, _fact, live_rows_by_seq


def insert_vector(
    conn: sqlite3.Connection, fact_id: str, embedder: str, dim: int, vector: bytes
) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO fact_vectors (fact_seq, embedder, dim, vector) "
        "SELECT seq, ?, ?, ? FROM facts WHERE id = ?",
        (embedder, dim, vector, fact_id),
    )


def insert_vectors(
    conn: sqlite3.Connection, embedder: str, dim: int, rows: list[tuple[int, bytes]]
) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO fact_vectors (fact_seq, embedder, dim, vector) VALUES (?, ?, ?, ?)",
        [(seq, embedder, dim, vector) for seq, vector in rows],
    )


def vectors_since(
    conn: sqlite3.Connection, embedder: str, dim: int, after: int
) -> list[tuple[int, int, bytes, int | None, int, int]]:
    """``(rowid, fact_seq, vector, expires_at, proven, dead)`` of this embedder's new vectors
    (``dead``: the fact has a tombstone, perhaps one older than the tombstone cursor)."""
    return conn.execute(
        "SELECT v.rowid, v.fact_seq, v.vector, f.expires_at, json_array_length(f.evidence) > 0, "
        "EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id) "
        "FROM fact_vectors v JOIN facts f ON f.seq = v.fact_seq "
        # ``+v.embedder``: walk the rowid range, never the (embedder, fact_seq) index, which
        # would visit every vector of this embedder to find the few new ones.
        "WHERE v.rowid > ? AND +v.embedder = ? AND v.dim = ? ORDER BY v.rowid",
        (after, embedder, dim),
    ).fetchall()


def fact_id_of_vector(conn: sqlite3.Connection, rowid: int, embedder: str) -> str | None:
    """The id of the fact of that vector row of this embedder (None: no such row)."""
    row = conn.execute(
        "SELECT f.id FROM fact_vectors v JOIN facts f ON f.seq = v.fact_seq "
        "WHERE v.rowid = ? AND v.embedder = ?",
        (rowid, embedder),
    ).fetchone()
    return None if row is None else str(row[0])


def tombstone_target(conn: sqlite3.Connection, seq: int) -> str | None:
    row = conn.execute("SELECT target FROM tombstones WHERE seq = ?", (seq,)).fetchone()
    return None if row is None else str(row[0])


def latest_embedder(conn: sqlite3.Connection) -> str | None:
    """The id of the embedder that made the newest vector (None: no fact was ever embedded):
    the embedder the agent's recall last ran with."""
    row = conn.execute("SELECT embedder FROM fact_vectors ORDER BY rowid DESC LIMIT 1").fetchone()
    return None if row is None else str(row[0])


def vector_of(conn: sqlite3.Connection, embedder: str, fact_seq: int) -> bytes | None:
    row = conn.execute(
        "SELECT vector FROM fact_vectors WHERE embedder = ? AND fact_seq = ?", (embedder, fact_seq)
    ).fetchone()
    return None if row is None else bytes(row[0])


def tombstoned_since(conn: sqlite3.Connection, after: int) -> list[tuple[int, int]]:
    """``(tombstone seq, fact seq)`` of tombstones written after ``after``."""
    return conn.execute(
        # CROSS JOIN pins tombstones as the outer loop (a range read from the cursor): left to
        # the planner, a small table's statistics can make it scan every fact per query.
        "SELECT t.seq, f.seq FROM tombstones t CROSS JOIN facts f ON f.id = t.target "
        "WHERE t.seq > ? ORDER BY t.seq",
        (after,),
    ).fetchall()


def newest_seq(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(seq) FROM facts").fetchone()
    return 0 if row[0] is None else int(row[0])


def unembedded_since(
    conn: sqlite3.Connection, embedder: str, after: int, limit: int
) -> list[tuple[int, str, str]]:
    """``(seq, text, tags)`` of facts after ``after`` without a tombstone or a vector of this
    embedder, oldest first."""
    return conn.execute(
        "SELECT f.seq, f.text, f.tags FROM facts f "
        "WHERE f.seq > ? AND f.superseded_by IS NULL "
        "AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id) "
        "AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.embedder = ? AND v.fact_seq = f.seq) "
        "ORDER BY f.seq LIMIT ?",
        (after, embedder, limit),
    ).fetchall()


def live_by_seqs(conn: sqlite3.Connection, seqs: list[int], now: int) -> dict[int, Fact]:
    rows = live_rows_by_seq(conn, _COLUMNS, seqs, now)
    return {int(row["seq"]): _fact(row) for row in rows}
