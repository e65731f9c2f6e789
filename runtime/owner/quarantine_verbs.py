"""The owner's verbs for writes the injection scanner held: list, show, release, forget."""

from __future__ import annotations

import argparse
import json
import sys

from specwire.runtime.facts.model import QuarantinedFact
from specwire.runtime.facts.providers.admin import FactFilter, QuarantineKeeper, QuarantineReader
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.output import (
    QUARANTINE_COLUMNS,
    print_json,
    print_table,
    quarantined_record,
    quarantined_rows,
    report,
)
from specwire.runtime.owner.selection import passes_filters


def list_held(args: argparse.Namespace, reader: QuarantineReader, where: FactFilter) -> int:
    """The held writes ``where`` covers, per scope key (sorted by it), oldest first in each."""
    held = sorted(
        (item for item in reader.quarantined(where) if passes_filters(args, item.text, item.tags)),
        key=lambda item: item.scope,
    )
    if args.json:
        print_json([quarantined_record(item) for item in held])
    else:
        print_table(quarantined_rows(held), QUARANTINE_COLUMNS)
    return 0


def show_held(args: argparse.Namespace, held: QuarantinedFact) -> int:
    record = quarantined_record(held)
    if args.json:
        print_json(record)
    else:
        for key, value in record.items():
            sys.stdout.write(f"{key}: {json.dumps(value, ensure_ascii=True)}\n")
    return 0


def release(args: argparse.Namespace, store: QuarantineKeeper, where: str) -> int:
    held = store.quarantined_by_id(args.id)
    if held is None:
        raise ValueError(f"no quarantined fact {args.id!r} in {where}")
    confirm(
        f"release {held.id} (held by {held.rule}) as a live fact the agent will recall:\n"
        f"  {json.dumps(held.text, ensure_ascii=True)}",
        assume_yes=args.yes,
    )
    fact = store.release(held.id)
    report(args, {"released": held.id, "id": fact.id}, f"released {held.id} as {fact.id}")
    return 0


def forget_held(args: argparse.Namespace, store: QuarantineKeeper, held: QuarantinedFact) -> int:
    confirm(
        f"delete quarantined {held.id} for good: {json.dumps(held.text, ensure_ascii=True)}",
        assume_yes=args.yes,
    )
    store.drop_quarantined(held.id)
    report(args, {"forgotten": [held.id]}, "forgot 1 quarantined fact")
    return 0
