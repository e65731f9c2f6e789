"""``RequirementsLedger``: the user's requirements, kept verbatim in ``focus.md``.

The ledger's line format and its byte cap are ``runtime.continuity.ledger``; it is stored in the
Requirements section of ``focus.md``, so a ``focus.md`` a person wrote has no ledger and refuses
every change to it (``FocusNote.for_write``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from specwire.runtime.continuity.focus_note import FocusNote
from specwire.runtime.continuity.ledger import (
    Requirement,
    RequirementStatus,
    append_entries,
    set_status,
)
from specwire.runtime.continuity.state_folder import StateFolder
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.seams import LedgerEntry


class RequirementsLedger:
    def __init__(self, folder: StateFolder, focus: FocusNote, *, max_bytes: int) -> None:
        self._folder = folder
        self._focus = focus
        self.max_bytes = max_bytes

    def requirements(self) -> tuple[Requirement, ...]:
        doc = self._focus.read()
        return doc.requirements if doc is not None else ()

    def record(self, entries: Sequence[LedgerEntry]) -> list[Requirement]:
        """Append user requirements verbatim to the ledger; return the entries added."""
        if not any(e.role == "user" and e.text.strip() for e in entries):
            return []
        with self._folder.mutation():
            doc = self._focus.for_write()
            result = append_entries(doc.requirements, entries, cap=self.max_bytes)
            if not result.added and not result.truncated:
                return []
            self._focus.save(
                replace(
                    doc,
                    requirements=tuple(result.requirements),
                    ledger_truncated=doc.ledger_truncated or result.truncated,
                )
            )
        return result.added

    def set_status(self, req_id: str, status: RequirementStatus, text: str) -> Requirement:
        """Mark a requirement open/confirmed/dropped; ``text`` must repeat it verbatim."""
        with self._folder.mutation():
            doc = self._focus.for_write()
            try:
                reqs = set_status(doc.requirements, req_id, status, text)
            except KeyError:
                raise StoreError(f"no requirement {req_id} in the ledger") from None
            except ValueError as exc:
                raise StoreError(str(exc)) from None
            self._focus.save(replace(doc, requirements=tuple(reqs)))
        return next(r for r in reqs if r.id == req_id)
