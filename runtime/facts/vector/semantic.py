"""The cosine side of hybrid recall: one embedder's fact vectors as a contiguous matrix.

SQLite (``fact_vectors``) stays the source of truth. The matrix is kept in step by cursors: each
query first reads only what was written since the last one (new vectors, by this or another
process; new tombstones, which mask rows), so a query never re-reads every row. Expiry is a
per-row deadline compared at query time. Facts without a vector of this embedder (written while
the embedder failed, by a process without one, or under another embedder) are embedded lazily,
``FactsTuning.catch_up_batch`` per query; until then the cosine ranking ignores them, and
vectors of another embedder are never read, so two models never meet in one ranking.

A large index is saved beside the database when the store closes (``vector_snapshot``) and
mapped, not rebuilt, by the next store that opens it: checked against the database, then caught
up by the same cursors. A snapshot that does not match is ignored, and one found damaged while
answering is deleted and the index rebuilt from SQLite: it never changes an answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from specwire.runtime.embedders.base import Embedder
from specwire.runtime.facts.lifecycle import FactFile
from specwire.runtime.facts.sql import vectors as vector_queries
from specwire.runtime.facts.sql.schema import schema_version
from specwire.runtime.facts.tuning import DEFAULT_TUNING, FactsTuning
from specwire.runtime.facts.vector import cuts as vector_cuts
from specwire.runtime.facts.vector import sketch
from specwire.runtime.facts.vector import snapshot as vector_snapshot
from specwire.runtime.facts.vector.matrix import DamagedVectorsError, VectorMatrix
from specwire.runtime.facts.vector.snapshot import Position, SnapshotError

# From ``FactsTuning.sketch_from_rows`` rows a query scans sign sketches first (``sketch``): the
# rows of fewest differing bits (one in SKETCH_POOL_SHARE, between SKETCH_POOL_MIN and
# ``FactsTuning.sketch_pool`` of them), ranked by their bits' agreement with the query, and the
# best half of those (at most ``FactsTuning.sketch_candidates``) rescored exactly. Below it,
# every row is scored exactly.
SKETCH_POOL_MIN = 3_000
SKETCH_POOL_SHARE = 33
# Rows of a loaded snapshot compared with SQLite before it is trusted.
SNAPSHOT_SAMPLE = 16
_NEVER = np.iinfo(np.int64).max


def embedding_text(text: str, tags: Sequence[str]) -> str:
    """What a fact embeds as: its text and its tags (as the reference does)."""
    return " ".join([text, *tags])


class SemanticIndex:
    def __init__(
        self,
        embedder: Embedder,
        log: Callable[[str], None],
        snapshot: Path | None = None,
        tuning: FactsTuning | None = None,
    ) -> None:
        self.embedder = embedder
        self.tuning = tuning or DEFAULT_TUNING
        self._log = log
        self._failing = False
        self._dim: int | None = None
        self._snapshot = snapshot
        self._tried_snapshot = False
        self.loaded_snapshot = False
        self._saved: tuple[int, int] | None = None  # (rows, tombstone cursor) on disk
        # Held while the arrays change or are read: a warm store may serve several threads.
        self._lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        self._planes: npt.NDArray[np.float32] | None = None
        self._n = 0
        self._matrix: VectorMatrix | None = None
        self._seqs = np.zeros(0, dtype=np.int64)
        self._alive = np.zeros(0, dtype=bool)
        self._usable_cache: _Usable | None = None
        self._expires = np.zeros(0, dtype=np.int64)
        self._proven = np.zeros(0, dtype=bool)
        # Rows by fact seq: a snapshot's sorted arrays, and a dict for rows read since.
        self._sorted_seqs = np.zeros(0, dtype=np.int64)
        self._sorted_rows = np.zeros(0, dtype=np.int64)
        self._row_of: dict[int, int] = {}
        self._vector_cursor = 0
        self._tomb_cursor = 0
        self._checked_seq = 0  # every fact up to here has a vector of this embedder or is dead

    @property
    def tuning(self) -> FactsTuning:
        return self._tuning

    @tuning.setter
    def tuning(self, tuning: FactsTuning) -> None:
        """Read once into attributes: queries read them every time."""
        self._tuning = tuning
        self._catch_up_batch = tuning.catch_up_batch
        self._sketch_from_rows = tuning.sketch_from_rows
        self._sketch_pool = tuning.sketch_pool
        self._sketch_candidates = tuning.sketch_candidates
        self._snapshot_min_rows = tuning.vector_snapshot_min_rows
        self._snapshot_min_changes = tuning.vector_snapshot_min_changes

    # -- embedding -----------------------------------------------------------------------

    def embed_or_none(self, texts: Sequence[str]) -> npt.NDArray[np.float32] | None:
        """The texts' vectors, or None (logged once per failure streak) when the embedder fails:
        the caller stores the facts anyway and they are embedded later."""
        try:
            vectors = self.embedder.embed(texts)
        except Exception as exc:  # any embedder failure: the fact must not be lost
            if not self._failing:
                self._log(
                    f"[memory] embedder {self.embedder.id} failed ({_one_line(exc)}): facts are "
                    "stored and will be embedded later; recall falls back to BM25 meanwhile\n"
                )
            self._failing = True
            return None
        self._failing = False
        return np.ascontiguousarray(vectors, dtype=np.float32)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embedder.dim)
        return self._dim

    # -- keeping in step ------------------------------------------------------------------

    def refresh(self, file: FactFile) -> None:
        """Read what was written since the last refresh; embed one batch of missing facts."""
        with self._lock:
            self._refresh(file)

    def _refresh(self, file: FactFile) -> None:
        with file.reading("recall") as conn:
            if conn is None:
                return
            if not self._tried_snapshot:
                self._tried_snapshot = True
                self._load_snapshot(conn)
            for tomb_seq, fact_seq in vector_queries.tombstoned_since(conn, self._tomb_cursor):
                self._tomb_cursor = tomb_seq
                row = self._row(int(fact_seq))
                if row is not None:
                    self._alive[row] = False
            self._load_vectors(
                vector_queries.vectors_since(conn, self.embedder.id, self.dim, self._vector_cursor)
            )
            newest = vector_queries.newest_seq(conn)
            missing = vector_queries.unembedded_since(
                conn, self.embedder.id, self._checked_seq, self._catch_up_batch
            )
        if not missing:
            self._checked_seq = newest
            return
        texts = [embedding_text(text, _tags(tags)) for _, text, tags in missing]
        vectors = self.embed_or_none(texts)
        if vectors is None:
            return
        rows = [(int(seq), vectors[i].tobytes()) for i, (seq, _, _) in enumerate(missing)]
        with file.updating("embed memories") as conn:
            if conn is not None:
                vector_queries.insert_vectors(conn, self.embedder.id, self.dim, rows)
        complete = len(missing) < self._catch_up_batch
        self._checked_seq = newest if complete else int(missing[-1][0])
        with file.reading("recall") as conn:
            if conn is not None:
                self._load_vectors(
                    vector_queries.vectors_since(
                        conn, self.embedder.id, self.dim, self._vector_cursor
                    )
                )

    def pending(self, file: FactFile) -> bool:
        with file.reading("recall") as conn:
            return conn is not None and bool(
                vector_queries.unembedded_since(conn, self.embedder.id, self._checked_seq, 1)
            )

    def _row(self, seq: int) -> int | None:
        row = self._row_of.get(seq)
        if row is not None or len(self._sorted_seqs) == 0:
            return row
        at = int(np.searchsorted(self._sorted_seqs, seq))
        if at < len(self._sorted_seqs) and int(self._sorted_seqs[at]) == seq:
            return int(self._sorted_rows[at])
        return None

    def _load_vectors(self, rows: list[tuple[int, int, bytes, int | None, int, int]]) -> None:
        if not rows:
            return
        self._vector_cursor = int(rows[-1][0])
        block = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32)
        vectors = block.reshape(len(rows), self.dim)
        self._matrix_of().append(vectors, sketch.sketch(vectors, self._planes_of()))
        self._grow(len(rows))
        start = self._n
        for offset, (_, seq, _, expires, proven, dead) in enumerate(rows):
            row = start + offset
            self._seqs[row] = seq
            self._alive[row] = not dead
            self._expires[row] = _NEVER if expires is None else expires
            self._proven[row] = bool(proven)
            self._row_of[int(seq)] = row
        self._n += len(rows)

    def _matrix_of(self) -> VectorMatrix:
        if self._matrix is None:
            self._matrix = VectorMatrix(self.dim)
        return self._matrix

    def _grow(self, extra: int) -> None:
        needed = self._n + extra
        capacity = len(self._seqs)
        if needed <= capacity:
            return
        capacity = max(needed, capacity * 2, 1024)
        self._seqs = _resized(self._seqs, capacity)
        self._alive = _resized(self._alive, capacity)
        self._expires = _resized(self._expires, capacity)
        self._proven = _resized(self._proven, capacity)

    # -- the snapshot ---------------------------------------------------------------------

    def save_snapshot(self, file: FactFile) -> bool:
        """Save the index beside the database when it is large and the file is stale enough.
        Returns whether it was saved."""
        with self._lock:
            n, matrix = self._n, self._matrix
            if self._snapshot is None or matrix is None or n < self._snapshot_min_rows:
                return False
            if self._saved is not None:
                changes = n - self._saved[0] + self._tomb_cursor - self._saved[1]
                if changes < max(self._snapshot_min_changes, n // 100):
                    return False
            with file.reading("save the vector index") as conn:
                if conn is None:
                    return False
                position = Position(
                    schema_version=schema_version(conn),
                    embedder=self.embedder.id,
                    dim=self.dim,
                    sketch=sketch.IDENTITY,
                    rows=n,
                    vector_cursor=self._vector_cursor,
                    vector_fact_id=vector_queries.fact_id_of_vector(
                        conn, self._vector_cursor, self.embedder.id
                    ),
                    tomb_cursor=self._tomb_cursor,
                    tomb_target=vector_queries.tombstone_target(conn, self._tomb_cursor),
                    checked_seq=self._checked_seq,
                )
            vectors, sketches, sums = matrix.parts()
            seqs = self._seqs[:n]
            order = np.argsort(seqs, kind="stable")
            sections: dict[str, list[npt.NDArray[Any]]] = {
                "matrix": list(vectors),
                "sketches": list(sketches),
                "planes": [self._planes_of()],
                "row_sums": list(sums),
                "seqs": [seqs],
                "alive": [self._alive[:n]],
                "expires": [self._expires[:n]],
                "proven": [self._proven[:n]],
                "sorted_seqs": [seqs[order]],
                "sorted_rows": [order.astype(np.int64)],
            }
            vector_snapshot.save(self._snapshot, position, sections)
            self._saved = (n, self._tomb_cursor)
            return True

    def _load_snapshot(self, conn: Any) -> None:
        """Take the saved index when it matches this database and embedder; else keep empty."""
        if self._snapshot is None:
            return
        try:
            snapshot = vector_snapshot.load(self._snapshot)
        except (OSError, SnapshotError):
            return
        position, arrays = snapshot.position, snapshot.arrays
        if not self._matches(conn, position, arrays):
            return
        self._matrix = VectorMatrix(
            self.dim, arrays["matrix"], arrays["sketches"], arrays["row_sums"]
        )
        self._planes = arrays["planes"]
        # The per-row arrays are small and change (tombstones, appended rows): private copies.
        self._seqs = np.array(arrays["seqs"])
        self._alive = np.array(arrays["alive"])
        self._expires = np.array(arrays["expires"])
        self._proven = np.array(arrays["proven"])
        self._sorted_seqs, self._sorted_rows = arrays["sorted_seqs"], arrays["sorted_rows"]
        self._n = position.rows
        self._vector_cursor, self._tomb_cursor = position.vector_cursor, position.tomb_cursor
        self._checked_seq = position.checked_seq
        self._saved = (position.rows, position.tomb_cursor)
        self.loaded_snapshot = True

    def _matches(self, conn: Any, position: Position, arrays: dict[str, Any]) -> bool:
        embedder_id = self.embedder.id
        if (
            position.embedder != embedder_id
            or position.dim != self.dim
            or position.sketch != sketch.IDENTITY
            or position.schema_version != schema_version(conn)
            or vector_queries.fact_id_of_vector(conn, position.vector_cursor, embedder_id)
            != position.vector_fact_id
            or vector_queries.tombstone_target(conn, position.tomb_cursor) != position.tomb_target
        ):
            return False
        rows = np.unique(np.linspace(0, position.rows - 1, SNAPSHOT_SAMPLE).astype(np.int64))
        matrix, seqs = arrays["matrix"], arrays["seqs"]
        for row in rows.tolist():
            stored = vector_queries.vector_of(conn, embedder_id, int(seqs[row]))
            if stored != matrix[row].tobytes():
                return False
        return True

    def _discard_snapshot(self) -> None:
        """The loaded snapshot is damaged: delete it and start over from SQLite."""
        self._reset()
        self._saved, self.loaded_snapshot = None, False
        if self._snapshot is not None:
            with suppress(OSError):
                self._snapshot.unlink()

    # -- ranking --------------------------------------------------------------------------

    def _planes_of(self) -> npt.NDArray[np.float32]:
        if self._planes is None:
            self._planes = sketch.projections(self.dim)
        return self._planes

    def ranking(
        self, file: FactFile, query: npt.NDArray[np.float32], now_ms: int, limit: int
    ) -> list[int]:
        """``nearest``; a snapshot found damaged on the way is dropped, the index rebuilt from
        SQLite and the query answered from that."""
        with self._lock:
            try:
                return self.nearest(query, now_ms, limit)
            except DamagedVectorsError:
                self._discard_snapshot()
            self._refresh(file)
            return self.nearest(query, now_ms, limit)

    def nearest(self, query: npt.NDArray[np.float32], now_ms: int, limit: int) -> list[int]:
        """Seqs of the live facts most similar to ``query`` (cosine > 0 only), best first."""
        with self._lock:
            n, matrix = self._n, self._matrix
            if n == 0 or limit < 1 or matrix is None:
                return []
            usable = self._usable(n, now_ms)
            if n >= self._sketch_from_rows:
                return self._nearest_sketched(matrix, query, usable, limit)
            scores = matrix.all_scores(query)
            scores = np.where(usable & (scores > 0), scores, -np.inf)
            top = np.argpartition(-scores, limit)[:limit] if limit < n else np.arange(n)
            # Ties broken by row order (write order), so the ranking is deterministic.
            order = top[np.lexsort((top, -scores[top]))]
            return [int(self._seqs[row]) for row in order if scores[row] > -np.inf]

    def _usable(self, n: int, now_ms: int) -> npt.NDArray[np.bool_]:
        """Per row, live and unexpired at ``now_ms``. Remembered until a row is added or
        tombstoned (the arrays or the cursors change) or the next expiry passes: a million rows
        cost two passes, so most recalls skip them."""
        cached = self._usable_cache
        if (
            cached is not None
            and cached.alive is self._alive
            and cached.expires is self._expires
            and cached.key == (n, self._tomb_cursor)
            and cached.since <= now_ms < cached.until
        ):
            return cached.mask
        expires = self._expires[:n]
        unexpired = expires > now_ms
        later = expires[unexpired]
        until = int(later.min()) if len(later) else _NEVER
        mask = self._alive[:n] & unexpired
        self._usable_cache = _Usable(
            self._alive, self._expires, (n, self._tomb_cursor), now_ms, until, mask
        )
        return mask

    def _nearest_sketched(
        self,
        matrix: VectorMatrix,
        query: npt.NDArray[np.float32],
        usable: npt.NDArray[np.bool_],
        limit: int,
    ) -> list[int]:
        n = self._n
        projection = query @ self._planes_of()
        query_sketch = np.packbits(projection > 0).view(np.uint64)[None, :]
        distance = matrix.differing_bits(query_sketch)
        distance[~usable] = sketch.SKETCH_BITS + 1
        pool_size = min(self._sketch_pool, max(SKETCH_POOL_MIN, n // SKETCH_POOL_SHARE))
        wanted = max(min(self._sketch_candidates, pool_size // 2), limit)
        # Pools in row order, so ties go to the older row, as everywhere.
        pool = vector_cuts.closest(distance, min(n, max(pool_size, wanted)))
        pool = pool[usable[pool]]
        if len(pool) > wanted:
            agree = sketch.agreement(matrix.sketch_rows(pool), projection)
            pool = pool[vector_cuts.largest(agree, wanted)]
        scores = matrix.scores(pool, query)
        keep = scores > 0
        candidates, scores = pool[keep], scores[keep]
        order = np.lexsort((candidates, -scores))[:limit]
        return [int(self._seqs[row]) for row in candidates[order]]


@dataclass(frozen=True)
class _Usable:
    """``SemanticIndex._usable``'s answer and what it holds for."""

    alive: npt.NDArray[np.bool_]
    expires: npt.NDArray[np.int64]
    key: tuple[int, int]  # rows, tombstone cursor
    since: int
    until: int  # the next expiry after ``since``
    mask: npt.NDArray[np.bool_]


def _resized(array: npt.NDArray[Any], capacity: int) -> npt.NDArray[Any]:
    out = np.zeros(capacity, dtype=array.dtype)
    out[: len(array)] = array[: min(len(array), capacity)]
    return out


def _tags(raw: str) -> list[str]:
    value = json.loads(raw) if isinstance(raw, str) else []
    return [tag for tag in value if isinstance(tag, str)] if isinstance(value, list) else []


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
