"""Next actions refreshed: a store-written ``handoff.md`` is re-rendered from the plans as they
are now (after proofs were re-checked), keeping what only the last session knew.

The handoff is a pure render of the stores plus what the session that wrote it handed in (its
id and stop reason, and the requirements it stated that are not in the ledger). Those are read
back from the note itself, so a refresh changes only what the stores changed: the active plan,
its steps and the next actions. A note a person wrote (no marker) or none at all is left alone.
Focus has no next actions of its own (only the active-plan mirror, kept by the plan book), so it
is not touched.
"""

from __future__ import annotations

import json
import re
from typing import cast, get_args

from specwire.runtime.continuity.handoff import render_handoff
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.seams import HandoffInput, LedgerEntry, StopReason

UNKNOWN_SESSION = "_unknown_"
_LAST = re.compile(r"^(sess_[0-9A-Za-z_]+)(?: \(stop: ([a-z_]+)\))?$")
_SESSION_REQ = re.compile(r'^- (".*") \(([^,()]+), ([^,()]+), turn (\d+)\)$')


def _section(text: str, heading: str) -> list[str]:
    lines = text.split("\n")
    try:
        start = lines.index(heading) + 1
    except ValueError:
        return []
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [line for line in lines[start:end] if line.strip()]


def _session_requirements(text: str) -> list[LedgerEntry]:
    entries: list[LedgerEntry] = []
    for line in _section(text, "## Unresolved requirements"):
        match = _SESSION_REQ.match(line)
        if match is None:
            continue
        try:
            quoted = json.loads(match.group(1))
        except ValueError:
            continue
        if isinstance(quoted, str):
            role, session, turn = match.group(2), match.group(3), int(match.group(4))
            entries.append(LedgerEntry(role, quoted, session, turn))
    return entries


def handoff_input(text: str) -> HandoffInput | None:
    """What the session that wrote the note handed in, read back from it (None: unknown)."""
    last = _section(text, "## Last session")
    match = _LAST.match(last[0]) if last else None
    if match is None:
        return None
    stop = match.group(2)
    if stop not in get_args(StopReason):
        return None
    ledger = tuple(_session_requirements(text))
    return HandoffInput(
        session_id=match.group(1), stop_reason=cast(StopReason, stop), ledger=ledger
    )


def refresh_handoff(store: ContinuityStore) -> bool:
    """Re-render the note when the stores changed what it says; True when it was rewritten."""
    existing = store.read_handoff()
    if existing is None:
        return False
    handed_in = handoff_input(existing)
    if handed_in is None and _section(existing, "## Last session") != [UNKNOWN_SESSION]:
        return False  # a last session we cannot read back: never drop it from the note
    if render_handoff(store.handoff_view(handed_in)) == existing:
        return False
    store.write_handoff(handed_in)
    return True
