"""``FrozenVocab``: a saved vocabulary looked up in place, so opening a snapshot builds no dict.

A million facts have a vocabulary of 100k+ terms; building a ``dict`` of them costs tens of
milliseconds at every open, while a recall looks up a handful of terms. The snapshot keeps the
terms as one UTF-8 blob (term ``i`` between ``starts[i]`` and ``starts[i + 1] - 1``, separated by
newlines, which no token contains) and ``order``, the term ids sorted by their bytes (the order of
code points), so a lookup is a binary search.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


class FrozenVocab:
    def __init__(
        self, blob: bytes, starts: npt.NDArray[np.int64], order: npt.NDArray[np.int32]
    ) -> None:
        self._blob = blob
        self._starts = starts
        self._order = order

    @classmethod
    def of(cls, terms: list[str]) -> FrozenVocab:
        encoded = [term.encode("utf-8") for term in terms]
        lengths = np.fromiter((len(item) + 1 for item in encoded), np.int64, len(encoded))
        starts = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        order = np.asarray(sorted(range(len(encoded)), key=encoded.__getitem__), dtype=np.int32)
        return cls(b"\n".join(encoded), starts, order)

    def __len__(self) -> int:
        return len(self._order)

    def lookup(self, term: str) -> int | None:
        key = term.encode("utf-8")
        lo, hi = 0, len(self._order)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._bytes(int(self._order[mid])) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self._order) and self._bytes(int(self._order[lo])) == key:
            return int(self._order[lo])
        return None

    def terms(self) -> list[str]:
        return self._blob.decode("utf-8").split("\n") if len(self._order) else []

    def parts(self) -> tuple[bytes, npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        """What a snapshot saves: the blob, the starts and the sorted order."""
        return self._blob, self._starts, self._order

    def _bytes(self, tid: int) -> bytes:
        return self._blob[int(self._starts[tid]) : int(self._starts[tid + 1]) - 1]
