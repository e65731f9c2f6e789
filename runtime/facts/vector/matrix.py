"""The vectors of the cosine index and their sign sketches, in two parts: a read-only base (a
snapshot's mapped arrays, never copied into the private heap) and an in-memory tail that grows
with the rows read since. Row ``r`` is base row ``r`` below ``base_rows``, tail row
``r - base_rows`` from there.

A base row is scored only after its checksum (``row_sums``) was checked, once per row: a damaged
snapshot raises ``DamagedVectorsError`` instead of answering from a wrong vector.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from specwire.runtime.facts.vector import sketch

Floats = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]
_VERIFY_BLOCK = 16_384


class DamagedVectorsError(Exception):
    """A snapshot row does not match its checksum."""


def row_sums(vectors: Floats) -> npt.NDArray[np.uint64]:
    """Per row, the sum of its 32-bit words each times its (1-based) position: a one-byte change
    or two swapped values change it."""
    words = vectors.view(np.uint32).astype(np.uint64)
    weights = np.arange(1, vectors.shape[1] + 1, dtype=np.uint64)
    sums: npt.NDArray[np.uint64] = (words * weights).sum(axis=1, dtype=np.uint64)
    return sums


class VectorMatrix:
    def __init__(
        self,
        dim: int,
        base: Floats | None = None,
        base_sketches: npt.NDArray[np.uint64] | None = None,
        base_sums: npt.NDArray[np.uint64] | None = None,
    ) -> None:
        self.dim = dim
        words = sketch.SKETCH_BITS // 64
        self._base = np.zeros((0, dim), dtype=np.float32) if base is None else base
        self._base_sketches = (
            np.zeros((words, 0), dtype=np.uint64) if base_sketches is None else base_sketches
        )
        self._base_sums = np.zeros(0, dtype=np.uint64) if base_sums is None else base_sums
        self._verified = np.zeros(len(self._base), dtype=bool)
        self.base_rows = len(self._base)
        self._tail = np.zeros((0, dim), dtype=np.float32)
        self._tail_sketches = np.zeros((words, 0), dtype=np.uint64)
        self._tail_rows = 0

    @property
    def rows(self) -> int:
        return self.base_rows + self._tail_rows

    def append(self, vectors: Floats, sketches: npt.NDArray[np.uint64]) -> None:
        """Add rows (``sketches``: one row of packed words per vector)."""
        needed = self._tail_rows + len(vectors)
        if needed > len(self._tail):
            capacity = max(needed, 2 * len(self._tail), 1024)
            tail = np.zeros((capacity, self.dim), dtype=np.float32)
            tail[: self._tail_rows] = self._tail[: self._tail_rows]
            tail_sketches = np.zeros((self._tail_sketches.shape[0], capacity), dtype=np.uint64)
            tail_sketches[:, : self._tail_rows] = self._tail_sketches[:, : self._tail_rows]
            self._tail, self._tail_sketches = tail, tail_sketches
        start = self._tail_rows
        self._tail[start:needed] = vectors
        self._tail_sketches[:, start:needed] = sketches.T
        self._tail_rows = needed

    def all_scores(self, query: Floats) -> Floats:
        """Every row's dot product with ``query``."""
        if self.base_rows:
            self._verify(np.flatnonzero(~self._verified))
        parts = [self._base @ query, self._tail[: self._tail_rows] @ query]
        return np.concatenate(parts) if self.base_rows else parts[1]

    def scores(self, rows: Rows, query: Floats) -> Floats:
        """The dot products of ``rows`` (any order) with ``query``."""
        in_base = rows < self.base_rows
        out = np.empty(len(rows), dtype=np.float32)
        if self.base_rows and bool(in_base.any()):
            base_rows = rows[in_base]
            self._verify(base_rows[~self._verified[base_rows]])
            out[in_base] = self._base[base_rows] @ query
        tail = ~in_base
        out[tail] = self._tail[rows[tail] - self.base_rows] @ query
        return out

    def differing_bits(self, query_sketch: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        """Every row's Hamming distance to the query's sketch."""
        out = np.empty(self.rows, dtype=np.uint16)
        out[: self.base_rows] = sketch.differing_bits(self._base_sketches, query_sketch)
        tail = self._tail_sketches[:, : self._tail_rows]
        out[self.base_rows :] = sketch.differing_bits(tail, query_sketch)
        return out

    def sketch_rows(self, rows: Rows) -> npt.NDArray[np.uint64]:
        """``(len(rows), SKETCH_BITS / 64)``: the sketches of ``rows``."""
        if not self._tail_rows:
            return np.ascontiguousarray(self._base_sketches[:, rows].T)
        in_base = rows < self.base_rows
        out = np.empty((len(rows), self._base_sketches.shape[0]), dtype=np.uint64)
        out[in_base] = self._base_sketches[:, rows[in_base]].T
        out[~in_base] = self._tail_sketches[:, rows[~in_base] - self.base_rows].T
        return out

    def parts(
        self,
    ) -> tuple[list[Floats], list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]]:
        """The matrix, the word-major sketches and the row sums, each as parts to write in order
        (what a snapshot saves, without joining a large base and tail in memory)."""
        tail = self._tail[: self._tail_rows]
        tail_sketches = self._tail_sketches[:, : self._tail_rows]
        sketches: list[npt.NDArray[np.uint64]] = []
        for word in range(self._base_sketches.shape[0]):
            sketches += [self._base_sketches[word], tail_sketches[word]]
        return [self._base, tail], sketches, [self._base_sums, row_sums(tail)]

    def _verify(self, rows: Rows) -> None:
        for start in range(0, len(rows), _VERIFY_BLOCK):  # in blocks: bounded scratch memory
            block = rows[start : start + _VERIFY_BLOCK]
            if bool(np.any(row_sums(self._base[block]) != self._base_sums[block])):
                raise DamagedVectorsError("a vector of the snapshot fails its checksum")
            self._verified[block] = True
