"""Ranking articles: BM25 over an in-memory inverted index, cosine over embedder vectors, and
reciprocal-rank fusion of the two.

BM25 (k1 = 1.5, b = 0.75, idf = ln((N − df + 0.5)/(df + 0.5) + 1)) scores only the articles that
hold a query term, through postings built once per change of the article set, so a query costs
what its terms match, not what the wiki holds. Ties are broken by slug, so rankings are stable.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

K1: Final = 1.5
B: Final = 0.75
RRF_K: Final = 60

_TOKEN_RE: Final = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


@dataclass(frozen=True)
class _Posting:
    doc: int
    tf: int


class Bm25Index:
    """An immutable BM25 index of ``{slug: text}``."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self._slugs: list[str] = sorted(documents)
        self._lengths: list[int] = []
        postings: dict[str, list[_Posting]] = {}
        for doc, slug in enumerate(self._slugs):
            terms = Counter(tokenize(documents[slug]))
            self._lengths.append(sum(terms.values()))
            for term, tf in terms.items():
                postings.setdefault(term, []).append(_Posting(doc, tf))
        self._postings = postings
        total = sum(self._lengths)
        self._avgdl = total / len(self._lengths) if self._lengths else 0.0

    def __len__(self) -> int:
        return len(self._slugs)

    def rank(self, query: str, *, allowed: frozenset[str] | None = None) -> list[tuple[str, float]]:
        """``(slug, score)`` with a positive score, best first (ties by slug)."""
        n = len(self._slugs)
        scores: dict[int, float] = {}
        for term in set(tokenize(query)):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log((n - len(postings) + 0.5) / (len(postings) + 0.5) + 1)
            for posting in postings:
                norm = 1 - B + B * self._lengths[posting.doc] / (self._avgdl or 1.0)
                gain = idf * posting.tf * (K1 + 1) / (posting.tf + K1 * norm)
                scores[posting.doc] = scores.get(posting.doc, 0.0) + gain
        ranked = [
            (self._slugs[doc], score)
            for doc, score in scores.items()
            if score > 0 and (allowed is None or self._slugs[doc] in allowed)
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
