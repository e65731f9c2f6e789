"""CrewHaus fact files (``.crewhaus/memories/<spec>.jsonl``, schema v1 and v2), read for import.

Entries: ``{"id", "text", "tags", "createdAt": ISO, "schemaVersion": 2, "expiresAt"?: epoch ms,
"supersededBy"?, "provenance"?: {"sessionId"?, "evidence"?}}`` (no ``schemaVersion``: v1).
Tombstones: ``{"tombstone": "superseded"|"expired", "target", "at", "supersededBy"?, "reason"?}``.
Status is materialised as CrewHaus does: superseded (tombstone or ``supersededBy``), then
expired (tombstone or past ``expiresAt``), then live. A malformed line is skipped and counted,
never half-read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from specwire.runtime.facts.model import Provenance

CrewHausStatus = Literal["live", "superseded", "expired"]
_SESSION_TAG = re.compile(r"^session:(sess_[0-9a-f]{16})$")
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class CrewHausFact:
    id: str
    text: str
    tags: tuple[str, ...]
    created_at: datetime
    expires_at: datetime | None
    provenance: Provenance | None
    status: CrewHausStatus
    reason: str | None = None


@dataclass
class CrewHausFile:
    facts: list[CrewHausFact] = field(default_factory=list)
    malformed: int = 0


def looks_like_crewhaus(path: Path) -> bool:
    """A CrewHaus file: its first object has ``schemaVersion`` or ``tombstone``, or it is a v1
    entry (``createdAt`` with no specwire ``status``)."""
    for record in _objects(path):
        return (
            "schemaVersion" in record
            or "tombstone" in record
            or ("createdAt" in record and "status" not in record)
        )
    return False


def read_crewhaus(path: Path, now: datetime) -> CrewHausFile:
    entries: dict[str, dict[str, Any]] = {}
    tombstones: dict[str, dict[str, Any]] = {}
    result = CrewHausFile()
    for record in _objects(path, on_malformed=result):
        if "tombstone" in record:
            if record.get("tombstone") in ("superseded", "expired") and isinstance(
                record.get("target"), str
            ):
                tombstones.setdefault(record["target"], record)
            else:
                result.malformed += 1
        elif _valid_entry(record):
            entries.setdefault(record["id"], record)
        else:
            result.malformed += 1
    for entry_id, record in entries.items():
        tomb = tombstones.get(entry_id)
        expires = _epoch_ms(record.get("expiresAt"))
        status: CrewHausStatus = "live"
        if (tomb is not None and tomb["tombstone"] == "superseded") or record.get("supersededBy"):
            status = "superseded"
        elif (tomb is not None and tomb["tombstone"] == "expired") or (
            expires is not None and now >= expires
        ):
            status = "expired"
        reason = tomb.get("reason") if tomb is not None else None
        result.facts.append(
            CrewHausFact(
                id=entry_id,
                text=record["text"],
                tags=tuple(record.get("tags", [])),
                created_at=_iso(record["createdAt"]),
                expires_at=expires,
                provenance=_provenance(record),
                status=status,
                reason=reason if isinstance(reason, str) else None,
            )
        )
    return result


def _objects(path: Path, on_malformed: CrewHausFile | None = None) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                record = json.loads(raw) if len(raw) <= MAX_LINE_BYTES else None
            except (ValueError, RecursionError):
                record = None
            if isinstance(record, dict):
                yield record
            elif on_malformed is not None:
                on_malformed.malformed += 1


def _valid_entry(record: dict[str, Any]) -> bool:
    tags = record.get("tags", [])
    provenance = record.get("provenance")
    return (
        isinstance(record.get("id"), str)
        and isinstance(record.get("text"), str)
        and bool(record["text"].strip())
        and isinstance(record.get("createdAt"), str)
        and _is_iso(record["createdAt"])
        and isinstance(tags, list)
        and all(isinstance(tag, str) for tag in tags)
        and (record.get("expiresAt") is None or _epoch_ms(record["expiresAt"]) is not None)
        and (record.get("supersededBy") is None or isinstance(record["supersededBy"], str))
        and (provenance is None or isinstance(provenance, dict))
    )


def _is_iso(value: str) -> bool:
    try:
        _iso(value)
    except ValueError:
        return False
    return True


def _iso(value: str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _epoch_ms(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _provenance(record: dict[str, Any]) -> Provenance | None:
    raw = record.get("provenance")
    session: str | None = None
    evidence: tuple[str, ...] = ()
    if isinstance(raw, dict):
        found = raw.get("sessionId")
        session = found if isinstance(found, str) else None
        items = raw.get("evidence")
        if isinstance(items, list):
            evidence = tuple(item for item in items if isinstance(item, str))
    if session is None and "schemaVersion" not in record:  # v1: the capture tag names it
        for tag in record.get("tags", []):
            match = _SESSION_TAG.match(tag) if isinstance(tag, str) else None
            if match:
                session = match.group(1)
    if session is None and not evidence:
        return None
    return Provenance(session, evidence)
