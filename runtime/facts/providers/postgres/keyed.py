"""Keyed facts and point reads on PostgreSQL: the SQL ``PostgresFactProvider`` runs for them,
always inside its transaction and within its binding (tenant, spec, session).

A keyed write takes a transaction-scoped advisory lock on its (binding, scope key, key) before
it reads the live fact it replaces, so concurrent writes to one key run one after another and
each sees the last one's result (READ COMMITTED: every statement reads what committed before
it): no append is lost, and at most one fact per key is ever live. The lock covers the case row
locks cannot: no live fact yet, two writers, two inserts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.model import FactRecord, from_ms
from specwire.runtime.facts.providers.postgres.sql import (
    IN_KEY,
    LIVE,
    PROVEN,
    key_of,
    key_params,
    subject_of,
    visible_clause,
)
from specwire.runtime.facts.providers.protocol import ReadRequest

if TYPE_CHECKING:
    from psycopg import Connection

_UNIT = "\x1f"


@dataclass(frozen=True)
class LiveKeyed:
    id: str
    text: str


def lock(
    conn: Connection[Any],
    params: dict[str, Any],
    key: ScopeKey,
    kind: Literal["key", "text"],
    value: str,
) -> None:
    """Serialize writes to one key (or one normalized text, for ``if_absent``) of one scope key
    until the transaction ends."""
    name = _UNIT.join(
        [kind, params["tenant"], params["spec"], params["session"], key.scope, subject_of(key)]
    )
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (name + _UNIT + value,))


def live_keyed(
    conn: Connection[Any], params: dict[str, Any], key: ScopeKey, fact_key: str
) -> LiveKeyed | None:
    """The live fact with ``fact_key`` in ``key``, locked (at most one is live)."""
    row = conn.execute(
        f"""SELECT f.id, f.text FROM facts f WHERE {LIVE} AND f.fact_key = %(fact_key)s
        AND {IN_KEY} ORDER BY f.seq DESC LIMIT 1 FOR UPDATE OF f""",
        {**params, **key_params(key), "fact_key": fact_key},
    ).fetchone()
    return None if row is None else LiveKeyed(row[0], row[1])


def appended(old: str, new: str) -> str:
    """What an ``append`` stores: the old text, a new line, the new text."""
    return old + "\n" + new


_RECORD = f"""SELECT f.id, f.text, f.tags, f.created_at, f.expires_at, {PROVEN},
    f.scope, f.subject, f.fact_key, f.tier
FROM facts f WHERE {LIVE} AND {{where}} AND {{visible}}"""


def records(conn: Connection[Any], params: dict[str, Any], request: ReadRequest) -> list[Any]:
    """The rows a point read returns (unsorted): the fact with ``request.id``, or every live
    fact with ``request.key``, in a visible scope key. A fact outside ``visible`` is absent."""
    visible, visible_params = visible_clause(request.visible, None)
    if request.id is not None:
        where, selector = "f.id = %(read_id)s", {"read_id": request.id}
    else:
        where, selector = "f.fact_key = %(read_key)s", {"read_key": request.key or ""}
    return conn.execute(
        _RECORD.format(where=where, visible=visible), {**params, **visible_params, **selector}
    ).fetchall()


def record(row: Sequence[Any]) -> FactRecord:
    return FactRecord(
        id=row[0],
        text=row[1],
        tags=tuple(row[2]),
        created_at=from_ms(int(row[3])),
        expires_at=None if row[4] is None else from_ms(int(row[4])),
        evidence_backed=bool(row[5]),
        scope=key_of(row[6], row[7]),
        key=row[8],
        tier=row[9],
    )
