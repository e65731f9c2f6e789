"""What the owner sees: a table in a terminal, JSON for scripts."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.model import FactStatus, QuarantinedFact


def scope_fields(scope: ScopeKey, key: str | None, tier: str | None) -> dict[str, Any]:
    """Where a fact lives, as exports and ``--json`` spell it (the HTTP contract's names)."""
    return {"scope": scope.scope, "subject": scope.subject, "key": key, "tier": tier}


def fact_record(status: FactStatus) -> dict[str, Any]:
    fact = status.fact
    record: dict[str, Any] = {
        "id": fact.id,
        "text": fact.text,
        "tags": list(fact.tags),
        "status": status.status,
        **scope_fields(fact.scope, fact.key, fact.tier),
        "createdAt": _iso(fact.created_at),
        "expiresAt": _iso(fact.expires_at),
        "supersededBy": fact.superseded_by,
        "provenance": {
            "sessionId": fact.provenance.session_id,
            "evidence": list(fact.provenance.evidence),
        },
    }
    if status.tombstone is not None:
        record["tombstone"] = {
            "kind": status.tombstone.kind,
            "at": _iso(status.tombstone.at),
            "reason": status.tombstone.reason,
        }
    return record


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


def print_json(data: Any) -> None:
    # ASCII escapes: a stored text (bidi overrides, escapes) cannot drive the terminal.
    sys.stdout.write(json.dumps(data, ensure_ascii=True, indent=2) + "\n")


def report(args: argparse.Namespace, data: dict[str, Any], summary: str) -> None:
    """A verb's outcome: ``data`` as JSON with ``--json``, else the one-line summary."""
    if args.json:
        print_json(data)
    else:
        sys.stdout.write(summary + "\n")


def print_table(rows: Sequence[Mapping[str, str]], columns: Sequence[str]) -> None:
    if not rows:
        sys.stdout.write("(none)\n")
        return
    cells = [[_cell(row.get(column, "")) for column in columns] for row in rows]
    widths = [
        max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)
    ]
    widths[-1] = len(columns[-1])  # the last column is not padded
    header = "  ".join(
        column.upper().ljust(width) for column, width in zip(columns, widths, strict=True)
    )
    sys.stdout.write(header.rstrip() + "\n")
    for line in cells:
        sys.stdout.write(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            + "\n"
        )


def _cell(value: str, limit: int = 72) -> str:
    # Escaped: a remembered text (a quarantined one above all) must not drive the terminal.
    flat = "".join(
        char if char.isprintable() else f"\\u{ord(char):04x}" for char in " ".join(value.split())
    )
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def fact_rows(statuses: Sequence[FactStatus]) -> list[dict[str, str]]:
    return [
        {
            "id": status.fact.id,
            "status": status.status,
            "scope": status.fact.scope.label(),
            "key": status.fact.key or "",
            "created": status.fact.created_at.strftime("%Y-%m-%d %H:%M"),
            "tags": ",".join(status.fact.tags),
            "text": status.fact.text,
        }
        for status in statuses
    ]


FACT_COLUMNS = ("id", "status", "scope", "key", "created", "tags", "text")


def quarantined_record(held: QuarantinedFact) -> dict[str, Any]:
    return {
        "id": held.id,
        "text": held.text,
        "tags": list(held.tags),
        "status": "quarantined",
        **scope_fields(held.scope, held.key, held.tier),
        "rule": held.rule,
        "foundOn": held.found_on,
        "createdAt": _iso(held.created_at),
        "ttlMs": held.ttl_ms,
        "provenance": {
            "sessionId": held.provenance.session_id,
            "evidence": list(held.provenance.evidence),
        },
    }


def quarantined_rows(held: Sequence[QuarantinedFact]) -> list[dict[str, str]]:
    return [
        {
            "id": item.id,
            "scope": item.scope.label(),
            "rule": item.rule,
            "found": item.found_on,
            "created": item.created_at.strftime("%Y-%m-%d %H:%M"),
            "text": item.text,
        }
        for item in held
    ]


QUARANTINE_COLUMNS = ("id", "scope", "rule", "found", "created", "text")
