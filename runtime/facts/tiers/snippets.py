"""The part of a note a search hit shows: the line that matches the query best.

A note is ranked whole by the provider; the hit then points at one line (``line``, 1-based) and
shows it, with its neighbours when they fit, within ``MAX_SNIPPET_CHARS``. A line longer than
that is cut around its first matching word. The whole note is one ``memory_read`` away.
"""

from __future__ import annotations

from dataclasses import dataclass

from specwire.runtime.facts.text import query_terms, tokenize
from specwire.runtime.facts.tiers.layout import MAX_SNIPPET_CHARS

_ELLIPSIS = "…"


@dataclass(frozen=True)
class Snippet:
    text: str
    # 1-based line of the note the snippet centres on.
    line: int


def snippet_of(text: str, query: str, max_chars: int = MAX_SNIPPET_CHARS) -> Snippet:
    lines = text.splitlines() or [""]
    terms = set(query_terms(query, limit=None))
    best = _best_line(lines, terms)
    if len(lines[best]) > max_chars:
        return Snippet(_clip_line(lines[best], terms, max_chars), best + 1)
    start, end = best, best + 1
    # Its neighbours, the one before first, when the whole still fits.
    for index in (best - 1, best + 1):
        if 0 <= index < len(lines) and lines[index].strip():
            wider = min(start, index), max(end, index + 1)
            if len("\n".join(lines[wider[0] : wider[1]])) <= max_chars:
                start, end = wider
    return Snippet("\n".join(lines[start:end]), best + 1)


def _best_line(lines: list[str], terms: set[str]) -> int:
    """The line holding the most distinct query terms (the first one on a tie); the first
    non-empty line when none holds any."""
    best, best_count = -1, 0
    for index, line in enumerate(lines):
        count = len(terms.intersection(tokenize(line))) if terms else 0
        if count > best_count:
            best, best_count = index, count
    if best >= 0:
        return best
    return next((index for index, line in enumerate(lines) if line.strip()), 0)


def _clip_line(line: str, terms: set[str], max_chars: int) -> str:
    if len(line) <= max_chars:
        return line
    lowered = line.casefold()
    found = [lowered.find(term) for term in terms]
    first = min((at for at in found if at >= 0), default=0)
    start = max(0, min(first - max_chars // 4, len(line) - max_chars))
    body = line[start : start + max_chars]
    if start > 0:
        body = _ELLIPSIS + body[1:]
    if start + max_chars < len(line):
        body = body[:-1] + _ELLIPSIS
    return body
