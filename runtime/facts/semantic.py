"""The cosine side of hybrid recall: one embedder's fact vectors as a contiguous matrix.

SQLite (``fact_vectors``) stays the source of truth. The matrix is kept in step by cursors: each
query first reads only what was written since the last one (new vectors, by this or another
process; new tombstones, which mask rows), so a query never re-reads every row. Expiry is a
per-row deadline compared at query time. Facts without a vector of this embedder (written while
the embedder failed, by a process without one, or under another embedder) are embedded lazily,
``CATCH_UP_BATCH`` per query; until then the cosine ranking ignores them, and vectors of another
embedder are never read, so two models never meet in one ranking.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from runtime.embedders.base import Embedder
from runtime.facts import sketch, vector_queries
from runtime.facts.lifecycle import FactFile

CATCH_UP_BATCH = 256
# From this many rows a query scans sign sketches first and rescores SKETCH_CANDIDATES rows
# exactly (``sketch``); below it, every row is scored exactly.
SKETCH_FROM_ROWS = 50_000
SKETCH_CANDIDATES = 2_000
_NEVER = np.iinfo(np.int64).max


def embedding_text(text: str, tags: Sequence[str]) -> str:
    """What a fact embeds as: its text and its tags (as the reference does)."""
    return " ".join([text, *tags])


class SemanticIndex:
    def __init__(self, embedder: Embedder, log: Callable[[str], None]) -> None:
        self.embedder = embedder
        self._log = log
        self._failing = False
        self._dim: int | None = None
        self._n = 0
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        # Word-major (``sketch.differing_bits``): one row per 64-bit word, one column per fact.
        self._sketches = np.zeros((sketch.SKETCH_BITS // 64, 0), dtype=np.uint64)
        self._planes: npt.NDArray[np.float32] | None = None
        self._seqs = np.zeros(0, dtype=np.int64)
        self._alive = np.zeros(0, dtype=bool)
        self._expires = np.zeros(0, dtype=np.int64)
        self._proven = np.zeros(0, dtype=bool)
        self._row_of: dict[int, int] = {}
        self._dead: set[int] = set()
        self._vector_cursor = 0
        self._tomb_cursor = 0
        self._checked_seq = 0  # every fact up to here has a vector of this embedder or is dead

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
        with file.reading("recall") as conn:
            if conn is None:
                return
            for tomb_seq, fact_seq in vector_queries.tombstoned_since(conn, self._tomb_cursor):
                self._tomb_cursor = tomb_seq
                self._dead.add(fact_seq)
                row = self._row_of.get(fact_seq)
                if row is not None:
                    self._alive[row] = False
            self._load_vectors(
                vector_queries.vectors_since(conn, self.embedder.id, self.dim, self._vector_cursor)
            )
            newest = vector_queries.newest_seq(conn)
            missing = vector_queries.unembedded_since(
                conn, self.embedder.id, self._checked_seq, CATCH_UP_BATCH
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
        complete = len(missing) < CATCH_UP_BATCH
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

    def _load_vectors(self, rows: list[tuple[int, int, bytes, int | None, int]]) -> None:
        if not rows:
            return
        self._vector_cursor = int(rows[-1][0])
        self._grow(len(rows))
        start = self._n
        block = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32)
        vectors = block.reshape(len(rows), self.dim)
        self._matrix[start : start + len(rows)] = vectors
        self._sketches[:, start : start + len(rows)] = sketch.sketch(vectors, self._planes_of()).T
        for offset, (_, seq, _, expires, proven) in enumerate(rows):
            row = start + offset
            self._seqs[row] = seq
            self._alive[row] = seq not in self._dead
            self._expires[row] = _NEVER if expires is None else expires
            self._proven[row] = bool(proven)
            self._row_of[int(seq)] = row
        self._n += len(rows)

    def _grow(self, extra: int) -> None:
        needed = self._n + extra
        capacity = self._matrix.shape[0]
        if needed <= capacity and self._matrix.shape[1] == self.dim:
            return
        capacity = max(needed, capacity * 2, 1024)
        matrix = np.zeros((capacity, self.dim), dtype=np.float32)
        if self._n:
            matrix[: self._n] = self._matrix[: self._n]
        self._matrix = matrix
        sketches = np.zeros((self._sketches.shape[0], capacity), dtype=np.uint64)
        if self._n:
            sketches[:, : self._n] = self._sketches[:, : self._n]
        self._sketches = sketches
        self._seqs = _resized(self._seqs, capacity)
        self._alive = _resized(self._alive, capacity)
        self._expires = _resized(self._expires, capacity)
        self._proven = _resized(self._proven, capacity)

    # -- ranking --------------------------------------------------------------------------

    def _planes_of(self) -> npt.NDArray[np.float32]:
        if self._planes is None:
            self._planes = sketch.projections(self.dim)
        return self._planes

    def nearest(self, query: npt.NDArray[np.float32], now_ms: int, limit: int) -> list[int]:
        """Seqs of the live facts most similar to ``query`` (cosine > 0 only), best first."""
        n = self._n
        if n == 0 or limit < 1:
            return []
        usable = self._alive[:n] & (self._expires[:n] > now_ms)
        if n >= SKETCH_FROM_ROWS:
            return self._nearest_sketched(query, usable, limit)
        scores = self._matrix[:n] @ query
        scores = np.where(usable & (scores > 0), scores, -np.inf)
        top = np.argpartition(-scores, limit)[:limit] if limit < n else np.arange(n)
        # Ties broken by row order (write order), so the ranking is deterministic.
        order = top[np.lexsort((top, -scores[top]))]
        return [int(self._seqs[row]) for row in order if scores[row] > -np.inf]

    def _nearest_sketched(
        self, query: npt.NDArray[np.float32], usable: npt.NDArray[np.bool_], limit: int
    ) -> list[int]:
        n = self._n
        query_sketch = sketch.sketch(query[None, :], self._planes_of())
        distance = sketch.differing_bits(self._sketches[:, :n], query_sketch)
        distance[~usable] = sketch.SKETCH_BITS + 1
        wanted = min(n, max(SKETCH_CANDIDATES, limit))
        candidates = np.argpartition(distance, wanted - 1)[:wanted] if wanted < n else np.arange(n)
        candidates = candidates[usable[candidates]]
        scores = self._matrix[candidates] @ query
        keep = scores > 0
        candidates, scores = candidates[keep], scores[keep]
        order = np.lexsort((candidates, -scores))[:limit]
        return [int(self._seqs[row]) for row in candidates[order]]


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
