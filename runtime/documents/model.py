"""A document, its limits, and the errors every document store raises.

Limits (OpenComputer's document memory): a title of 1-240 UTF-8 bytes, a summary of 0-240, a
text of at most 64 KiB; pages of 50; a collection overview of at most 50 whole entries within
16 KiB. A document id is 1-128 lower-case letters, digits, ``-`` and ``_`` (OpenComputer allows
upper case too; here an id is also a file name, and two ids differing in case would share one
file on a case-insensitive file system), starting with a letter or digit.

A revision is opaque to callers (``"1"``, ``"2"``, … here): every change of a document (its
text, summary, title or agent-write policy) gives it a new one. A removed document keeps its id
reserved: it can neither be read nor created again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from specwire.runtime.core.errors import StoreError
from specwire.runtime.safety.redaction import redact

TITLE_MAX_BYTES: Final = 240
SUMMARY_MAX_BYTES: Final = 240
TEXT_MAX_BYTES: Final = 64 * 1024
PAGE_SIZE: Final = 50
OVERVIEW_MAX_ENTRIES: Final = 50
OVERVIEW_MAX_BYTES: Final = 16 * 1024
DOCUMENT_ID_PATTERN: Final = r"^[a-z0-9][a-z0-9_-]{0,127}$"
DOCUMENT_ID_RE: Final = re.compile(DOCUMENT_ID_PATTERN)
DOCUMENT_ID_RULE: Final = (
    "1 to 128 lower-case letters, digits, '-' and '_', starting with a letter or digit"
)
# A cursor is the last listed entry's position, opaque to the model (``binding``).
CURSOR_MAX_CHARS: Final = 1024

AgentWrites = Literal["enabled", "disabled"]
WriterKind = Literal["owner", "agent"]
Field = Literal["title", "summary", "text"]


class DocumentError(StoreError):
    """A document operation refused; the message is one line for the owner or the tool."""


class InvalidDocument(DocumentError):
    pass


class DocumentNotFound(DocumentError):
    def __init__(self, document_id: str, *, removed: bool = False) -> None:
        self.document_id = document_id
        self.removed = removed
        state = "was removed (its id stays reserved)" if removed else "does not exist"
        super().__init__(f"document {document_id!r} {state}")


class DocumentExists(DocumentError):
    def __init__(self, document_id: str, *, removed: bool = False) -> None:
        self.document_id = document_id
        why = "was used by a removed document and stays reserved" if removed else "exists"
        super().__init__(f"document {document_id!r} {why}: choose another id")


class RevisionMismatch(DocumentError):
    """The caller's revision is not the document's current one (HTTP's 412)."""

    def __init__(self, current: Document) -> None:
        self.current = current
        super().__init__(
            f"document {current.id!r} is at revision {current.revision}, not the one given: "
            "read it again and retry"
        )


class AgentWritesDisabled(DocumentError):
    def __init__(self, document_id: str) -> None:
        self.document_id = document_id
        super().__init__(f"document {document_id!r} is frozen: agent writes are disabled")


class DocumentTooLarge(DocumentError):
    def __init__(self, field: Field, size: int, max_bytes: int) -> None:
        self.field = field
        self.size = size
        self.max_bytes = max_bytes
        super().__init__(f"the {field} is {size} bytes, more than the {max_bytes} allowed")


@dataclass(frozen=True)
class Writer:
    """Who made a document's current revision."""

    kind: WriterKind
    session_id: str | None = None

    def to_data(self) -> dict[str, str]:
        data: dict[str, str] = {"kind": self.kind}
        if self.session_id is not None:
            data["sessionId"] = self.session_id
        return data

    @classmethod
    def from_data(cls, data: Any) -> Writer:
        if not isinstance(data, dict) or data.get("kind") not in ("owner", "agent"):
            raise InvalidDocument("a stored document's writer is malformed")
        session = data.get("sessionId")
        return cls(data["kind"], session if isinstance(session, str) else None)


OWNER: Final = Writer("owner")


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str
    summary: str
    agent_writes: AgentWrites
    revision: str
    created_at: str
    updated_at: str
    writer: Writer

    @property
    def bytes(self) -> int:
        return utf8_size(self.text)

    @property
    def frozen(self) -> bool:
        return self.agent_writes == "disabled"

    def meta(self) -> dict[str, Any]:
        """OpenComputer's document object without its text (a list entry)."""
        return {
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "agentWrites": self.agent_writes,
            "revision": self.revision,
            "bytes": self.bytes,
            "maxBytes": TEXT_MAX_BYTES,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "writer": self.writer.to_data(),
        }

    def to_data(self) -> dict[str, Any]:
        """OpenComputer's document object (what ``doc show --json`` and ``export`` write)."""
        data = self.meta()
        data["text"] = self.text
        return data


@dataclass(frozen=True)
class DocumentPage:
    documents: tuple[Document, ...]
    # The position after the last entry, for the next page; None: this was the last page.
    next_after: tuple[str, str] | None


def utf8_size(value: str) -> int:
    return len(value.encode("utf-8"))


def document_id(value: str) -> str:
    if not isinstance(value, str) or DOCUMENT_ID_RE.fullmatch(value) is None:
        raise InvalidDocument(f"a document id is {DOCUMENT_ID_RULE} (got {value!r})")
    return value


def _storable(value: str, field: Field) -> str:
    if not isinstance(value, str):
        raise InvalidDocument(f"the {field} must be text")
    if "\x00" in value:
        raise InvalidDocument(f"the {field} must not contain a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidDocument(f"the {field} is not valid Unicode text") from None
    return redact(value)  # a secret value never reaches a document store


def _bounded(value: str, field: Field, max_bytes: int) -> str:
    value = _storable(value, field)
    size = utf8_size(value)
    if size > max_bytes:
        raise DocumentTooLarge(field, size, max_bytes)
    return value


def title(value: str) -> str:
    value = _bounded(value.strip() if isinstance(value, str) else value, "title", TITLE_MAX_BYTES)
    if not value:
        raise InvalidDocument("a document needs a title (1 to 240 bytes)")
    return value


def summary(value: str) -> str:
    return _bounded(value, "summary", SUMMARY_MAX_BYTES)


def text(value: str) -> str:
    return _bounded(value, "text", TEXT_MAX_BYTES)


def next_revision(revision: str | None) -> str:
    return "1" if revision is None else str(int(revision) + 1)
