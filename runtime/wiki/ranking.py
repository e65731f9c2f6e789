"""Ranking articles: BM25 over per-article term counts, cosine over embedder vectors, and
reciprocal-rank fusion of the two.

BM25 (k1 = 1.5, b = 0.75, idf = ln((N − df + 0.5)/(df + 0.5) + 1)) scores only the articles that
hold a query term. Each article's term counts are computed once per version of its file
(``runtime.wiki.snapshot``); the postings of a term are gathered the first time a query asks for
it and kept for the life of the index, so a change to one article costs one article's
tokenizing, not a rebuild of the whole index. Ties are broken by slug: rankings are stable.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

K1: Final = 1.5
B: Final = 0.75
RRF_K: Final = 60

_TOKEN_RE: Final = re.compile(r"[a-z0-9]+")

Posting = tuple[str, int]  # (slug, term frequency)


def tokenize(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


def term_counts(text: str) -> Counter[str]:
    return Counter(tokenize(text))


class Bm25Index:
    """A BM25 index of ``{slug: term counts}`` (the counts are shared, never changed).

    ``previous`` is the index this one replaces and ``changed`` the slugs whose counts differ
    between the two (added, edited or gone): a term the previous index already gathered is
    carried over by patching those slugs only, instead of looking through every article.
    """

    def __init__(
        self,
        documents: Mapping[str, Counter[str]],
        previous: Bm25Index | None = None,
        changed: frozenset[str] = frozenset(),
    ) -> None:
        self._documents = documents
        self._lengths = {slug: counts.total() for slug, counts in documents.items()}
        total = sum(self._lengths.values())
        self._avgdl = total / len(self._lengths) if self._lengths else 0.0
        self._postings: dict[str, list[Posting]] = {}
        self._previous = previous
        self._changed = changed
        if previous is not None:
            previous._previous = None  # one step back only: no chain of old indexes is kept

    def __len__(self) -> int:
        return len(self._documents)

    def _postings_of(self, term: str) -> list[Posting]:
        postings = self._postings.get(term)
        if postings is not None:
            return postings
        previous = self._previous
        carried = previous._postings.get(term) if previous is not None else None
        if carried is not None:
            postings = [p for p in carried if p[0] not in self._changed]
            postings += [
                (slug, counts[term])
                for slug in self._changed
                if (counts := self._documents.get(slug)) is not None and term in counts
            ]
        else:
            postings = [(slug, c[term]) for slug, c in self._documents.items() if term in c]
        self._postings[term] = postings  # the same value whichever thread writes it
        return postings

    def rank(self, query: str, *, allowed: frozenset[str] | None = None) -> list[tuple[str, float]]:
        """``(slug, score)`` with a positive score, best first (ties by slug)."""
        n = len(self._documents)
        scores: dict[str, float] = {}
        avgdl = self._avgdl or 1.0
        for term in set(tokenize(query)):
            postings = self._postings_of(term)
            if not postings:
                continue
            idf = math.log((n - len(postings) + 0.5) / (len(postings) + 0.5) + 1)
            for slug, tf in postings:
                norm = 1 - B + B * self._lengths[slug] / avgdl
                gain = idf * tf * (K1 + 1) / (tf + K1 * norm)
                scores[slug] = scores.get(slug, 0.0) + gain
        ranked = [
            (slug, score)
            for slug, score in scores.items()
            if score > 0 and (allowed is None or slug in allowed)
        ]
        ranked.sort(key=lambda item: (-item[1], item[0]))
        return ranked


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two vectors (embedders return L2-normalised ones; normalised here anyway)."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return float(dot / norm) if norm else 0.0


def rrf(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> dict[str, float]:
    """Reciprocal-rank fusion: each ranking votes ``1/(k + rank)`` (rank from 1)."""
    votes: dict[str, float] = {}
    for ranking in rankings:
        for rank, slug in enumerate(ranking, start=1):
            votes[slug] = votes.get(slug, 0.0) + 1.0 / (k + rank)
    return votes
