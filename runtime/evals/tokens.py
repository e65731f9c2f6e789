"""What "covered" means for the graders: tokens as the fact store cuts them, stop words dropped.

A text *covers* a target when at least 60% of the target's distinct tokens (``query_terms`` of
``runtime.facts.text``: NFKC-casefolded runs of letters and digits, stop words dropped) are among
the text's tokens. A target with no token is never covered.
"""

from __future__ import annotations

from collections.abc import Iterable

from specwire.runtime.facts.text import query_terms

COVER_THRESHOLD = 0.6


def terms(text: str) -> frozenset[str]:
    """The distinct non-stop-word tokens of ``text``."""
    return frozenset(query_terms(text, limit=None))


def coverage(target: frozenset[str], source: frozenset[str]) -> float:
    """The share of ``target``'s tokens found in ``source`` (0.0 for an empty target)."""
    if not target:
        return 0.0
    return len(target & source) / len(target)


def covers(source: str, target: str, threshold: float = COVER_THRESHOLD) -> bool:
    """Whether ``source`` holds at least ``threshold`` of ``target``'s tokens."""
    return coverage(terms(target), terms(source)) >= threshold


def covered_by_any(sources: Iterable[str], target: str, threshold: float = COVER_THRESHOLD) -> bool:
    """Whether one of ``sources`` (each on its own, never pooled) covers ``target``."""
    wanted = terms(target)
    return bool(wanted) and any(coverage(wanted, terms(s)) >= threshold for s in sources)
