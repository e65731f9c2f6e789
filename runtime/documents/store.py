"""``DocumentStore``: what the file and PostgreSQL document stores both implement, and the rules
they share.

Each store holds one collection (a tenant's spec) and applies every change as one step: it
locks (a file lock; a row lock in a transaction), reads the current state, asks the functions
below for the new document (or the refusal), and writes it. So the rules live here once:

- ``create``: the id must never have been used (a removed id stays reserved);
- ``replace`` (text, and the summary unless None): the caller's revision must be current; an
  agent's write is refused while the document is frozen, whatever revision it names;
- ``patch`` (title, agent-write policy) and ``remove``: the caller's revision must be current.

Listing order is OpenComputer's: the most recently updated first, then by id.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from specwire.runtime.documents import model
from specwire.runtime.documents.model import (
    AgentWrites,
    AgentWritesDisabled,
    Document,
    DocumentExists,
    DocumentNotFound,
    DocumentPage,
    RevisionMismatch,
    Writer,
)


@runtime_checkable
class DocumentStore(Protocol):
    # Where the documents live, for messages (a folder, "PostgreSQL"); never a credential.
    where: str

    def get(self, document_id: str) -> Document:
        """The document; ``DocumentNotFound`` when it does not exist or was removed."""
        ...

    def page(self, after: tuple[str, str] | None, limit: int) -> DocumentPage:
        """Up to ``limit`` documents after position ``after`` (``(updated_at, id)`` of the last
        entry seen), most recently updated first."""
        ...

    def create(
        self,
        document_id: str,
        *,
        title: str,
        text: str = "",
        summary: str = "",
        frozen: bool = False,
        writer: Writer = model.OWNER,
    ) -> Document: ...

    def replace(
        self, document_id: str, *, text: str, summary: str | None, if_match: str, writer: Writer
    ) -> Document: ...

    def patch(
        self,
        document_id: str,
        *,
        title: str | None = None,
        agent_writes: AgentWrites | None = None,
        if_match: str,
    ) -> Document: ...

    def remove(self, document_id: str, *, if_match: str) -> None: ...

    def close(self) -> None: ...


def created(
    document_id: str,
    used: bool,
    removed: bool,
    *,
    title: str,
    text: str,
    summary: str,
    frozen: bool,
    writer: Writer,
    now: str,
) -> Document:
    if used:
        raise DocumentExists(document_id, removed=removed)
    return Document(
        id=model.document_id(document_id),
        title=model.title(title),
        text=model.text(text),
        summary=model.summary(summary),
        agent_writes="disabled" if frozen else "enabled",
        revision=model.next_revision(None),
        created_at=now,
        updated_at=now,
        writer=writer,
    )


def existing(document_id: str, current: Document | None, removed: bool) -> Document:
    if current is None:
        raise DocumentNotFound(document_id, removed=removed)
    return current


def replaced(
    document_id: str,
    current: Document | None,
    removed: bool,
    *,
    text: str,
    summary: str | None,
    if_match: str,
    writer: Writer,
    now: str,
) -> Document:
    found = existing(document_id, current, removed)
    if writer.kind == "agent" and found.frozen:
        raise AgentWritesDisabled(document_id)
    if found.revision != if_match:
        raise RevisionMismatch(found)
    return Document(
        id=found.id,
        title=found.title,
        text=model.text(text),
        summary=found.summary if summary is None else model.summary(summary),
        agent_writes=found.agent_writes,
        revision=model.next_revision(found.revision),
        created_at=found.created_at,
        updated_at=now,
        writer=writer,
    )


def patched(
    document_id: str,
    current: Document | None,
    removed: bool,
    *,
    title: str | None,
    agent_writes: AgentWrites | None,
    if_match: str,
    now: str,
) -> Document:
    found = existing(document_id, current, removed)
    if found.revision != if_match:
        raise RevisionMismatch(found)
    return Document(
        id=found.id,
        title=found.title if title is None else model.title(title),
        text=found.text,
        summary=found.summary,
        agent_writes=found.agent_writes if agent_writes is None else agent_writes,
        revision=model.next_revision(found.revision),
        created_at=found.created_at,
        updated_at=now,
        writer=model.OWNER,
    )


def removable(
    document_id: str, current: Document | None, removed: bool, *, if_match: str
) -> Document:
    found = existing(document_id, current, removed)
    if found.revision != if_match:
        raise RevisionMismatch(found)
    return found


def listing_key(document: Document) -> tuple[str, str]:
    """A document's position in a listing."""
    return (document.updated_at, document.id)


def after_position(position: tuple[str, str] | None, document: Document) -> bool:
    """Whether ``document`` comes after ``position`` in listing order (updated desc, id asc)."""
    if position is None:
        return True
    updated, identifier = position
    return document.updated_at < updated or (
        document.updated_at == updated and document.id > identifier
    )


def in_listing_order(documents: list[Document]) -> list[Document]:
    by_id = sorted(documents, key=lambda document: document.id)
    return sorted(by_id, key=lambda document: document.updated_at, reverse=True)
