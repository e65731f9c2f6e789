"""The owner's fact verbs: list, show, search, forget, release, sweep, export, import."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specwire.runtime.core.clock import utc_now
from specwire.runtime.embedders import load_embedder
from specwire.runtime.facts.model import Provenance, to_ms
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner import quarantine_verbs
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.crewhaus_facts import looks_like_crewhaus, read_crewhaus
from specwire.runtime.owner.output import (
    FACT_COLUMNS,
    fact_record,
    fact_rows,
    print_json,
    print_table,
    report,
)
from specwire.runtime.owner.selection import Selection, SelectionError, passes_filters

MAX_IMPORT_LINE_BYTES = 1 << 20


@contextmanager
def opened(selection: Selection) -> Iterator[FactStore]:
    if not selection.facts_db.exists():
        raise SelectionError(f"no fact store at {selection.facts_db}")
    store = FactStore.open(selection.facts_db)
    try:
        yield store
    finally:
        store.close()


def list_facts(args: argparse.Namespace, selection: Selection) -> int:
    if args.quarantined or args.status == "quarantined":
        with opened(selection) as store:
            return quarantine_verbs.list_held(args, store)
    with opened(selection) as store:
        statuses = store.list_facts()
    wanted = [
        status
        for status in statuses
        if (args.status == "all" or status.status == args.status)
        and passes_filters(args, status.fact.text, status.fact.tags)
    ]
    if args.json:
        print_json([fact_record(status) for status in wanted])
    else:
        print_table(fact_rows(wanted), FACT_COLUMNS)
    return 0


def show(args: argparse.Namespace, selection: Selection) -> int:
    with opened(selection) as store:
        status = store.get(args.id)
        held = store.quarantined_by_id(args.id) if status is None else None
    if held is not None:
        return quarantine_verbs.show_held(args, held)
    if status is None:
        raise SelectionError(f"no fact {args.id!r} in {selection.facts_db}")
    record = fact_record(status)
    if args.json:
        print_json(record)
    else:
        for key, value in record.items():
            sys.stdout.write(f"{key}: {json.dumps(value, ensure_ascii=False)}\n")
    return 0


def search(args: argparse.Namespace, selection: Selection) -> int:
    """Rank as the agent's ``Recall`` does: BM25 fused with the spec's embedder when the agent
    recalls by meaning (the embedder its stored vectors were made with), BM25 alone otherwise.
    ``score`` is the store's own; ``relevance`` is relative to the best hit, as ``Recall`` shows
    it to the model."""
    if not 1 <= args.k <= 100:
        raise SelectionError(f"-k {args.k}: between 1 and 100")
    with opened(selection) as store:
        embedder_id = args.embedder if args.embedder is not None else store.recorded_embedder()
        if embedder_id is not None and embedder_id != "none":
            store.use_embedder(load_embedder(embedder_id), log=_stderr)
        hits = store.recall(args.query, k=args.k)
        statuses = [status for hit in hits if (status := store.get(hit.fact.id)) is not None]
    best = max((hit.score for hit in hits), default=0.0) or 1.0
    scored = [
        (status, float(f"{hit.score:.6g}"), round(hit.score / best, 2))
        for hit, status in zip(hits, statuses, strict=True)
    ]
    if args.json:
        print_json(
            [
                {**fact_record(status), "score": score, "relevance": relevance}
                for status, score, relevance in scored
            ]
        )
    else:
        rows = fact_rows(statuses)
        for row, (_, _, relevance) in zip(rows, scored, strict=True):
            row["relevance"] = f"{relevance:.2f}"
        print_table(rows, ("relevance", *FACT_COLUMNS))
    return 0


def forget(args: argparse.Namespace, selection: Selection) -> int:
    if (args.id is None) == (args.query is None):
        raise SelectionError("forget needs a fact id or --query (one of them)")
    if args.query is not None and not args.query.split():
        # An empty query matches every fact: it must never mean "forget everything".
        raise SelectionError("forget --query: the query is empty; give words to match")
    with opened(selection) as store:
        if args.id is not None:
            status = store.get(args.id)
            held = store.quarantined_by_id(args.id) if status is None else None
            if held is not None:
                return quarantine_verbs.forget_held(args, store, held)
            if status is None:
                raise SelectionError(f"no fact {args.id!r} in {selection.facts_db}")
            if status.status != "live":
                raise SelectionError(f"{args.id} is already {status.status}")
            targets = [status]
        else:
            words = args.query.casefold().split()
            targets = [
                status
                for status in store.list_facts()
                if status.status == "live"
                and all(word in status.fact.text.casefold() for word in words)
            ]
            if not targets:
                sys.stdout.write("no live fact matches; nothing to forget\n")
                return 0
        preview = "\n".join(f"forget {s.fact.id}: {s.fact.text}" for s in targets)
        confirm(preview, assume_yes=args.yes)
        forgotten = []
        for status in targets:
            forgotten += store.forget_id(status.fact.id, reason=args.reason)
    report(args, {"forgotten": [fact.id for fact in forgotten]}, f"forgot {len(forgotten)} fact(s)")
    return 0


def release(args: argparse.Namespace, selection: Selection) -> int:
    with opened(selection) as store:
        return quarantine_verbs.release(args, store, selection)


def sweep(args: argparse.Namespace, selection: Selection) -> int:
    with opened(selection) as store:
        result = store.sweep()
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
    with opened(selection) as store:
        statuses = store.list_facts()
    lines = "".join(json.dumps(fact_record(s), ensure_ascii=False) + "\n" for s in statuses)
    if args.out is None:
        sys.stdout.write(lines)
    else:
        args.out.write_text(lines, encoding="utf-8")
        sys.stderr.write(f"exported {len(statuses)} fact(s) to {args.out}\n")
    return 0


def import_facts(args: argparse.Namespace, selection: Selection) -> int:
    if not args.file.is_file():
        raise SelectionError(f"{args.file}: not a readable file")
    crewhaus = args.format == "crewhaus" or (
        args.format == "auto" and looks_like_crewhaus(args.file)
    )
    if crewhaus:
        return _import_crewhaus(args, selection)
    records = list(_read_export(args.file))
    now = utc_now()
    live = [record for record in records if _importable(record, now)]
    confirm(
        f"import {len(live)} live fact(s) of {len(records)} from {args.file} into "
        f"{selection.facts_db}",
        assume_yes=args.yes,
    )
    selection.facts_db.parent.mkdir(parents=True, exist_ok=True)
    store = FactStore.open(selection.facts_db)
    added = held = 0
    try:
        for record in live:
            fact, created = store.remember_if_new(
                record["text"],
                record.get("tags") or (),
                ttl_ms=_ttl_ms(record, now),
                provenance=_provenance(record),
            )
            if fact.quarantined is not None:
                held += 1
            else:
                added += created
    finally:
        store.close()
    known = len(live) - added - held
    summary = f"imported {added} fact(s); {known} already known; {held} quarantined; "
    summary += f"{len(records) - len(live)} not live (skipped)"
    report(args, {"imported": added, "known": known, "quarantined": held}, summary)
    return 0


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


def _read_export(path: Path) -> Iterator[dict[str, Any]]:
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
            yield record


def _importable(record: dict[str, Any], now: datetime) -> bool:
    if record.get("status", "live") != "live":
        return False
    expires = _when(record.get("expiresAt"))
    return expires is None or expires > now


def _ttl_ms(record: dict[str, Any], now: datetime) -> int | None:
    expires = _when(record.get("expiresAt"))
    return None if expires is None else to_ms(expires) - to_ms(now)


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
