"""One session's document bindings: what its render showed and what its tools answer.

A ``DocumentSession`` is built per wiring (a cli session, a per-turn host's turn). ``render``
reads every bound document (a missing one fails it, and so the turn: OpenComputer's "a recall
failure blocks inference") and remembers the revision it showed for each; ``memory_save``
sends that revision as its precondition. The model never chooses it. So a save after another
writer's change is a ``conflict`` carrying the current text and summary, and the conflict (the
model has now seen that revision) or the model's own successful save moves the remembered
revision on: a lost update needs a change the model was never shown.

Outcomes are OpenComputer's ``SaveResult`` and read/list results, as JSON-ready dicts. They are
answers the model continues from, not tool errors. One more rejection reason is ours:
``held``, a write the injection scanner flagged (nothing is stored; the session log records
the rule and the content's sha256, the owner finds the content in the logged tool call).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from specwire.runtime.core.fragment_data import DocumentBindingData
from specwire.runtime.documents.model import (
    CURSOR_MAX_CHARS,
    OVERVIEW_MAX_ENTRIES,
    PAGE_SIZE,
    SUMMARY_MAX_BYTES,
    TEXT_MAX_BYTES,
    AgentWritesDisabled,
    Document,
    DocumentError,
    DocumentNotFound,
    DocumentTooLarge,
    RevisionMismatch,
    Writer,
    utf8_size,
)
from specwire.runtime.documents.prompt import collection_block, document_block
from specwire.runtime.documents.store import DocumentStore
from specwire.runtime.safety.injection import InjectionHit

SAVED_EVENT: Final = "memory_saved"
HELD_EVENT: Final = "memory_save_held"

Result = dict[str, Any]
Screen = Callable[[str], InjectionHit | None]


@dataclass(frozen=True)
class Binding:
    name: str
    scope: str
    document_id: str | None
    access: str

    @classmethod
    def of(cls, fragment: DocumentBindingData) -> Binding:
        return cls(fragment.name, fragment.scope, fragment.id, fragment.access or "read")

    @property
    def writable(self) -> bool:
        return self.scope == "document" and self.access == "read-write"

    @property
    def collection(self) -> bool:
        return self.scope == "collection"


class DocumentSession:
    def __init__(
        self, store: DocumentStore, bindings: Sequence[Binding], *, screen: Screen
    ) -> None:
        self.store = store
        self.bindings = tuple(bindings)
        self._screen = screen
        self._seen: dict[str, str] = {}
        self._lock = threading.Lock()

    # -- what the tools offer ----------------------------------------------------------------

    @property
    def writable(self) -> tuple[str, ...]:
        return tuple(binding.name for binding in self.bindings if binding.writable)

    @property
    def collections(self) -> tuple[str, ...]:
        return tuple(binding.name for binding in self.bindings if binding.collection)

    # -- the render --------------------------------------------------------------------------

    def render(self) -> list[str]:
        """One block per binding, in binding order. Raises when a bound document is missing or
        the store fails (the caller blocks the turn)."""
        blocks = []
        for binding in self.bindings:
            if binding.collection:
                page = self.store.page(None, OVERVIEW_MAX_ENTRIES)
                blocks.append(collection_block(binding.name, page.documents, page.next_after))
                continue
            assert binding.document_id is not None
            try:
                document = self.store.get(binding.document_id)
            except DocumentNotFound as exc:
                raise DocumentError(
                    f"memory.documents.{binding.name}: {exc}; the owner creates it with "
                    f"`codegen memory doc create {binding.document_id} --title TITLE`"
                ) from None
            with self._lock:
                self._seen[binding.name] = document.revision
            blocks.append(document_block(binding.name, document, writable=binding.writable))
        return blocks

    # -- memory_save -------------------------------------------------------------------------

    def save(
        self,
        memory: str | None,
        text: str,
        summary: str | None,
        *,
        session_id: str,
        emit: Callable[[str, Mapping[str, Any]], None],
    ) -> Result:
        binding = self._target(memory, self.writable, lambda b: b.writable)
        if isinstance(binding, dict):
            return binding
        for field, value, limit in (
            ("text", text, TEXT_MAX_BYTES),
            ("summary", summary, SUMMARY_MAX_BYTES),
        ):
            if value is not None and utf8_size(value) > limit:
                return _too_large(field, utf8_size(value), limit)
        for value in (text, summary or ""):
            hit = self._screen(value)
            if hit is not None:
                digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
                emit(HELD_EVENT, {"resource": binding.name, "rule": hit.label, "sha256": digest})
                return {"status": "rejected", "reason": "held", "rule": hit.label}
        assert binding.document_id is not None
        with self._lock:
            seen = self._seen.get(binding.name)
            try:
                if seen is None:  # never shown: the current text is what the model must see
                    raise RevisionMismatch(self.store.get(binding.document_id))
                saved = self.store.replace(
                    binding.document_id,
                    text=text,
                    summary=summary,
                    if_match=seen,
                    writer=Writer("agent", session_id),
                )
            except AgentWritesDisabled:
                return {"status": "rejected", "reason": "agent_writes_disabled"}
            except DocumentNotFound:
                return {"status": "rejected", "reason": "not_found"}
            except DocumentTooLarge as exc:  # a redacted secret grew it past the limit
                return _too_large(exc.field, exc.size, exc.max_bytes)
            except RevisionMismatch as exc:
                self._seen[binding.name] = exc.current.revision
                return {
                    "status": "conflict",
                    "text": exc.current.text,
                    "summary": exc.current.summary,
                }
            self._seen[binding.name] = saved.revision
        emit(
            SAVED_EVENT,
            {
                "resource": binding.name,
                "documentId": saved.id,
                "revision": saved.revision,
                "bytes": saved.bytes,
            },
        )
        return {"status": "saved", "revision": saved.revision, "bytes": saved.bytes}

    # -- memory_read and memory_list (collections) -------------------------------------------

    def read(self, memory: str | None, document_id: str) -> Result:
        binding = self._target(memory, self.collections, lambda b: b.collection)
        if isinstance(binding, dict):
            return binding
        try:
            document = self.store.get(document_id)
        except DocumentNotFound:
            return {"status": "rejected", "reason": "not_found"}
        return {
            "id": document.id,
            "title": document.title,
            "text": document.text,
            "summary": document.summary,
            "revision": document.revision,
            "updatedAt": document.updated_at,
        }

    def listing(self, memory: str | None, cursor: str | None) -> Result:
        binding = self._target(memory, self.collections, lambda b: b.collection)
        if isinstance(binding, dict):
            return binding
        after = None
        if cursor is not None:
            after = decode_cursor(cursor)
            if after is None:
                return {"status": "rejected", "reason": "invalid_cursor"}
        page = self.store.page(after, PAGE_SIZE)
        return {
            "documents": [_entry(document) for document in page.documents],
            "nextCursor": encode_cursor(page.next_after) if page.next_after else None,
        }

    # -- which binding a call means ----------------------------------------------------------

    def _target(
        self, memory: str | None, bound: tuple[str, ...], fits: Callable[[Binding], bool]
    ) -> Binding | Result:
        """The binding ``memory`` names (or the only one that fits), else the rejection."""
        by_name = {binding.name: binding for binding in self.bindings}
        if memory is None:
            if len(bound) == 1:
                return by_name[bound[0]]
            return {"status": "rejected", "reason": "not_bound", "bound": list(bound)}
        binding = by_name.get(memory)
        if binding is None:
            return {"status": "rejected", "reason": "not_bound", "bound": list(bound)}
        if not fits(binding):
            return {"status": "rejected", "reason": "read_only", "bound": list(bound)}
        return binding


def _too_large(field: str, size: int, limit: int) -> Result:
    return {
        "status": "rejected",
        "reason": "too_large",
        "field": field,
        "bytes": size,
        "maxBytes": limit,
    }


def _entry(document: Document) -> Result:
    return {
        "id": document.id,
        "title": document.title,
        "summary": document.summary,
        "revision": document.revision,
        "updatedAt": document.updated_at,
    }


def encode_cursor(position: tuple[str, str]) -> str:
    raw = json.dumps(list(position), separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str] | None:
    """The position a cursor names, or None when it is not one of ours."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > CURSOR_MAX_CHARS:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(part, str) and part for part in value)
    ):
        return (value[0], value[1])
    return None
