"""``wire_documents``: the document part of ``wire_memory`` when ``memory.documents`` is set.

The documents live where the spec's facts do: under the state root (``.specwire/``, or the
tenant's root on the managed target) on the file backend, in the facts' database (the same
connection pool, the tenant's and spec's rows) on PostgreSQL. Other backends are refused in one
line, as is a spec that also turns the tiers on (both would offer a ``memory_read`` tool).
The render (``MemorySeam.memory_blocks``) shows every binding; the tools follow the bindings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.fragment import DOCUMENT_BACKENDS
from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import MemoryBlockKind, MemorySeam
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.documents.binding import Binding, DocumentSession
from specwire.runtime.documents.store import DocumentStore
from specwire.runtime.documents.tools import document_tools
from specwire.runtime.safety.injection import scan

BLOCK_KIND: MemoryBlockKind = "document_memory"


@dataclass(frozen=True)
class DocumentWiring:
    session: DocumentSession
    tools: list[Tool]
    seam: MemorySeam


def open_document_store(
    memory: FactsData, layout: StoreLayout, *, tenant: Tenant | None, now: Clock
) -> DocumentStore:
    """The spec's document store on its memory backend (``file`` or ``postgres``)."""
    backend = memory.backend or "file"
    if backend == "file":
        from specwire.runtime.documents.files import FileDocumentStore

        return FileDocumentStore(layout.root, layout.spec_name, now=now)
    if backend == "postgres":
        from specwire.runtime.documents.postgres import PostgresDocumentStore
        from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool

        return PostgresDocumentStore(
            shared_postgres_pool(memory),
            tenant=tenant.id if tenant is not None else DEFAULT_TENANT,
            spec=layout.spec_name,
            now=now,
        )
    raise MemoryServiceError(
        f"memory-service: memory.documents needs the {' or '.join(DOCUMENT_BACKENDS)} backend, "
        f"and this spec's is {backend}"
    )


def wire_documents(
    memory: FactsData,
    layout: StoreLayout,
    seam: MemorySeam | None,
    *,
    tenant: Tenant | None,
    now: Clock,
    log: Callable[[str], None],
) -> DocumentWiring:
    if memory.tiers:
        raise MemoryServiceError(
            "memory-service: memory.documents and memory.tiers cannot be combined (both offer "
            "a memory_read tool)"
        )
    store = open_document_store(memory, layout, tenant=tenant, now=now)
    session = DocumentSession(store, [Binding.of(b) for b in memory.documents or ()], screen=scan)
    earlier = seam.memory_blocks if seam is not None else None

    def blocks() -> Sequence[tuple[MemoryBlockKind, str]]:
        before = list(earlier()) if earlier is not None else []
        return [*before, *((BLOCK_KIND, text) for text in session.render())]

    tools = document_tools(session)
    described = ", ".join(_describe(binding) for binding in session.bindings)
    log(f"[memory] document memory wired: {described} ({store.where})\n")
    return DocumentWiring(
        session, tools, dataclasses.replace(seam or MemorySeam(), memory_blocks=blocks)
    )


def _describe(binding: Binding) -> str:
    if binding.collection:
        return f"{binding.name} (the collection)"
    return f"{binding.name} (document {binding.document_id}, {binding.access})"
