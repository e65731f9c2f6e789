"""The requirements ledger: user requirements kept verbatim, one line each.

A line reads ``- REQ-001 [open] "<json-quoted verbatim text>" (user, sess_…, turn 3)``. Text is
never paraphrased: an entry's text can only be appended, and identical text is recorded once.
The ledger is capped in bytes; the oldest entries are evicted first and a ``[ledger truncated]``
line says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal, cast

from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.patterns import LazyPattern
from specwire.runtime.core.seams import LedgerEntry

RequirementStatus = Literal["open", "confirmed", "dropped"]
REQUIREMENT_STATUSES: tuple[RequirementStatus, ...] = ("open", "confirmed", "dropped")
LEDGER_MAX_BYTES = 16384
LEDGER_TRUNCATED = "[ledger truncated]"
REQ_ID_RE = LazyPattern(r"^REQ-\d{3,}$")

_HEAD_RE = LazyPattern(r"^- (REQ-\d{3,}) \[(open|confirmed|dropped)\] ")
_TAIL_RE = LazyPattern(r"^ \(([^,()]+), ([^,()]+), turn (\d+)\)$")
NO_SESSION = "-"


@lazy_dataclass(frozen=True)
class Requirement:
    """One requirement of the ledger, verbatim, with its status and source."""

    id: str
    status: RequirementStatus
    text: str
    role: str
    session_id: str
    turn: int


def render_requirement(req: Requirement) -> str:
    quoted = json.dumps(req.text, ensure_ascii=False)
    return f"- {req.id} [{req.status}] {quoted} ({req.role}, {req.session_id}, turn {req.turn})"


def parse_requirement(line: str) -> Requirement | None:
    """Parse one ledger line; None when it is not one (a person's note, a typo)."""
    head = _HEAD_RE.match(line)
    if head is None:
        return None
    try:
        text, end = json.JSONDecoder().raw_decode(line, head.end())
    except ValueError:
        return None
    tail = _TAIL_RE.match(line[end:])
    if not isinstance(text, str) or tail is None:
        return None
    return Requirement(
        id=head.group(1),
        status=cast(RequirementStatus, head.group(2)),
        text=text,
        role=tail.group(1),
        session_id=tail.group(2),
        turn=int(tail.group(3)),
    )


def ledger_bytes(reqs: Iterable[Requirement]) -> int:
    return sum(len(render_requirement(r).encode("utf-8")) + 1 for r in reqs)


def evict_to_cap(reqs: Sequence[Requirement], cap: int) -> tuple[list[Requirement], bool]:
    """Drop the oldest entries until the rendered ledger fits in ``cap`` bytes."""
    kept = list(reqs)
    evicted = False
    while kept and ledger_bytes(kept) > cap:
        kept.pop(0)
        evicted = True
    return kept, evicted


def _next_number(reqs: Iterable[Requirement]) -> int:
    numbers = [int(r.id.split("-", 1)[1]) for r in reqs]
    return max(numbers, default=0) + 1


@lazy_dataclass(frozen=True)
class LedgerAppend:
    """The ledger after an append: every requirement, the ones added, truncation."""

    requirements: list[Requirement]
    added: list[Requirement]
    truncated: bool


def append_entries(
    existing: Sequence[Requirement],
    entries: Sequence[LedgerEntry],
    *,
    cap: int = LEDGER_MAX_BYTES,
) -> LedgerAppend:
    """Append user entries verbatim (identical text is skipped), then evict to the cap.

    Only ``role == "user"`` entries are requirements; others are ignored. Empty text is ignored.
    """
    reqs = list(existing)
    seen = {r.text for r in reqs}
    number = _next_number(reqs)
    added: list[Requirement] = []
    for entry in entries:
        if entry.role != "user" or not entry.text.strip() or entry.text in seen:
            continue
        seen.add(entry.text)
        req = Requirement(
            id=f"REQ-{number:03d}",
            status="open",
            text=entry.text,
            role=entry.role,
            session_id=entry.session_id or NO_SESSION,
            turn=entry.turn,
        )
        number += 1
        reqs.append(req)
        added.append(req)
    kept, evicted = evict_to_cap(reqs, cap)
    kept_ids = {r.id for r in kept}
    return LedgerAppend(kept, [r for r in added if r.id in kept_ids], evicted)


def set_status(
    reqs: Sequence[Requirement], req_id: str, status: RequirementStatus, text: str
) -> list[Requirement]:
    """Change one entry's status; ``text`` must repeat the entry verbatim (never a paraphrase)."""
    out: list[Requirement] = []
    found = False
    for req in reqs:
        if req.id == req_id:
            if req.text != text:
                raise ValueError(
                    f"{req_id}: the ledger is verbatim-only; append a NEW requirement instead "
                    "of paraphrasing"
                )
            req = replace(req, status=status)
            found = True
        out.append(req)
    if not found:
        raise KeyError(req_id)
    return out
