"""What a migration copies and how it checks the copy: the plan and the digests.

A store's *records* are its export lines (``output.fact_record``: every fact with its status,
tombstone, supersede link, scope key, key, tier and provenance) and its held writes
(``output.quarantined_record``). Two stores hold the same memory when their sorted records are
equal; the digest is the sha256 of those lines sorted, so the facts' digest equals
``codegen memory export | LC_ALL=C sort | sha256sum``.

A migration may resume: the target may already hold some of the source's records (a run cut
short), never records the source lacks or a record that differs from the source's (the target
is then not a copy of this source, or it changed since: refused, nothing written).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from specwire.runtime.facts.model import FactStatus, QuarantinedFact
from specwire.runtime.facts.restoring import restore_order
from specwire.runtime.owner.output import fact_record, quarantined_record
from specwire.runtime.owner.selection import SelectionError


class MigrationRefused(SelectionError):
    """The target is not an empty store or a partial copy of the source: one line."""


@dataclass(frozen=True)
class Snapshot:
    """A store's facts and held writes, read at one instant."""

    facts: Sequence[FactStatus]
    held: Sequence[QuarantinedFact]

    def fact_lines(self) -> dict[str, str]:
        return {s.fact.id: export_line(fact_record(s)) for s in self.facts}

    def held_lines(self) -> dict[str, str]:
        return {h.id: export_line(quarantined_record(h)) for h in self.held}


@dataclass(frozen=True)
class Digest:
    facts: int
    held: int
    facts_sha256: str
    held_sha256: str

    def as_json(self) -> dict[str, Any]:
        return {
            "facts": self.facts,
            "held": self.held,
            "factsSha256": self.facts_sha256,
            "heldSha256": self.held_sha256,
        }


@dataclass(frozen=True)
class Plan:
    """What is left to copy (in the order it must be written) and what is there already."""

    facts: list[FactStatus]
    held: list[QuarantinedFact]
    facts_present: int
    held_present: int

    @property
    def empty(self) -> bool:
        return not self.facts and not self.held


def export_line(record: dict[str, Any]) -> str:
    """One line of ``codegen memory export``."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def digest(snapshot: Snapshot) -> Digest:
    return Digest(
        len(snapshot.facts),
        len(snapshot.held),
        _sha256(snapshot.fact_lines().values()),
        _sha256(snapshot.held_lines().values()),
    )


def _sha256(lines: Iterable[str]) -> str:
    hasher = hashlib.sha256()
    for line in sorted(lines):
        hasher.update(line.encode("utf-8"))
    return hasher.hexdigest()


def plan(source: Snapshot, target: Snapshot) -> Plan:
    """What to copy from ``source`` into ``target``; refused (``MigrationRefused``) when the
    target holds a record the source lacks or one that differs."""
    ordered = restore_order(source.facts)
    facts_todo = _missing(source.fact_lines(), target.fact_lines(), "fact")
    held_todo = _missing(source.held_lines(), target.held_lines(), "held write")
    return Plan(
        [s for s in ordered if s.fact.id in facts_todo],
        [h for h in source.held if h.id in held_todo],
        len(source.facts) - len(facts_todo),
        len(source.held) - len(held_todo),
    )


def _missing(source: dict[str, str], target: dict[str, str], what: str) -> set[str]:
    extra = sorted(set(target) - set(source))
    if extra:
        raise MigrationRefused(
            f"the target already holds {len(extra)} {what}(s) the source does not (first: "
            f"{extra[0]}): migrate copies into an empty store or finishes its own copy; "
            "nothing was written"
        )
    changed = sorted(key for key in target if target[key] != source[key])
    if changed:
        raise MigrationRefused(
            f"the target's {what} {changed[0]} differs from the source's ({len(changed)} "
            "differ): it changed since the copy began, or it is another store; nothing was "
            "written"
        )
    return set(source) - set(target)
