"""The owner's fact verbs: list, show, search, forget, release, sweep, export, import.

``list``, ``show``, ``search``, ``forget`` and ``export`` cover the scope keys the
``--scope``/``--user``/``--conversation``/``--role`` options name (``runtime.owner.scoping``),
every key without them: the owner sees every person's memory, the agent only what its
conversation may.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.progress import Progress
from specwire.runtime.core.scopes import AGENT, ScopeError, ScopeKey
from specwire.runtime.embedders import load_embedder
from specwire.runtime.facts.importing import ImportedFact
from specwire.runtime.facts.model import MAX_RECALL_K, Provenance, Tombstone, to_ms
from specwire.runtime.facts.providers.admin import (
    FactLister,
    FactListing,
    QuarantineKeeper,
    QuarantineReader,
)
from specwire.runtime.facts.providers.local_admin import LocalFactAdmin
from specwire.runtime.facts.providers.protocol import ForgetRequest, ProviderHit, RecallRequest
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.tools import relevances
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.owner import quarantine_verbs
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.backend import is_remote, open_facts
from specwire.runtime.owner.crewhaus_facts import looks_like_crewhaus, read_crewhaus
from specwire.runtime.owner.output import (
    FACT_COLUMNS,
    fact_record,
    fact_rows,
    print_json,
    print_table,
    report,
    scope_fields,
)
from specwire.runtime.owner.scoping import describe, fact_filter, single_key, visible_keys
from specwire.runtime.owner.selection import Selection, SelectionError

MAX_IMPORT_LINE_BYTES = 1 << 20
IMPORT_STATUSES = ("live", "superseded", "forgotten", "expired")


def list_facts(args: argparse.Namespace, selection: Selection) -> int:
    where = fact_filter(args)
    with open_facts(args, selection) as facts:
        if args.quarantined or args.status == "quarantined":
            return quarantine_verbs.list_held(args, facts.quarantine("quarantine"), where)
        listing = FactListing(status=args.status, tag=args.tag, text=args.text)
        wanted = facts.lister("list").list_facts(listing, where)
    if args.json:
        print_json([fact_record(status) for status in wanted])
    else:
        print_table(fact_rows(wanted), FACT_COLUMNS)
    return 0


def show(args: argparse.Namespace, selection: Selection) -> int:
    wanted = fact_filter(args)
    with open_facts(args, selection) as facts:
        status = facts.lister("show").get_fact(args.id)
        held = None
        if status is None and isinstance(facts.backend, QuarantineReader):
            held = facts.backend.quarantined_by_id(args.id)
        where = facts.where
    if held is not None and wanted.admits(held):
        return quarantine_verbs.show_held(args, held)
    if status is None or not wanted.admits(status.fact):
        scoped = "" if wanted.everything else f" ({describe(wanted)})"
        raise SelectionError(f"no fact {args.id!r}{scoped} in {where}")
    record = fact_record(status)
    if args.json:
        print_json(record)
    else:
        for key, value in record.items():
            sys.stdout.write(f"{key}: {json.dumps(value, ensure_ascii=False)}\n")
    return 0


def search(args: argparse.Namespace, selection: Selection) -> int:
    """Rank as the agent's ``Recall`` does, on every backend: the provider's own recall; on the
    file store fused with the embedder the agent recalls by meaning with (the one its stored
    vectors were made with; ``--embedder`` overrides, ``none`` turns it off). ``score`` is the
    backend's own; ``relevance`` is relative to the best hit, as ``Recall`` shows it."""
    if not 1 <= args.k <= MAX_RECALL_K:
        raise SelectionError(f"-k {args.k}: between 1 and {MAX_RECALL_K}")
    with open_facts(args, selection) as facts:
        if isinstance(facts.backend, LocalFactAdmin):
            store = facts.backend.store
            embedder_id = args.embedder if args.embedder is not None else store.recorded_embedder()
            if embedder_id is not None and embedder_id != "none":
                store.use_embedder(load_embedder(embedder_id), log=_stderr)
        elif args.embedder is not None:
            raise SelectionError(f"--embedder: the {facts.name} backend ranks with its own")
        lister = facts.backend if isinstance(facts.backend, FactLister) else None
        visible = _searched_keys(args, lister)
        if not facts.provider.capabilities().scopes:
            # Every fact of a backend without scopes is an agent fact.
            visible = tuple(key for key in visible if key == AGENT)
        hits = (
            facts.provider.recall(RecallRequest(args.query, args.k, visible=visible)).hits
            if visible
            else ()
        )
        found = [(hit, None if lister is None else lister.get_fact(hit.id)) for hit in hits]
    records = [
        {
            **(fact_record(status) if status is not None else _hit_record(hit)),
            "score": float(f"{hit.score:.6g}"),
            "relevance": round(relevance, 2),
        }
        for (hit, status), relevance in zip(found, relevances(hits), strict=True)
    ]
    if args.json:
        print_json(records)
    else:
        print_table(
            [
                {
                    "id": record["id"],
                    "relevance": f"{record['relevance']:.2f}",
                    "status": record.get("status", "live"),
                    "scope": record["scope"]
                    if record.get("subject") is None
                    else f"{record['scope']}:{record['subject']}",
                    "tags": ",".join(record["tags"]),
                    "text": record["text"],
                }
                for record in records
            ],
            SEARCH_COLUMNS,
        )
    return 0


SEARCH_COLUMNS = ("relevance", "id", "status", "scope", "tags", "text")


def _searched_keys(args: argparse.Namespace, lister: FactLister | None) -> tuple[ScopeKey, ...]:
    """The keys ``search`` recalls over: the one the options name, else every key the backend
    holds live facts in that they admit. A backend that cannot list (the HTTP contract) is
    searched in the ``agent`` key unless the options name one."""
    where = fact_filter(args)
    named = single_key(where)
    if named is not None:
        return (named,)
    if lister is None:
        if not where.everything and not where.admits_key(AGENT):
            raise SelectionError(
                f"search {describe(where)}: this backend cannot list its scope keys; name one "
                "(--user ID, --conversation ID, --role NAME, --scope agent|crew)"
            )
        sys.stderr.write(
            "searched agent memory only: name a scope key (--user ID …) to search another\n"
        )
        return (AGENT,)
    live = lister.list_facts(FactListing(status="live"), where)
    return visible_keys(where, (status.fact.scope for status in live))


def _hit_record(hit: ProviderHit) -> dict[str, Any]:
    """What a recall hit says of its fact, where the backend cannot show the fact itself."""
    return {
        "id": hit.id,
        "text": hit.text,
        "tags": list(hit.tags),
        "status": "live",
        **scope_fields(hit.scope, hit.key, hit.tier),
    }


def forget(args: argparse.Namespace, selection: Selection) -> int:
    if (args.id is None) == (args.query is None):
        raise SelectionError("forget needs a fact id or --query (one of them)")
    if args.query is not None and not args.query.split():
        # An empty query matches every fact: it must never mean "forget everything".
        raise SelectionError("forget --query: the query is empty; give words to match")
    where = fact_filter(args)
    with open_facts(args, selection) as facts:
        if not isinstance(facts.backend, FactLister) and args.id is not None:
            # The HTTP contract: forget by id is part of it, without a preview of the text.
            named = single_key(where)
            if not where.everything and named is None:
                raise SelectionError(
                    f"forget {describe(where)}: name one scope key on this backend (--user ID …)"
                )
            visible = None if named is None else (named,)
            confirm(f"forget {args.id}", assume_yes=args.yes)
            result = facts.provider.forget(
                ForgetRequest(id=args.id, reason=args.reason, visible=visible)
            )
            summary = f"forgot {result.removed} fact(s)"
            report(args, {"forgotten": list(result.ids)}, summary)
            return 0
        lister = facts.lister("forget --query (it lists the facts it would forget)")
        admin = facts.admin("forget")
        if args.id is not None:
            status = lister.get_fact(args.id)
            keeper = _keeper(facts)
            if status is None and keeper is not None:
                held = keeper.quarantined_by_id(args.id)
                if held is not None and where.admits(held):
                    return quarantine_verbs.forget_held(args, keeper, held)
            if status is None or not where.admits(status.fact):
                scoped = "" if where.everything else f" ({describe(where)})"
                raise SelectionError(f"no fact {args.id!r}{scoped} in {facts.where}")
            if status.status != "live":
                raise SelectionError(f"{args.id} is already {status.status}")
            targets = [status]
        else:
            words = args.query.casefold().split()
            targets = [
                status
                for status in lister.list_facts(FactListing(status="live"), where)
                if all(word in status.fact.text.casefold() for word in words)
            ]
            if not targets:
                sys.stdout.write("no live fact matches; nothing to forget\n")
                return 0
        preview = "\n".join(
            f"forget {s.fact.id} ({s.fact.scope.label()}): {s.fact.text}" for s in targets
        )
        confirm(preview, assume_yes=args.yes)
        forgotten = [
            fact
            for status in targets
            if (fact := admin.tombstone(status.fact.id, reason=args.reason)) is not None
        ]
    report(args, {"forgotten": [fact.id for fact in forgotten]}, f"forgot {len(forgotten)} fact(s)")
    return 0


def release(args: argparse.Namespace, selection: Selection) -> int:
    with open_facts(args, selection) as facts:
        keeper = _keeper(facts)
        if keeper is None:
            raise SelectionError(f"release: {facts.where} does not keep held writes")
        return quarantine_verbs.release(args, keeper, facts.where)


def _keeper(facts: Any) -> QuarantineKeeper | None:
    """Where the owner releases or deletes held writes: the file store, or a backend that
    keeps them (PostgreSQL); None for one that does not (the HTTP contract)."""
    if facts.store is not None:
        keeper: QuarantineKeeper = facts.store
        return keeper
    return facts.backend if isinstance(facts.backend, QuarantineKeeper) else None


def sweep(args: argparse.Namespace, selection: Selection) -> int:
    if args.compact and is_remote(args):
        raise SelectionError("--compact reclaims a fact file's space: the file backend only")
    with open_facts(args, selection) as facts:
        result = facts.sweeper("sweep").sweep_expired()
    freed = _compact(selection.facts_db) if args.compact else None
    summary = f"swept {result.swept} expired fact(s); {result.live} live"
    if freed is not None:
        summary += f"; compacted, {freed} bytes reclaimed"
    report(args, {"swept": result.swept, "live": result.live, "bytesReclaimed": freed}, summary)
    return 0


def _compact(path: Path) -> int:
    before = path.stat().st_size
    conn = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return max(0, before - path.stat().st_size)


def export(args: argparse.Namespace, selection: Selection) -> int:
    with Progress("exporting facts") as progress:
        with progress.ticking(), open_facts(args, selection) as facts:
            statuses = facts.exporter("export").export_facts(fact_filter(args))
        progress.phase("written", len(statuses))
        lines = "".join(
            json.dumps(fact_record(s), ensure_ascii=False) + "\n" for s in progress.track(statuses)
        )
    if args.out is None:
        sys.stdout.write(lines)
    else:
        # Atomic, and readable by the owner alone: an export holds what people told the agent.
        replace_atomically(args.out, lines.encode("utf-8"), mode=0o600)
        sys.stderr.write(f"exported {len(statuses)} fact(s) to {args.out}\n")
    return 0


def import_facts(args: argparse.Namespace, selection: Selection) -> int:
    if not args.file.is_file():
        raise SelectionError(f"{args.file}: not a readable file")
    crewhaus = args.format == "crewhaus" or (
        args.format == "auto" and looks_like_crewhaus(args.file)
    )
    if crewhaus:
        if is_remote(args):
            raise SelectionError("a CrewHaus import goes into the file store only")
        return _import_crewhaus(args, selection)
    with Progress(f"reading {args.file.name}") as reading:
        exported = reading.track(_read_export(args.file))
        records = [_imported(record, number) for number, record in exported]
    live = sum(record.status == "live" for record in records)
    with open_facts(args, selection, create=True) as facts:
        importer = facts.importer("import")
        confirm(
            f"import {len(records)} fact(s) ({live} live) from {args.file} into {facts.where}",
            assume_yes=args.yes,
        )
        with Progress(f"importing {len(records):,} fact(s)") as progress, progress.ticking():
            result = importer.import_facts(records)
    summary = (
        f"imported {result.imported} fact(s); {result.known} already known; "
        f"{result.quarantined} quarantined; {result.history} as history; "
        f"{result.skipped} skipped"
    )
    data = {
        "imported": result.imported,
        "known": result.known,
        "quarantined": result.quarantined,
        "history": result.history,
        "skipped": result.skipped,
    }
    report(args, data, summary)
    return 0


def _imported(record: dict[str, Any], number: int) -> ImportedFact:
    status = record.get("status", "live")
    if status not in IMPORT_STATUSES:
        raise SelectionError(f"line {number}: unknown status {status!r}")
    scope = _scope_key(record, number)
    fact_key, tier = record.get("key"), record.get("tier")
    if fact_key is not None and not isinstance(fact_key, str):
        raise SelectionError(f'line {number}: "key" must be a string')
    if tier is not None and (not isinstance(tier, str) or fact_key is None):
        raise SelectionError(f'line {number}: "tier" must be a string, beside a "key"')
    key = record.get("id")
    by = record.get("supersededBy")
    return ImportedFact(
        key=key if isinstance(key, str) else f"line {number}",
        text=record["text"],
        tags=tuple(record.get("tags") or ()),
        status=status,
        created_at=_when(record.get("createdAt")),
        expires_at=_when(record.get("expiresAt")),
        provenance=_provenance(record),
        superseded_by=by if isinstance(by, str) else None,
        scope=scope,
        fact_key=fact_key,
        tier=tier,
        tombstone=_tombstone(record.get("tombstone"), by if isinstance(by, str) else None),
    )


def _tombstone(raw: Any, superseded_by: str | None) -> Tombstone | None:
    """An exported fact's tombstone (kind, time, reason); None when it has none or it is not
    one (the import then tombstones the fact as its status says, at its own time)."""
    if not isinstance(raw, dict):
        return None
    kind, at, reason = raw.get("kind"), _when(raw.get("at")), raw.get("reason")
    if kind not in ("superseded", "forgotten", "expired") or at is None:
        return None
    return Tombstone(
        kind=kind,
        at=at,
        reason=reason if isinstance(reason, str) else None,
        superseded_by=superseded_by if kind == "superseded" else None,
    )


def _scope_key(record: dict[str, Any], number: int) -> ScopeKey:
    """An exported fact's scope key (``agent`` for exports from before scopes)."""
    scope, subject = record.get("scope", "agent"), record.get("subject")
    try:
        return ScopeKey(scope, subject)
    except (ScopeError, TypeError):
        raise SelectionError(f"line {number}: not a scope key ({scope!r}, {subject!r})") from None


def _import_crewhaus(args: argparse.Namespace, selection: Selection) -> int:
    """CrewHaus entries keep their text, tags, expiry and provenance; superseded and expired
    ones are kept too, as tombstoned history (forgotten, the reason naming what they were)."""
    now = utc_now()
    read = read_crewhaus(args.file, now)
    live = [fact for fact in read.facts if fact.status == "live"]
    confirm(
        f"import {len(read.facts)} CrewHaus fact(s) ({len(live)} live, "
        f"{len(read.facts) - len(live)} as tombstoned history; {read.malformed} malformed "
        f"line(s) skipped) from {args.file} into {selection.facts_db}",
        assume_yes=args.yes,
    )
    selection.facts_db.parent.mkdir(parents=True, exist_ok=True)
    store = FactStore.open(selection.facts_db)
    added = history = held = 0
    try:
        for fact in read.facts:
            ttl = None
            if fact.status == "live" and fact.expires_at is not None:
                ttl = to_ms(fact.expires_at) - to_ms(now)
            stored, created = store.remember_if_new(
                fact.text, fact.tags, ttl_ms=ttl, provenance=fact.provenance
            )
            if stored.quarantined is not None:
                held += 1
                continue
            if not created:
                continue
            if fact.status == "live":
                added += 1
                continue
            why = f"imported from CrewHaus as {fact.status} ({fact.id})"
            store.forget_id(stored.id, reason=f"{why}: {fact.reason}" if fact.reason else why)
            history += 1
    finally:
        store.close()
    summary = (
        f"imported {added} live fact(s) and {history} as history from CrewHaus; "
        f"{len(read.facts) - added - history - held} already known; {held} quarantined; "
        f"{read.malformed} malformed line(s)"
    )
    report(
        args,
        {"imported": added, "history": history, "quarantined": held, "malformed": read.malformed},
        summary,
    )
    return 0


def _read_export(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise SelectionError(f"{path}: {exc.strerror or exc}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            if len(raw) > MAX_IMPORT_LINE_BYTES:
                raise SelectionError(f"{path}:{number}: a line longer than 1 MiB")
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                raise SelectionError(f"{path}:{number}: not a JSON object") from None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise SelectionError(f'{path}:{number}: a fact needs a "text" string')
            tags = record.get("tags", [])
            if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
                raise SelectionError(f'{path}:{number}: "tags" must be a list of strings')
            yield number, record


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _provenance(record: dict[str, Any]) -> Provenance | None:
    raw = record.get("provenance")
    if not isinstance(raw, dict):
        return None
    session = raw.get("sessionId")
    evidence = raw.get("evidence") or []
    return Provenance(
        session if isinstance(session, str) else None,
        tuple(item for item in evidence if isinstance(item, str)),
    )


def _stderr(line: str) -> None:
    sys.stderr.write(line)
