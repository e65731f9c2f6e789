"""``LocalFactAdmin``: the embedded store's provider with the owner's protocols
(``providers.admin``) on top, each one ``FactStore`` call."""

from __future__ import annotations

from collections.abc import Sequence

from specwire.runtime.facts import validation
from specwire.runtime.facts.importing import ImportedFact, ImportResult
from specwire.runtime.facts.model import Fact, FactStatus, QuarantinedFact, SweepResult
from specwire.runtime.facts.providers.admin import EVERY_KEY, FactFilter, FactListing, FactPage
from specwire.runtime.facts.providers.protocol import LocalFactProvider


class LocalFactAdmin(LocalFactProvider):
    """``FactProvider`` plus ``FactLister``, ``FactAdmin``, ``FactExporter``,
    ``FactImporter``, ``FactRestorer``, ``FactSweeper``, ``QuarantineReader`` and ``FactPager``
    over one ``FactStore``."""

    def list_facts(self, listing: FactListing, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        wanted = [
            status
            for status in self.store.list_facts(where.scopes, where.subject)
            if listing.admits(status)
        ]
        end = None if listing.limit is None else listing.offset + listing.limit
        return wanted[listing.offset : end]

    def page_facts(self, page: FactPage, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        if page.before is not None:
            validation.memory_id(page.before)
        return self.store.page_facts(
            status=page.status,
            scopes=where.scopes,
            subject=where.subject,
            tag=page.tag,
            text=page.text,
            before=page.before,
            limit=page.limit,
        )

    def get_fact(self, fact_id: str) -> FactStatus | None:
        validation.memory_id(fact_id)
        return self.store.get(fact_id)

    def tombstone(self, fact_id: str, *, reason: str | None = None) -> Fact | None:
        forgotten = self.store.forget_id(fact_id, reason=reason)
        return forgotten[0] if forgotten else None

    def consolidate(
        self, survivor_id: str, duplicate_ids: Sequence[str], *, reason: str | None = None
    ) -> Fact:
        return self.store.consolidate(survivor_id, duplicate_ids, reason=reason)

    def export_facts(self, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        return self.store.list_facts(where.scopes, where.subject)

    def import_facts(self, facts: Sequence[ImportedFact]) -> ImportResult:
        return self.store.import_facts(facts)

    def restore_facts(self, statuses: Sequence[FactStatus]) -> int:
        return self.store.restore_facts(statuses)

    def restore_quarantined(self, held: Sequence[QuarantinedFact]) -> int:
        return self.store.restore_quarantined(held)

    def sweep_expired(self) -> SweepResult:
        return self.store.sweep()

    def compact(self) -> int:
        """Index upkeep (``FactStore.compact``): WAL frames checkpointed."""
        return self.store.compact()

    def quarantined(self, where: FactFilter = EVERY_KEY) -> list[QuarantinedFact]:
        return [held for held in self.store.quarantined() if where.admits(held)]

    def quarantined_by_id(self, fact_id: str) -> QuarantinedFact | None:
        return self.store.quarantined_by_id(fact_id)
