"""BM25 over a vault's notes: the fact store's tokens and constants, an idf that stays positive.

The store's index (``facts.lexical``) uses FTS5's idf, ``log((N - df + 0.5) / (df + 0.5))``
clamped to a tiny positive value: fine over thousands of facts, but in a vault of a few dozen
notes a word found in more than half of them then weighs nothing, and a three-note vault ranks
"deploy" by note length alone. Here the idf is ``log(1 + (N - df + 0.5) / (df + 0.5))``
(always positive, the same order otherwise); ``K1`` and ``B`` are the store's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from specwire.runtime.facts.lexical.ranking import K1, B


class NoteIndex:
    """Postings of the notes' tokens (documents numbered from 0, in the order given)."""

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths = [len(tokens) for tokens in documents]
        for number, tokens in enumerate(documents):
            for term, count in Counter(tokens).items():
                self._postings.setdefault(term, []).append((number, count))
        total = sum(self._lengths)
        self._avgdl = total / len(documents) if documents and total else 1.0

    def rank(
        self, terms: Sequence[str], limit: int, admitted: Callable[[int], bool]
    ) -> list[tuple[int, float]]:
        """The best ``limit`` admitted documents for ``terms``: ``(number, score)``, best first,
        ties by number."""
        n = len(self._lengths)
        scores: dict[int, float] = {}
        for term in dict.fromkeys(terms):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1.0 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for number, count in postings:
                norm = K1 * (1.0 - B + B * self._lengths[number] / self._avgdl)
                scores[number] = scores.get(number, 0.0) + idf * count * (K1 + 1.0) / (count + norm)
        ranked = sorted(
            ((number, score) for number, score in scores.items() if admitted(number)),
            key=lambda pair: (-pair[1], pair[0]),
        )
        return ranked[:limit]
