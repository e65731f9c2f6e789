"""``LexicalRecall``: BM25 recall through the in-memory ``LexicalIndex``, kept in step with SQLite.

SQLite is the source of truth; the index only ranks. Facts and tombstones are append-only and
each gets an increasing ``seq`` in its table, written under the database's write lock, so the
index remembers the last seq it read of each and, before every recall, reads only the rows
added since, by this process or any other (two indexed range reads, inside the read transaction
the recall answers from). A fact added since is indexed; a tombstone added since unindexes its
target. A large index is saved beside the database when the store closes
(``runtime.facts.lexical.snapshot``) and loaded instead of rebuilt by the next store that opens
it, then caught up the same way; a snapshot that is damaged or does not match the database is
ignored and the index is rebuilt from SQLite.

The winners' rows are then read from SQLite in the same transaction, filtered by the liveness
rule of ``queries``; if any winner is not live there (or a snapshot's postings fail their
checksum) the index is dropped and the answer comes from FTS5 instead: a recall is never
answered from a wrong index.

Scopes: each fact's group (``LexicalIndex``) is its scope key and tier (``group_label``); a
recall passes the keys it may see and the tiers it wants, turned into a mask over the groups
once per visible set (cached until a new group appears).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

import numpy as np
import numpy.typing as npt

from specwire.runtime.core.progress import Progress
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.lexical import snapshot as lexical_snapshot
from specwire.runtime.facts.lexical.index import DamagedIndexError, LexicalIndex, NewDoc, build
from specwire.runtime.facts.lexical.snapshot import Position, SnapshotError
from specwire.runtime.facts.model import RecallHit
from specwire.runtime.facts.sql import queries
from specwire.runtime.facts.sql.schema import schema_version
from specwire.runtime.facts.text import match_expression
from specwire.runtime.facts.tuning import DEFAULT_TUNING, FactsTuning

_NEW_FACTS = """SELECT seq, terms, expires_at, json_array_length(evidence) > 0, scope, subject,
tier FROM facts WHERE seq > ? ORDER BY seq"""
_INDEXED_FACTS = """SELECT f.seq, f.terms, f.expires_at, json_array_length(f.evidence) > 0,
f.scope, f.subject, f.tier FROM facts f
WHERE NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id)
ORDER BY f.seq"""
# CROSS JOIN pins tombstones as the outer loop: with the statistics ``PRAGMA optimize`` leaves
# (none for an empty tombstones table), the planner would otherwise scan every fact per recall.
_NEW_TOMBSTONES = """SELECT t.seq, f.seq, f.terms
FROM tombstones t CROSS JOIN facts f ON f.id = t.target WHERE t.seq > ? ORDER BY t.seq"""


class LexicalRecall:
    def __init__(self, db_path: Path | None = None, tuning: FactsTuning | None = None) -> None:
        self.tuning = tuning or DEFAULT_TUNING
        # Read once (see ``FactsTuning``): a snapshot is written at close for an index of at
        # least ``_snapshot_min_facts`` facts, when ``_snapshot_min_changes`` rows (or 1% of
        # them) changed since the one on disk; more new facts than ``_rebuild_after`` (and than
        # the index holds) are indexed by a rebuild, not one by one.
        self._snapshot_min_facts = self.tuning.lexical_snapshot_min_facts
        self._snapshot_min_changes = self.tuning.lexical_snapshot_min_changes
        self._rebuild_after = self.tuning.lexical_rebuild_after
        self.index: LexicalIndex | None = None
        self.last_fact = 0  # the highest facts.seq the index has read
        self.last_tombstone = 0  # the highest tombstones.seq the index has read
        self.snapshot = None if db_path is None else lexical_snapshot.snapshot_path(db_path)
        self.saved: tuple[int, int] | None = None  # (last_fact, last_tombstone) on disk
        self.loaded_snapshot = False
        self._last_mask: tuple[object, object, LexicalIndex, int, npt.NDArray[np.bool_]] | None
        self._last_mask = None

    def groups_for(
        self,
        index: LexicalIndex,
        visible: Sequence[ScopeKey] | None,
        tiers: Sequence[str] | None,
    ) -> npt.NDArray[np.bool_] | None:
        """The groups of ``index`` whose scope key is in ``visible`` (None: any) and whose tier
        is in ``tiers`` (empty: none, i.e. plain facts; None: any); None: no filter."""
        if visible is None and tiers is None:
            return None
        last = self._last_mask
        # The same sequences as the last recall (a turn reuses its audience's tuple): no
        # hashing of a long visible set per recall.
        if (
            last is not None
            and last[0] is visible
            and last[1] is tiers
            and last[2] is index
            and last[3] == len(index.group_names)
        ):
            return last[4]
        cache_key = (
            None if visible is None else tuple(visible),
            None if tiers is None else tuple(tiers),
            len(index.group_names),
        )
        # Kept on the index: a rebuilt index numbers its groups anew.
        masks = index.mask_cache
        mask = masks.get(cache_key)
        if mask is None:
            keys = None if visible is None else {key_label(k.scope, k.subject) for k in visible}
            # Empty tiers: plain facts only, whose tier part is "".
            wanted_tiers = None if tiers is None else (set(tiers) or {""})

            def admits(label: str) -> bool:
                key, _, tier = label.rpartition(_SEP)
                return (
                    bool(label)
                    and (keys is None or key in keys)
                    and (wanted_tiers is None or tier in wanted_tiers)
                )

            if len(masks) >= _MAX_MASKS:
                masks.clear()
            mask = masks[cache_key] = index.group_mask(admits)
        if mask is not None:
            self._last_mask = (visible, tiers, index, len(index.group_names), mask)
        return mask

    def recall(
        self,
        conn: sqlite3.Connection,
        terms: Sequence[str],
        limit: int,
        now_ms: int,
        visible: Sequence[ScopeKey] | None = None,
        tiers: Sequence[str] | None = (),
    ) -> list[RecallHit]:
        conn.execute("BEGIN")
        try:
            try:
                index = self.catch_up(conn)
                groups = self.groups_for(index, visible, tiers)
                ranked = index.rank(terms, limit, now_ms, groups)
                hits = queries.live_hits_by_seq(conn, ranked, now_ms)
                if len(hits) == len(ranked):
                    return hits
                self.index = None  # out of step with the database: rebuilt next time
            except DamagedIndexError:
                self._discard_snapshot()
            match = match_expression(terms)
            if match is None:
                return []
            return queries.lexical(conn, match, now_ms, limit=limit, visible=visible, tiers=tiers)
        finally:
            conn.execute("COMMIT")

    def ranked_live(
        self,
        conn: sqlite3.Connection,
        terms: Sequence[str],
        limit: int,
        now_ms: int,
        visible: Sequence[ScopeKey] | None = None,
        tiers: Sequence[str] | None = (),
    ) -> list[tuple[int, bool]] | None:
        """Like ``recall`` without reading the facts: the winners' seqs, best first, each with
        whether it is backed by evidence. None when the index cannot answer (a winner not live
        in SQLite, or a damaged snapshot): ``recall`` then answers, from a rebuilt index or
        FTS5."""
        conn.execute("BEGIN")
        try:
            try:
                index = self.catch_up(conn)
                ranked = index.rank(terms, limit, now_ms, self.groups_for(index, visible, tiers))
            except DamagedIndexError:
                self._discard_snapshot()
                return None
            live = queries.live_proven(conn, [seq for seq, _ in ranked], now_ms)
            if len(live) != len(ranked):
                self.index = None  # out of step with the database: rebuilt next time
                return None
            return [(seq, live[seq]) for seq, _ in ranked]
        finally:
            conn.execute("COMMIT")

    def catch_up(self, conn: sqlite3.Connection) -> LexicalIndex:
        """The index, with every fact and tombstone committed so far read (call in a read
        transaction)."""
        cursor = conn.cursor()
        cursor.row_factory = None
        index = self.index
        if index is None:
            if not self._load_snapshot(conn):
                return self._rebuild(cursor)
            index = self.index
            assert index is not None
        rows = cursor.execute(_NEW_FACTS, (self.last_fact,)).fetchall()
        if len(rows) > max(self._rebuild_after, index.n_indexed):
            return self._rebuild(cursor)  # a bulk import since: cheaper than adding one by one
        if rows:
            index.add(_doc(row) for row in rows)
            self.last_fact = int(rows[-1][0])
        for tombstone_seq, fact_seq, terms in cursor.execute(
            _NEW_TOMBSTONES, (self.last_tombstone,)
        ):
            index.remove(int(fact_seq), str(terms))
            self.last_tombstone = int(tombstone_seq)
        return index

    def _rebuild(self, cursor: sqlite3.Cursor) -> LexicalIndex:
        self.last_fact = _max_seq(cursor, "facts")
        self.last_tombstone = _max_seq(cursor, "tombstones")
        self.loaded_snapshot = False
        # A first run over a large store takes seconds: a terminal sees how far it is.
        with Progress("indexing facts") as progress:
            rows = progress.track(cursor.execute(_INDEXED_FACTS))
            self.index = build((_doc(row) for row in rows), self.tuning)
        return self.index

    def save_snapshot(self, conn: sqlite3.Connection) -> bool:
        """Save the index beside the database when it is large and the file is stale enough.

        Call in a read transaction, with the index caught up. Returns whether it was saved.
        """
        index = self.index
        if index is None or self.snapshot is None or index.n_indexed < self._snapshot_min_facts:
            return False
        if self.saved is not None:
            changes = self.last_fact - self.saved[0] + self.last_tombstone - self.saved[1]
            if changes < max(self._snapshot_min_changes, index.n_indexed // 100):
                return False
        position = Position(
            schema_version=schema_version(conn),
            last_fact=self.last_fact,
            last_fact_id=_one(conn, "SELECT id FROM facts WHERE seq = ?", self.last_fact),
            last_tombstone=self.last_tombstone,
            last_tombstone_target=_one(
                conn, "SELECT target FROM tombstones WHERE seq = ?", self.last_tombstone
            ),
        )
        lexical_snapshot.save(self.snapshot, index, position)
        self.saved = (self.last_fact, self.last_tombstone)
        return True

    def _load_snapshot(self, conn: sqlite3.Connection) -> bool:
        """Take the saved index when it matches this database; False to rebuild."""
        if self.snapshot is None:
            return False
        try:
            index, position = lexical_snapshot.load(self.snapshot)
        except (OSError, SnapshotError):
            return False
        matches = (
            position.schema_version == schema_version(conn)
            and _one(conn, "SELECT id FROM facts WHERE seq = ?", position.last_fact)
            == position.last_fact_id
            and _one(conn, "SELECT target FROM tombstones WHERE seq = ?", position.last_tombstone)
            == position.last_tombstone_target
        )
        if not matches:
            return False
        index.tuning = self.tuning
        self.index, self.loaded_snapshot = index, True
        self.last_fact, self.last_tombstone = position.last_fact, position.last_tombstone
        self.saved = (position.last_fact, position.last_tombstone)
        return True

    def _discard_snapshot(self) -> None:
        """The loaded snapshot is damaged: forget the index and the file (rebuilt next time)."""
        self.index, self.saved, self.loaded_snapshot = None, None, False
        if self.snapshot is not None:
            with suppress(OSError):
                self.snapshot.unlink()


def _one(conn: sqlite3.Connection, sql: str, seq: int) -> str | None:
    row = conn.execute(sql, (seq,)).fetchone()
    return None if row is None else str(row[0])


_SEP = "\x1f"  # never in a scope, subject (no control characters) or tier
_MAX_MASKS = 1024


def key_label(scope: str, subject: str | None) -> str:
    return f"{scope}{_SEP}{subject or ''}"


def group_label(scope: str, subject: str | None, tier: str | None = None) -> str:
    """A fact's group in the index: its scope key and tier (never empty: group 0, "", holds
    only seqs that are no fact of the index, and no filter admits it)."""
    return f"{key_label(scope, subject)}{_SEP}{tier or ''}"


def _doc(row: tuple[object, ...]) -> NewDoc:
    seq, terms, expires_at, proven, scope, subject, tier = row
    assert isinstance(seq, int) and isinstance(terms, str) and isinstance(scope, str)
    return NewDoc(
        seq,
        terms,
        expires_at if isinstance(expires_at, int) else None,
        bool(proven),
        group_label(
            scope,
            subject if isinstance(subject, str) else None,
            tier if isinstance(tier, str) else None,
        ),
    )


def _max_seq(cursor: sqlite3.Cursor, table: str) -> int:
    row = cursor.execute(f"SELECT coalesce(max(seq), 0) FROM {table}").fetchone()
    return int(row[0])
