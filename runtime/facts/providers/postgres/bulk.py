"""Bulk loads on PostgreSQL (``retain_many``): every request validated and screened before
anything is written, then one transaction: the clean facts and their vectors by ``COPY``, the
flagged ones held in ``quarantine``.
"""

from __future__ import annotations

from collections.abc import Sequence

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.facts.model import InvalidRequestError
from specwire.runtime.facts.providers.postgres.binding import Binding, FactScope
from specwire.runtime.facts.providers.postgres.quarantine import insert_held
from specwire.runtime.facts.providers.postgres.retained import embedded_text, expiry
from specwire.runtime.facts.providers.postgres.schema import vector_table
from specwire.runtime.facts.providers.postgres.sql import subject_of
from specwire.runtime.facts.providers.protocol import RetainRequest, RetainResult
from specwire.runtime.facts.text import document_terms
from specwire.runtime.facts.validation import NewFact
from specwire.runtime.safety.injection import InjectionHit


def retain_many(
    db: Binding, requests: Sequence[RetainRequest], *, scope: FactScope | None = None
) -> list[RetainResult]:
    """Append several facts in one transaction: all of them, or none (the bulk path).

    Every request is validated and screened as ``retain`` does it before anything is
    written; a bad one is refused with its position and nothing is written. A request the
    scanner flags is held in ``quarantine`` in the same transaction and answered with
    ``quarantined`` set. Plain appends only: ``supersedes`` and ``if_absent`` are refused
    here (use ``retain``). The facts, and with an embedder their vectors (embedded in one
    batch before the transaction), go in by ``COPY``. One result per request, in order.
    """
    db.check_scope(scope)
    news: list[NewFact] = []
    for index, request in enumerate(requests):
        if not isinstance(request, RetainRequest):
            kind = type(request).__name__
            raise InvalidRequestError(
                f"item {index} is not a RetainRequest ({kind}); nothing was written"
            )
        if request.supersedes is not None or request.if_absent or request.key is not None:
            raise InvalidRequestError(
                f"item {index}: retain_many only appends (no supersedes, if_absent or "
                "key); nothing was written"
            )
        try:
            news.append(
                NewFact(
                    request.text,
                    request.tags,
                    request.ttl_ms,
                    request.provenance,
                    scope=request.scope,
                )
            )
        except InvalidRequestError as exc:
            raise InvalidRequestError(f"item {index}: {exc}; nothing was written") from exc
    if not news:
        return []
    hits = [db.screened(new) for new in news]
    clean = [new for new, hit in zip(news, hits, strict=True) if hit is None]
    vectors = db.vector([embedded_text(new) for new in clean]) if clean else None
    for attempt in range(3):
        try:
            return copy_many(db, news, hits, vectors)
        except StoreError as exc:
            import psycopg

            # Two drawn ids collided (2^-64 odds per pair): draw them all again.
            if attempt == 2 or not isinstance(exc.__cause__, psycopg.errors.UniqueViolation):
                raise
    raise AssertionError("unreachable")


def copy_many(
    db: Binding,
    news: Sequence[NewFact],
    hits: Sequence[InjectionHit | None],
    vectors: list[str] | None,
) -> list[RetainResult]:
    """One transaction: the clean facts (and their vectors) by ``COPY``, the flagged ones
    into ``quarantine``; fresh ids drawn for every row."""
    with db.transaction("retain many") as conn:
        now = db.now_ms()
        params = db.params(now)
        tenant, spec, session = params["tenant"], params["spec"], params["session"]
        ids = [new_memory_id() for _ in news]
        clean = [
            (i, new) for i, (new, hit) in enumerate(zip(news, hits, strict=True)) if hit is None
        ]
        if clean:
            with conn.cursor().copy(
                "COPY facts (id, tenant, spec, session, text, norm_text, terms, tags, "
                "created_at, expires_at, session_id, evidence, scope, subject) FROM STDIN"
            ) as copy:
                for i, new in clean:
                    copy.write_row(
                        (
                            ids[i],
                            tenant,
                            spec,
                            session,
                            new.text,
                            new.norm_text,
                            document_terms(new.text, new.tags),
                            list(new.tags),
                            now,
                            None if new.ttl_ms is None else now + new.ttl_ms,
                            new.provenance.session_id,
                            list(new.provenance.evidence),
                            new.scope.scope,
                            subject_of(new.scope),
                        )
                    )
        if clean and vectors is not None and db.embedder is not None:
            assert db.dim is not None
            with conn.cursor().copy(
                f"COPY {vector_table(db.dim)} "
                "(fact_id, tenant, spec, session, embedder, embedding) FROM STDIN"
            ) as copy:
                for (i, _), vector in zip(clean, vectors, strict=True):
                    copy.write_row((ids[i], tenant, spec, session, db.embedder.id, vector))
        held = [(i, new, hit) for i, (new, hit) in enumerate(zip(news, hits, strict=True)) if hit]
        for i, new, hit in held:
            insert_held(conn, ids[i], new, hit.label, params)
        return [
            RetainResult(ids[i], True, expiry(new, now), None, None if hit is None else hit.label)
            for i, (new, hit) in enumerate(zip(news, hits, strict=True))
        ]
