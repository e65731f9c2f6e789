"""``HttpMemoryTransfer``: the owner transfer of the HTTP memory contract (``/v1/export``,
``/v1/restore``) as the owner's protocols ``FactExporter``, ``QuarantineReader`` and
``FactRestorer``, so ``codegen memory migrate`` moves memory to and from a memory service as it
does between local stores.

It authenticates with the tenant's *owner* token (never the agent's: the service refuses an
agent token here) and sends ``Memory-Features: scopes, owner``. Deadlines, retries and limits
are ``HttpFactProvider``'s; a restore is idempotent by id on the service, so a retried or
repeated batch writes nothing twice. Export reads every page (ordered by id) until the service
says it was the last; a page that does not move the cursor on is a protocol error.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from specwire.runtime.facts.model import FactStatus, QuarantinedFact
from specwire.runtime.facts.providers.admin import (
    EVERY_KEY,
    FactFilter,
    UnsupportedOperation,
)
from specwire.runtime.facts.providers.errors import ProviderProtocolError
from specwire.runtime.facts.providers.http import contract as wire
from specwire.runtime.facts.providers.http import transfer
from specwire.runtime.facts.providers.http.client import HttpFactProvider

# An owner transfer moves whole pages: more time per call than an agent's turn allows.
TRANSFER_TIMEOUT_S = 120.0
# Room in a restore body for the envelope around the records.
_BODY_MARGIN = 16 * 1024


class HttpMemoryTransfer(HttpFactProvider):
    """A memory service's whole memory for one scope (the owner token's tenant, ``spec``)."""

    def __init__(
        self,
        base_url: str,
        owner_token: str,
        spec: str,
        *,
        tenant: str | None = None,
        timeout_s: float = TRANSFER_TIMEOUT_S,
        page: int = 500,
        **options: Any,
    ) -> None:
        super().__init__(base_url, owner_token, spec, tenant=tenant, timeout_s=timeout_s, **options)
        if not 1 <= page <= wire.MAX_EXPORT_PAGE:
            raise ValueError(f"page must be between 1 and {wire.MAX_EXPORT_PAGE}")
        self._page = page
        self._client.headers[wire.FEATURES_HEADER] = f"{wire.FEATURE_SCOPES}, {wire.FEATURE_OWNER}"

    # -- FactExporter, QuarantineReader ------------------------------------------------------

    def export_facts(self, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        _whole(where)
        return [
            transfer.fact_status(body) for reply in self._pages("facts") for body in reply.facts
        ]

    def quarantined(self, where: FactFilter = EVERY_KEY) -> list[QuarantinedFact]:
        _whole(where)
        return [transfer.held_fact(body) for reply in self._pages("held") for body in reply.held]

    def quarantined_by_id(self, fact_id: str) -> QuarantinedFact | None:
        return next((held for held in self.quarantined() if held.id == fact_id), None)

    def _pages(self, kind: str) -> Iterator[wire.ExportReply]:
        after: str | None = None
        while True:
            body = self._body(wire.ExportBody, kind=kind, after=after, limit=self._page)
            reply = self._call("export", body, wire.ExportReply, kind="read")
            yield reply
            if reply.next_after is None:
                return
            if after is not None and reply.next_after <= after:
                raise ProviderProtocolError(
                    "export: the memory service's cursor did not move on", code="protocol_error"
                )
            after = reply.next_after

    # -- FactRestorer ------------------------------------------------------------------------

    def restore_facts(self, statuses: Sequence[FactStatus]) -> int:
        bodies = [transfer.fact_body(status).wire() for status in statuses]
        return sum(self._restore({"facts": chunk}).facts_written for chunk in _chunks(bodies))

    def restore_quarantined(self, held: Sequence[QuarantinedFact]) -> int:
        bodies = [transfer.held_body(item).wire() for item in held]
        return sum(self._restore({"held": chunk}).held_written for chunk in _chunks(bodies))

    def _restore(self, records: dict[str, list[dict[str, Any]]]) -> wire.RestoreReply:
        body = self._body(wire.RestoreBody, **records)
        # Idempotent by id on the service: a retry is safe, so the write carries an id.
        operation_id = f"restore-{uuid.uuid4().hex}"
        return self._call(
            "restore", body, wire.RestoreReply, kind="write", operation_id=operation_id
        )


def _whole(where: FactFilter) -> None:
    if not where.everything:
        raise UnsupportedOperation(
            "a filtered export is not part of the HTTP memory contract's owner transfer"
        )


def _chunks(records: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """``records`` in order, in batches within the contract's count and body-size limits."""
    chunk: list[dict[str, Any]] = []
    size = 0
    for record in records:
        record_size = len(json.dumps(record, ensure_ascii=False).encode()) + 1
        full = len(chunk) >= wire.MAX_RESTORE_BATCH
        if chunk and (full or size + record_size > wire.MAX_REQUEST_BYTES - _BODY_MARGIN):
            yield chunk
            chunk, size = [], 0
        chunk.append(record)
        size += record_size
    if chunk:
        yield chunk
