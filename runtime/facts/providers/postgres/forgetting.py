"""Forgetting on PostgreSQL: by id or by query (every word must match), in the order the
local store forgets (recall's BM25 first), and the tombstone every path that ends a fact writes
(forget, the owner's forget, sweeps, quarantine on read).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.facts import validation
from specwire.runtime.facts.model import InvalidRequestError
from specwire.runtime.facts.providers.postgres import bm25
from specwire.runtime.facts.providers.postgres.binding import Binding, FactScope
from specwire.runtime.facts.providers.postgres.sql import LIVE as _LIVE
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.providers.postgres.sql import visible_clause
from specwire.runtime.facts.providers.protocol import ForgetRequest, ForgetResult
from specwire.runtime.facts.text import MAX_QUERY_TERMS, query_terms

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


def forget(db: Binding, request: ForgetRequest, *, scope: FactScope | None = None) -> ForgetResult:
    db.check_scope(scope)
    reason = validation.reason(request.reason)
    # A fact outside ``visible`` is left alone, as if it did not exist; with ``visible`` (a
    # model's forget) only plain facts, never a tier note. None: the owner's, every fact.
    visible, visible_params = visible_clause(
        request.visible, None if request.visible is None else ()
    )
    if request.id is not None:
        with db.transaction("forget") as conn:
            params = {**db.params(db.now_ms()), **visible_params}
            row = conn.execute(
                f"SELECT f.id, f.text FROM facts f WHERE f.id = %(id)s AND {_LIVE} "
                f"AND {visible} FOR UPDATE OF f",
                {**params, "id": request.id},
            ).fetchone()
            if row is None:
                return ForgetResult(0)
            return forgotten(conn, [(row[0], row[1])], reason, params)
    assert request.query is not None
    terms = query_terms(request.query, limit=None)
    if len(terms) > MAX_QUERY_TERMS:
        raise InvalidRequestError(
            f"the forget query has too many distinct words ({len(terms)}; at most "
            f"{MAX_QUERY_TERMS})"
        )
    if not terms:
        return ForgetResult(0)
    with db.transaction("forget") as conn:
        params = {**db.params(db.now_ms()), **visible_params}
        rows = conn.execute(
            f"""SELECT f.id, f.text FROM facts f
            WHERE f.tsv @@ to_tsquery('simple', %(q)s) AND {_LIVE} AND {visible}
            ORDER BY f.seq LIMIT %(cap)s FOR UPDATE OF f""",
            {**params, "q": _tsquery(terms, every=True), "cap": _cap(request.at_most)},
        ).fetchall()
        if request.at_most is not None and len(rows) > request.at_most:
            raise InvalidRequestError(
                f"that query matches {len(rows)} memories, more than {request.at_most} at "
                "once: use more words or forget by id. Nothing was forgotten."
            )
        facts = [(row[0], row[1]) for row in rows]
        if len(facts) > 1:
            facts = _by_bm25(conn, params, terms, facts, visible, visible_params)
        return forgotten(conn, facts, reason, params)


def forgotten(
    conn: Connection[Any],
    facts: Sequence[tuple[str, str]],
    reason: str | None,
    params: dict[str, Any],
) -> ForgetResult:
    done = set(tombstone(conn, [fact_id for fact_id, _ in facts], "forgotten", reason, params))
    kept = [(fact_id, text) for fact_id, text in facts if fact_id in done]
    return ForgetResult(
        len(kept), tuple(fact_id for fact_id, _ in kept), tuple(text for _, text in kept)
    )


def tombstone(
    conn: Connection[Any],
    ids: Sequence[str],
    kind: str,
    reason: str | None,
    params: dict[str, Any],
) -> list[str]:
    done: list[str] = []
    for fact_id in ids:
        row = conn.execute(
            "INSERT INTO tombstones (target, tenant, spec, session, kind, at, reason) "
            "SELECT f.id, f.tenant, f.spec, f.session, %(kind)s, %(now)s, %(reason)s "
            f"FROM facts f WHERE f.id = %(id)s AND {_SCOPE} "
            "ON CONFLICT (target) DO NOTHING RETURNING target",
            {**params, "id": fact_id, "kind": kind, "reason": reason},
        ).fetchone()
        if row is not None:
            done.append(row[0])
    return done
