"""The owner's operations on PostgreSQL facts (``providers.admin``): listing, reading,
forgetting, consolidating, importing, restoring, and releasing or dropping held writes, each in
one transaction of the provider's binding. The SQL and row mapping are ``postgres.admin``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.facts import validation
from specwire.runtime.facts.importing import ImportedFact, ImportResult, import_into
from specwire.runtime.facts.model import (
    Fact,
    FactStatus,
    InvalidRequestError,
    QuarantinedFact,
    SweepResult,
    from_ms,
)
from specwire.runtime.facts.providers.admin import EVERY_KEY, FactFilter, FactListing
from specwire.runtime.facts.providers.postgres import admin as admin_sql
from specwire.runtime.facts.providers.postgres import forgetting, keyed, sweeping, writing
from specwire.runtime.facts.providers.postgres import restore as restore_sql
from specwire.runtime.facts.providers.postgres.binding import Binding
from specwire.runtime.facts.providers.postgres.quarantine import insert_held
from specwire.runtime.facts.providers.postgres.retained import embedded_text, expiry
from specwire.runtime.facts.store import merged_item
from specwire.runtime.facts.validation import NewFact


def quarantined_ids(db: Binding) -> list[str]:
    """The ids of this scope's held writes, oldest first."""
    with db.transaction("list quarantined memories") as conn:
        rows = conn.execute(
            "SELECT q.id FROM quarantine q WHERE q.tenant = %(tenant)s AND q.spec = %(spec)s "
            "AND q.session = %(session)s ORDER BY q.created_at, q.seq",
            db.scope.params(),
        ).fetchall()
        return [row[0] for row in rows]


def list_facts(
    db: Binding, listing: FactListing, where: FactFilter = EVERY_KEY
) -> list[FactStatus]:
    with db.transaction("list memories") as conn:
        return admin_sql.listed(conn, db.params(db.now_ms()), listing, where)


def get_fact(db: Binding, fact_id: str) -> FactStatus | None:
    validation.memory_id(fact_id)
    with db.transaction("read a memory") as conn:
        return admin_sql.status_of(conn, db.params(db.now_ms()), fact_id)


def tombstone(db: Binding, fact_id: str, *, reason: str | None = None) -> Fact | None:
    validation.memory_id(fact_id)
    reason = validation.reason(reason)
    with db.transaction("forget") as conn:
        params = db.params(db.now_ms())
        fact = admin_sql.live_fact(conn, params, fact_id)
        if fact is None:
            return None
        forgetting.tombstone(conn, [fact_id], "forgotten", reason, params)
        return fact


def consolidate(
    db: Binding, survivor_id: str, duplicate_ids: Sequence[str], *, reason: str | None = None
) -> Fact:
    """Fold live duplicates into the survivor, in one transaction (the local store's
    rules: ``FactStore.consolidate``)."""
    validation.memory_id(survivor_id)
    for dup in duplicate_ids:
        validation.memory_id(dup)
    reason = validation.reason(reason)
    with db.transaction("consolidate memories") as conn:
        now = db.now_ms()
        params = db.params(now)
        survivor = admin_sql.live_fact(conn, params, survivor_id)
        if survivor is None:
            raise StoreError(f"cannot consolidate into {survivor_id}: it is not live")
        if survivor.key is not None:
            raise InvalidRequestError(f"cannot consolidate into {survivor_id}: it is keyed")
        # Only plain facts of the survivor's own scope key fold into it (a fact never moves).
        group = [
            fact
            for dup in dict.fromkeys(duplicate_ids)
            if dup != survivor_id
            and (fact := admin_sql.live_fact(conn, params, dup))
            and fact.key is None
            and fact.scope == survivor.scope
        ]
        merged = merged_item(survivor, group, now)
        new = None if merged is None else NewFact(*merged, scope=survivor.scope)
        if new is not None and db.screened(new) is not None:
            new = None  # never let a merge write what the scanner flags
        target = survivor
        if new is not None:
            vector = db.vector([embedded_text(new)])
            target_id = writing.insert(db, conn, new, now, vector)
            admin_sql.link_superseded(conn, params, survivor_id, target_id, now, reason)
            target = Fact(
                target_id,
                new.text,
                new.tags,
                from_ms(now),
                expiry(new, now),
                None,
                new.provenance,
                scope=new.scope,
            )
        for fact in group:
            admin_sql.link_superseded(conn, params, fact.id, target.id, now, reason)
        return target


def import_facts(db: Binding, facts: Sequence[ImportedFact]) -> ImportResult:
    """Import an export's facts in one transaction (``runtime.facts.importing``'s rules);
    imported facts carry no vector (full-text recall finds them)."""
    with db.transaction("import memories") as conn:
        now = db.now_ms()
        params = db.params(now)
        sink = admin_sql.PostgresImportSink(
            conn,
            params,
            screened=lambda new: None if (hit := db.screened(new)) is None else hit.label,
            insert=lambda c, new, created: writing.insert(db, c, new, created, None),
            hold=lambda c, new, rule: insert_held(c, new_memory_id(), new, rule, params),
        )
        return import_into(sink, facts, now)


def restore_facts(db: Binding, statuses: Sequence[FactStatus]) -> int:
    """Write the facts this scope lacks exactly as given (``runtime.facts.restoring``), in
    one transaction."""
    with db.transaction("restore memories") as conn:
        return restore_sql.restore_facts(conn, db.scope.params(), statuses)


def restore_quarantined(db: Binding, held: Sequence[QuarantinedFact]) -> int:
    """Hold the writes this scope lacks exactly as given, in one transaction."""
    with db.transaction("restore quarantined memories") as conn:
        return restore_sql.restore_held(conn, db.scope.params(), held)


def release(db: Binding, fact_id: str) -> Fact:
    """Store a held write as a live fact, unscreened (the owner vouched for it), in one
    transaction: under its own id unless a fact already has it (one flagged on read), its
    TTL starting now, in its scope key with its key and tier (a keyed write is refused
    while another live fact holds that key). Recall does not hold it again."""
    validation.memory_id(fact_id)
    with db.transaction("release a quarantined memory") as conn:
        now = db.now_ms()
        params = db.params(now)
        held = admin_sql.held_by_id(conn, params, fact_id, lock=True)
        if held is None:
            raise StoreError(f"no quarantined memory with id {fact_id}")
        new = NewFact(
            held.text,
            held.tags,
            held.ttl_ms,
            held.provenance,
            scope=held.scope,
            key=held.key,
            tier=held.tier,
        )
        if held.key is not None:
            keyed.lock(conn, params, new.scope, "key", held.key)
            if keyed.live_keyed(conn, params, new.scope, held.key) is not None:
                raise StoreError(
                    f"{held.key} has a live memory in {held.scope.label()} now: forget "
                    "this held write and write it again"
                )
        admin_sql.drop_held(conn, params, fact_id)
        sink = admin_sql.PostgresImportSink(
            conn,
            params,
            screened=lambda _: None,
            insert=lambda c, fresh, created: writing.insert(db, c, fresh, created, None),
            hold=lambda c, fresh, rule: None,
        )
        released_id = sink.insert(new, now, fact_id)
        admin_sql.mark_released(conn, params, released_id, held.rule)
        fact = admin_sql.live_fact(conn, params, released_id)
        assert fact is not None
        db.clean.add(released_id)
        return fact


def drop_quarantined(db: Binding, fact_id: str) -> bool:
    """Delete a held write for good (the owner forgot it); False when there is none."""
    validation.memory_id(fact_id)
    with db.transaction("forget a quarantined memory") as conn:
        return admin_sql.drop_held(conn, db.scope.params(), fact_id)


def sweep_expired(db: Binding) -> SweepResult:
    swept = sweeping.sweep(db)
    with db.transaction("count memories") as conn:
        live = admin_sql.count_live(conn, db.params(db.now_ms()))
    return SweepResult(swept=swept, live=live)


def quarantined(db: Binding, where: FactFilter = EVERY_KEY) -> list[QuarantinedFact]:
    with db.transaction("list quarantined memories") as conn:
        return admin_sql.held(conn, db.scope.params(), where)


def quarantined_by_id(db: Binding, fact_id: str) -> QuarantinedFact | None:
    validation.memory_id(fact_id)
    with db.transaction("read a quarantined memory") as conn:
        return admin_sql.held_by_id(conn, db.scope.params(), fact_id)
