"""``FileDocumentStore``: a spec's documents as files, ``<root>/documents/<spec>/<id>.json``.

Each file holds one document (or the tombstone that keeps a removed id reserved) as JSON.
Changes run under the folder's ``.lock`` (``runtime.fs.locking``): read the current file,
apply ``runtime.documents.store``'s rule, replace the file atomically (``runtime.fs.fenced``:
a temporary, fsync, rename, mode 0600, never through a symlink, never outside the root). A
failed write leaves the previous revision. Readers take no lock: a file is the old revision
or the new one, never a mix.

Nothing is created until the first write: reading a collection nobody wrote to finds it empty.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.core.tenancy import assert_inside
from specwire.runtime.documents import store as rules
from specwire.runtime.documents.model import (
    DOCUMENT_ID_RE,
    OWNER,
    AgentWrites,
    Document,
    DocumentError,
    DocumentPage,
    InvalidDocument,
    Writer,
    document_id,
)
from specwire.runtime.fs import fenced
from specwire.runtime.fs.atomic import TEMP_RE
from specwire.runtime.fs.locking import FileLock

DOCUMENTS_DIRNAME = "documents"
SUFFIX = ".json"


def documents_dir(root: Path, spec_name: str) -> Path:
    """Where a spec's documents live under a state root (``.specwire`` or a tenant's root)."""
    return assert_inside(root / DOCUMENTS_DIRNAME / storage_name(spec_name), root)


def _is_ours(name: str) -> bool:
    match = TEMP_RE.fullmatch(name)
    return match is not None and match.group("target").endswith(SUFFIX)


class FileDocumentStore:
    def __init__(self, root: Path, spec_name: str, *, now: Clock = utc_now) -> None:
        self._root = root
        self.folder = documents_dir(root, spec_name)
        self.where = str(self.folder)
        self._now = now
        self._lock = FileLock(self.folder / ".lock", what="document store", now=now)
        if self.folder.is_dir():
            fenced.sweep_stale_temps([(self.folder, _is_ours)], root=root, lock=self._lock)

    def close(self) -> None:
        return None

    # -- reads -------------------------------------------------------------------------------

    def get(self, document_id_: str) -> Document:
        identifier = document_id(document_id_)
        current, removed = self._read(identifier)
        return rules.existing(identifier, current, removed)

    def page(self, after: tuple[str, str] | None, limit: int) -> DocumentPage:
        documents = [
            document
            for document in rules.in_listing_order(self._every())
            if rules.after_position(after, document)
        ]
        shown = documents[: max(0, limit)]
        more = len(documents) > len(shown) and shown
        return DocumentPage(tuple(shown), rules.listing_key(shown[-1]) if more else None)

    def _every(self) -> list[Document]:
        try:
            names = sorted(entry.name for entry in os.scandir(self.folder))
        except FileNotFoundError:
            return []
        found = []
        for name in names:
            if DOCUMENT_ID_RE.fullmatch(name.removesuffix(SUFFIX)) is None or not name.endswith(
                SUFFIX
            ):
                continue
            current, _ = self._read(name.removesuffix(SUFFIX))
            if current is not None:
                found.append(current)
        return found

    def _path(self, identifier: str) -> Path:
        return self.folder / f"{identifier}{SUFFIX}"

    def _read(self, identifier: str) -> tuple[Document | None, bool]:
        """(the document, whether its id was removed)."""
        raw = fenced.read_text(self._path(identifier), root=self._root)
        if raw is None:
            return None, False
        try:
            data = json.loads(raw)
        except ValueError:
            raise _malformed(identifier) from None
        if not isinstance(data, dict) or data.get("id") != identifier:
            raise _malformed(identifier)
        if data.get("removed") is True:
            return None, True
        return _document(data, identifier), False

    # -- changes -----------------------------------------------------------------------------

    def create(
        self,
        document_id_: str,
        *,
        title: str,
        text: str = "",
        summary: str = "",
        frozen: bool = False,
        writer: Writer = OWNER,
    ) -> Document:
        identifier = document_id(document_id_)
        with self._lock:
            current, removed = self._read(identifier)
            new = rules.created(
                identifier,
                current is not None or removed,
                removed,
                title=title,
                text=text,
                summary=summary,
                frozen=frozen,
                writer=writer,
                now=iso(self._now()),
            )
            self._write(new)
        return new

    def replace(
        self, document_id_: str, *, text: str, summary: str | None, if_match: str, writer: Writer
    ) -> Document:
        identifier = document_id(document_id_)
        with self._lock:
            current, removed = self._read(identifier)
            new = rules.replaced(
                identifier,
                current,
                removed,
                text=text,
                summary=summary,
                if_match=if_match,
                writer=writer,
                now=iso(self._now()),
            )
            self._write(new)
        return new

    def patch(
        self,
        document_id_: str,
        *,
        title: str | None = None,
        agent_writes: AgentWrites | None = None,
        if_match: str,
    ) -> Document:
        identifier = document_id(document_id_)
        with self._lock:
            current, removed = self._read(identifier)
            new = rules.patched(
                identifier,
                current,
                removed,
                title=title,
                agent_writes=agent_writes,
                if_match=if_match,
                now=iso(self._now()),
            )
            self._write(new)
        return new

    def remove(self, document_id_: str, *, if_match: str) -> None:
        identifier = document_id(document_id_)
        with self._lock:
            current, removed = self._read(identifier)
            found = rules.removable(identifier, current, removed, if_match=if_match)
            tombstone = {"id": found.id, "removed": True, "removedAt": iso(self._now())}
            self._write_data(found.id, tombstone)

    def _write(self, document: Document) -> None:
        self._write_data(document.id, document.to_data())

    def _write_data(self, identifier: str, data: dict[str, Any]) -> None:
        body = json.dumps(data, ensure_ascii=False, sort_keys=True, indent=1) + "\n"
        fenced.write_atomic(self._path(identifier), body, root=self._root)


def _malformed(identifier: str) -> DocumentError:
    return InvalidDocument(
        f"the stored document {identifier!r} is malformed: fix or remove {identifier}{SUFFIX}"
    )


def _text(data: dict[str, Any], key: str, identifier: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _malformed(identifier)
    return value


def _document(data: dict[str, Any], identifier: str) -> Document:
    agent_writes = data.get("agentWrites")
    revision = _text(data, "revision", identifier)
    if agent_writes not in ("enabled", "disabled") or not revision.isdigit():
        raise _malformed(identifier)
    try:
        writer = Writer.from_data(data.get("writer"))
    except InvalidDocument:
        raise _malformed(identifier) from None
    return Document(
        id=identifier,
        title=_text(data, "title", identifier),
        text=_text(data, "text", identifier),
        summary=_text(data, "summary", identifier),
        agent_writes=agent_writes,
        revision=revision,
        created_at=_text(data, "createdAt", identifier),
        updated_at=_text(data, "updatedAt", identifier),
        writer=writer,
    )
