"""Forgetting on PostgreSQL: by id or by query (every word must match), in the order the
local store forgets (recall's BM25 first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.facts.providers.postgres import bm25

if TYPE_CHECKING:
    from psycopg import Connection


def _by_bm25(
    conn: Connection[Any],
    params: dict[str, Any],
    terms: Sequence[str],
    facts: Sequence[tuple[str, str]],
    visible: str,
    visible_params: dict[str, Any],
) -> list[tuple[str, str]]:
    """``facts`` (id, text) best first, ranked by recall's BM25 (``bm25.ranked``, limited to
    them), as the local store orders a forget by query; any it does not score (no positive
    score) after them, oldest first."""
    where = f"{visible} AND f.id = ANY(%(forget_ids)s)"
    ids = [fact_id for fact_id, _ in facts]
    ranked = bm25.ranked(
        conn, params, terms, len(facts), where, {**visible_params, "forget_ids": ids}
    )
    order = {str(row[0]): n for n, row in enumerate(ranked)}
    return sorted(facts, key=lambda fact: order.get(fact[0], len(order)))


def _cap(at_most: int | None) -> int | None:
    """Rows a forget by query locks: one past ``at_most`` proves there are too many."""
    return None if at_most is None else at_most + 1


def _tsquery(terms: Sequence[str], *, every: bool = False) -> str:
    """A ``to_tsquery`` string of quoted terms (tokens hold only letters, marks and digits)."""
    quoted = ["'" + term.replace("'", "''").replace("\\", "\\\\") + "'" for term in terms]
    return (" & " if every else " | ").join(quoted)
