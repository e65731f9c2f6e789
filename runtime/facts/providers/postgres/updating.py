"""``update()`` on PostgreSQL: a live plain fact's text and tags change under its id, the old
version kept as a fact of its own, as the file store keeps it (``runtime.facts.sql.queries``
``edit_live``): a new id, the same creation time, scope and provenance, superseded by the
edited fact with reason ``updated``. The old version takes the fact's vector (it embeds the old
text); the edited fact gets the new text's. ``tsv`` is generated from ``terms``, so full text
follows the edit by itself. One transaction, the fact's row locked first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.model import InvalidRequestError
from specwire.runtime.facts.providers.postgres import quarantine
from specwire.runtime.facts.providers.postgres.binding import Binding, FactScope
from specwire.runtime.facts.providers.postgres.retained import (
    embedded_text,
    optional_time,
    text_bytes,
)
from specwire.runtime.facts.providers.postgres.schema import vector_table
from specwire.runtime.facts.providers.postgres.sql import LIVE, SCOPE, key_of
from specwire.runtime.facts.providers.protocol import RetainResult, UpdateRequest
from specwire.runtime.facts.text import document_terms
from specwire.runtime.facts.validation import NewFact

if TYPE_CHECKING:
    from psycopg import Connection

UPDATED = "updated"  # the old version's tombstone reason, as the file store's
_KEPT = (
    "tenant, spec, session, text, norm_text, terms, tags, created_at, expires_at, session_id, "
    "evidence, scope, subject, fact_key, tier"
)


def locked_live(
    conn: Connection[Any],
    params: dict[str, Any],
    fact_id: str,
    visible: tuple[ScopeKey, ...],
) -> tuple[ScopeKey, str, tuple[str, ...]]:
    """Lock live fact ``fact_id`` of this scope; its scope key, text and tags. A fact outside
    ``visible``, a tier note, a dead or unknown one is unknown (``StoreError``); a keyed one is
    written by its key (``InvalidRequestError``)."""
    row = conn.execute(
        f"SELECT f.scope, f.subject, f.fact_key, f.tier, f.text, f.tags FROM facts f "
        f"WHERE f.id = %(id)s AND {LIVE} FOR UPDATE OF f",
        {**params, "id": fact_id},
    ).fetchone()
    if row is None or row[3] is not None or key_of(row[0], row[1]) not in visible:
        raise StoreError(f"no live memory with id {fact_id}")
    if row[2] is not None:
        raise InvalidRequestError(
            f"cannot update {fact_id}: it is a keyed memory; write it by its key"
        )
    return key_of(row[0], row[1]), row[4], tuple(row[5])


def edit_live(
    conn: Connection[Any],
    params: dict[str, Any],
    fact_id: str,
    new: NewFact,
    vector_table: str | None,
) -> str:
    """Write the old version of locked fact ``fact_id`` as a fact of its own, move its vector
    there and change the fact to ``new``'s text and tags; returns the old version's id.

    As the file store orders them, the old version keeps the fact's ``seq`` and the edited fact
    moves to a new, higher one (ties in every ranking go to the older fact: after an update
    both backends call the edited fact the newer). The lexical triggers pair an edit's rows by
    ``seq``, so the fact moves with no terms: its terms are emptied (its postings and counts
    leave), it moves, the old version is written at the old ``seq`` (posted, then unposted by its
    tombstone), and the new terms arrive with the new text at the new ``seq``."""
    row = conn.execute(
        f"SELECT f.seq, f.terms FROM facts f WHERE f.id = %(id)s AND {SCOPE}",
        {**params, "id": fact_id},
    ).fetchone()
    if row is None:
        raise StoreError(f"no live memory with id {fact_id}")
    old_seq, old_terms = int(row[0]), str(row[1])
    conn.execute(
        f"UPDATE facts f SET terms = '' WHERE f.id = %(id)s AND {SCOPE}", {**params, "id": fact_id}
    )
    conn.execute(
        "UPDATE facts SET seq = nextval(pg_get_serial_sequence('facts', 'seq')) WHERE id = %(id)s",
        {"id": fact_id},
    )
    kept = _KEPT.replace(" terms,", " %(old_terms)s,")
    for _ in range(3):
        old_id = new_memory_id()
        inserted = conn.execute(
            f"INSERT INTO facts (seq, id, superseded_by, {_KEPT}) "
            f"SELECT %(old_seq)s, %(old)s, f.id, {kept} FROM facts f "
            f"WHERE f.id = %(id)s AND {SCOPE} ON CONFLICT (id) DO NOTHING RETURNING id",
            {**params, "id": fact_id, "old": old_id, "old_seq": old_seq, "old_terms": old_terms},
        ).fetchone()
        if inserted is not None:
            break
    else:
        raise StoreError("could not draw a free memory id")
    conn.execute(
        "INSERT INTO tombstones (target, tenant, spec, session, kind, at, reason, superseded_by) "
        "VALUES (%(old)s, %(tenant)s, %(spec)s, %(session)s, 'superseded', %(now)s, "
        "%(reason)s, %(id)s)",
        {**params, "id": fact_id, "old": old_id, "reason": UPDATED},
    )
    if vector_table is not None:
        conn.execute(
            f"UPDATE {vector_table} SET fact_id = %(old)s WHERE fact_id = %(id)s "
            "AND tenant = %(tenant)s AND spec = %(spec)s AND session = %(session)s",
            {**params, "id": fact_id, "old": old_id},
        )
    conn.execute(
        f"UPDATE facts f SET text = %(text)s, norm_text = %(norm)s, terms = %(terms)s, "
        f"tags = %(tags)s WHERE f.id = %(id)s AND {SCOPE}",
        {
            **params,
            "id": fact_id,
            "text": new.text,
            "norm": new.norm_text,
            "terms": document_terms(new.text, new.tags),
            "tags": list(new.tags),
        },
    )
    return old_id


def update(db: Binding, request: UpdateRequest, *, scope: FactScope | None = None) -> RetainResult:
    db.check_scope(scope)
    with db.transaction("update") as conn:
        key, text, tags = locked_live(conn, db.params(db.now_ms()), request.id, request.visible)
    new = NewFact(request.text, request.tags, scope=key)
    if (new.text, new.tags) == (text, tags):
        return RetainResult(request.id, False, None, text=text, tags=tags)
    hit = db.screened(new)
    if hit is not None:
        return quarantine.hold(db, new, hit)
    vector = db.vector([embedded_text(new)])
    with db.transaction("update") as conn:
        params = db.params(db.now_ms())
        if locked_live(conn, params, request.id, request.visible) != (key, text, tags):
            raise StoreError(f"{request.id} changed while it was being updated: try again")
        table = None if db.dim is None else vector_table(db.dim)
        old_id = edit_live(conn, params, request.id, new, table)
        if vector is not None and db.embedder is not None and table is not None:
            conn.execute(
                f"INSERT INTO {table} (fact_id, tenant, spec, session, embedder, embedding) "
                "VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(embedder)s, "
                "%(vec)s::vector)",
                {**params, "id": request.id, "embedder": db.embedder.id, "vec": vector[0]},
            )
        expires = conn.execute(
            "SELECT expires_at FROM facts WHERE id = %(id)s", {"id": request.id}
        ).fetchone()
    db.clean.discard(request.id)
    return RetainResult(
        request.id,
        True,
        optional_time(expires[0] if expires else None),
        old_id,
        bytes=text_bytes(new),
    )
