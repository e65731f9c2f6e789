"""Did-you-mean suggestions for misspelt names."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (case-insensitive), or ``None`` when nothing is close."""
    pool = sorted(set(candidates))
    by_lower: dict[str, str] = {}
    for candidate in pool:
        by_lower.setdefault(candidate.lower(), candidate)
    matches = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[matches[0]] if matches else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean "x"?)`` or the empty string."""
    match = closest(word, candidates)
    return f' (did you mean "{match}"?)' if match is not None else ""
