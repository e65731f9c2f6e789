"""The write paths of PostgreSQL facts: retain (plain, ``if_absent``, superseding), keyed
writes, and the insert every write path goes through (bulk loads: ``bulk``; edits:
``updating``; tombstones: ``forgetting``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.facts import validation
from specwire.runtime.facts.model import (
    MAX_KEYED_TEXT_BYTES,
    CapExceededError,
    InvalidRequestError,
)
from specwire.runtime.facts.providers.postgres import admin as admin_sql
from specwire.runtime.facts.providers.postgres import keyed, quarantine
from specwire.runtime.facts.providers.postgres.binding import Binding, FactScope
from specwire.runtime.facts.providers.postgres.retained import (
    embedded_text,
    expiry,
    optional_time,
    text_bytes,
)
from specwire.runtime.facts.providers.postgres.schema import vector_table
from specwire.runtime.facts.providers.postgres.sql import IN_KEY, key_of, key_params
from specwire.runtime.facts.providers.postgres.sql import LIVE as _LIVE
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.providers.protocol import RetainRequest, RetainResult
from specwire.runtime.facts.text import document_terms
from specwire.runtime.facts.validation import NewFact

if TYPE_CHECKING:
    from psycopg import Connection


def retain(db: Binding, request: RetainRequest, *, scope: FactScope | None = None) -> RetainResult:
    db.check_scope(scope)
    if request.supersedes is not None:
        validation.memory_id(request.supersedes)
    new = NewFact(
        request.text,
        request.tags,
        request.ttl_ms,
        request.provenance,
        scope=request.scope,
        key=request.key,
        tier=request.tier,
    )
    hit = db.screened(new)
    if hit is not None:
        return quarantine.hold(db, new, hit)
    if request.key is not None:
        return retain_keyed(db, request, new)
    vector = db.vector([embedded_text(new)])
    with db.transaction("retain") as conn:
        now = db.now_ms()
        params = db.params(now)
        expires = expiry(new, now)
        if request.supersedes is not None:
            lock_live(conn, request.supersedes, params, new)
            fact_id = insert(db, conn, new, now, vector)
            conn.execute(
                f"UPDATE facts f SET superseded_by = %(by)s WHERE f.id = %(old)s AND {_SCOPE}",
                {**params, "by": fact_id, "old": request.supersedes},
            )
            conn.execute(
                "INSERT INTO tombstones (target, tenant, spec, session, kind, at, "
                "superseded_by) VALUES (%(old)s, %(tenant)s, %(spec)s, %(session)s, "
                "'superseded', %(now)s, %(by)s)",
                {**params, "by": fact_id, "old": request.supersedes},
            )
            return RetainResult(fact_id, True, expires, request.supersedes, bytes=text_bytes(new))
        if request.if_absent:
            # Equal text counts only among live plain facts of the same scope key.
            keyed.lock(conn, params, new.scope, "text", new.norm_text)
            row = conn.execute(
                f"SELECT f.id, f.expires_at, f.text, f.tags FROM facts f WHERE {_LIVE} "
                f"AND f.norm_text = %(norm)s AND {IN_KEY} AND f.fact_key IS NULL "
                "ORDER BY f.seq LIMIT 1",
                {**params, **key_params(new.scope), "norm": new.norm_text},
            ).fetchone()
            if row is not None:
                return RetainResult(
                    row[0], False, optional_time(row[1]), text=row[2], tags=tuple(row[3])
                )
        fact_id = insert(db, conn, new, now, vector)
        return RetainResult(fact_id, True, expires, bytes=text_bytes(new))


def retain_keyed(db: Binding, request: RetainRequest, new: NewFact) -> RetainResult:
    """Replace (or append to) the live fact with ``request.key`` in ``request.scope``, in
    one transaction under that key's lock, so concurrent appends all land."""
    assert request.key is not None
    vector = None if request.mode == "append" else db.vector([embedded_text(new)])
    with db.transaction("retain") as conn:
        now = db.now_ms()
        params = db.params(now)
        keyed.lock(conn, params, new.scope, "key", request.key)
        old = keyed.live_keyed(conn, params, new.scope, request.key)
        current = 0 if old is None else len(old.text.encode("utf-8"))
        text = new.text
        if request.mode == "append" and old is not None:
            text = keyed.appended(old.text, new.text)
        size = len(text.encode("utf-8"))
        cap = min(request.max_bytes or MAX_KEYED_TEXT_BYTES, MAX_KEYED_TEXT_BYTES)
        if size > cap:
            raise CapExceededError(request.key, cap, current, size)
        stored = new
        if text != new.text:
            stored = NewFact(
                text,
                new.tags,
                new.ttl_ms,
                new.provenance,
                scope=new.scope,
                key=new.key,
                tier=new.tier,
            )
            vector = db.vector([embedded_text(stored)])
        fact_id = insert(db, conn, stored, now, vector)
        if old is not None:
            admin_sql.link_superseded(conn, params, old.id, fact_id, now, None)
        return RetainResult(
            fact_id,
            True,
            expiry(stored, now),
            None if old is None else old.id,
            bytes=text_bytes(stored),
        )


def lock_live(conn: Connection[Any], old_id: str, params: dict[str, Any], new: NewFact) -> None:
    """Lock the live fact ``new`` replaces; refused when it is not live or belongs to
    another scope key (a later write never moves or widens a fact)."""
    row = conn.execute(
        f"SELECT f.scope, f.subject FROM facts f WHERE f.id = %(id)s AND {_LIVE} FOR UPDATE OF f",
        {**params, "id": old_id},
    ).fetchone()
    if row is not None:
        if key_of(row[0], row[1]) != new.scope:
            raise InvalidRequestError(f"cannot supersede {old_id}: it belongs to another scope")
        return
    status = conn.execute(
        f"""SELECT CASE
            WHEN f.superseded_by IS NOT NULL OR t.kind = 'superseded' THEN 'superseded'
            WHEN t.kind = 'forgotten' THEN 'forgotten'
            ELSE 'expired' END
        FROM facts f LEFT JOIN tombstones t ON t.target = f.id
        WHERE f.id = %(id)s AND {_SCOPE}""",
        {**params, "id": old_id},
    ).fetchone()
    if status is None:
        raise StoreError(f"no memory with id {old_id}")
    raise StoreError(f"cannot supersede {old_id}: it is {status[0]}, not live")


def insert(
    db: Binding, conn: Connection[Any], new: NewFact, now: int, vector: list[str] | None
) -> str:
    for _ in range(3):
        fact_id = new_memory_id()
        row = conn.execute(
            """INSERT INTO facts (id, tenant, spec, session, text, norm_text, terms, tags,
            created_at, expires_at, session_id, evidence, scope, subject, fact_key, tier)
            VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(text)s, %(norm)s, %(terms)s,
            %(tags)s, %(now)s, %(expires)s, %(session_id)s, %(evidence)s, %(fact_scope)s,
            %(fact_subject)s, %(fact_key)s, %(tier)s)
            ON CONFLICT (id) DO NOTHING RETURNING id""",
            {
                **db.params(now),
                **key_params(new.scope),
                "fact_key": new.key,
                "tier": new.tier,
                "id": fact_id,
                "text": new.text,
                "norm": new.norm_text,
                "terms": document_terms(new.text, new.tags),
                "tags": list(new.tags),
                "expires": None if new.ttl_ms is None else now + new.ttl_ms,
                "session_id": new.provenance.session_id,
                "evidence": list(new.provenance.evidence),
            },
        ).fetchone()
        if row is not None:
            if vector is not None and db.embedder is not None:
                assert db.dim is not None
                conn.execute(
                    f"""INSERT INTO {vector_table(db.dim)}
                    (fact_id, tenant, spec, session, embedder, embedding)
                    VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(embedder)s,
                    %(vec)s::vector)""",
                    {
                        **db.scope.params(),
                        "id": fact_id,
                        "embedder": db.embedder.id,
                        "vec": vector[0],
                    },
                )
            return fact_id
    raise StoreError("could not draw a free memory id")
