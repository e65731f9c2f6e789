"""``LexicalRecall``: BM25 recall through the in-memory ``LexicalIndex``, kept in step with SQLite.

SQLite is the source of truth; the index only ranks. Facts and tombstones are append-only and
each gets an increasing ``seq`` in its table, written under the database's write lock, so the
index remembers the last seq it read of each and, before every recall, reads only the rows
added since, by this process or any other (two indexed range reads, inside the read transaction
the recall answers from). A fact added since is indexed; a tombstone added since unindexes its
target. The winners' rows are then read from SQLite in the same transaction, filtered by the
liveness rule of ``queries``; if any winner is not live there the index is dropped and the
answer comes from FTS5 instead: a recall is never answered from a wrong index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from runtime.facts import queries
from runtime.facts.lexical_index import LexicalIndex, NewDoc, build
from runtime.facts.model import RecallHit
from runtime.facts.text import match_expression

_NEW_FACTS = """SELECT seq, terms, expires_at, json_array_length(evidence) > 0 FROM facts
WHERE seq > ? ORDER BY seq"""
_INDEXED_FACTS = """SELECT f.seq, f.terms, f.expires_at, json_array_length(f.evidence) > 0
FROM facts f WHERE NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id)
ORDER BY f.seq"""
_NEW_TOMBSTONES = """SELECT t.seq, f.seq, f.terms FROM tombstones t JOIN facts f ON f.id = t.target
WHERE t.seq > ? ORDER BY t.seq"""


class LexicalRecall:
    def __init__(self) -> None:
        self.index: LexicalIndex | None = None
        self.last_fact = 0  # the highest facts.seq the index has read
        self.last_tombstone = 0  # the highest tombstones.seq the index has read

    def recall(
        self, conn: sqlite3.Connection, terms: Sequence[str], limit: int, now_ms: int
    ) -> list[RecallHit]:
        conn.execute("BEGIN")
        try:
            index = self.catch_up(conn)
            ranked = index.rank(terms, limit, now_ms)
            hits = queries.live_hits_by_seq(conn, ranked, now_ms)
            if len(hits) != len(ranked):
                self.index = None
                match = match_expression(terms)
                hits = [] if match is None else queries.lexical(conn, match, now_ms, limit=limit)
            return hits
        finally:
            conn.execute("COMMIT")

    def catch_up(self, conn: sqlite3.Connection) -> LexicalIndex:
        """The index, with every fact and tombstone committed so far read (call in a read
        transaction)."""
        cursor = conn.cursor()
        cursor.row_factory = None
        if self.index is None:
            self.last_fact = _max_seq(cursor, "facts")
            self.last_tombstone = _max_seq(cursor, "tombstones")
            self.index = build([_doc(row) for row in cursor.execute(_INDEXED_FACTS)])
            return self.index
        index = self.index
        rows = cursor.execute(_NEW_FACTS, (self.last_fact,)).fetchall()
        if rows:
            index.add(_doc(row) for row in rows)
            self.last_fact = int(rows[-1][0])
        for tombstone_seq, fact_seq, terms in cursor.execute(
            _NEW_TOMBSTONES, (self.last_tombstone,)
        ):
            index.remove(int(fact_seq), str(terms))
            self.last_tombstone = int(tombstone_seq)
        return index


def _doc(row: tuple[object, ...]) -> NewDoc:
    seq, terms, expires_at, proven = row
    assert isinstance(seq, int) and isinstance(terms, str)
    return NewDoc(seq, terms, expires_at if isinstance(expires_at, int) else None, bool(proven))


def _max_seq(cursor: sqlite3.Cursor, table: str) -> int:
    row = cursor.execute(f"SELECT coalesce(max(seq), 0) FROM {table}").fetchone()
    return int(row[0])
