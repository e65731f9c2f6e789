"""``MarkdownVaultProvider``: a read-only fact provider over a folder of Markdown notes.

What a team already writes (an Obsidian-style vault: front matter, ``[[wikilinks]]``) becomes
memory the agent recalls, without copying it anywhere. The folder is the truth: a recall
first lists it (names, sizes, modification times; ``vault.scan``; at most once a second) and
re-reads only the notes that changed, so an edited, added or removed note is seen by the next
recall a second later, or at once after ``refresh()``. Nothing is kept
between providers (no process-wide cache); a provider keeps its own notes, index and vectors.

Ranking: our BM25 (``facts.lexical``) over each note's title (weighted three times), aliases
(twice), tags, summary and body (``vault.ranking``); with the spec's embedder, fused with
cosine by RRF (k=60), as the fact store's hybrid recall does. Each hit says why it ranked
(``reasons``): which of title, alias, tag, summary or body holds the query's words, and the
notes linking to it (its backlinks; they do not change its rank: a link says where a note is
mentioned, not what it is about).

Notes are untrusted: each is screened by the injection scanner, as written and as a hit shows
it (each wikilink replaced by its shown text, so ``[[x|previous]]`` cannot split a directive the
model then reads whole), and a flagged note is held (never returned; ``held`` counts them).
A note's scope (front matter ``scope``) is enforced in the index: recall sees only the caller's
visible keys. The vault is read-only: retain and forget are refused.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import UnsafeFileError
from specwire.runtime.facts.fusion import RRF_K, reciprocal_rank_fusion
from specwire.runtime.facts.lexical.ranking import unit_score
from specwire.runtime.facts.model import MAX_TEXT_CHARS, InvalidRequestError
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    CatalogEntry,
    ForgetRequest,
    ForgetResult,
    Health,
    ProviderDescriptor,
    ProviderHit,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)
from specwire.runtime.facts.providers.recall_bounds import (
    give_up_if_expired,
    search_text,
    within_request,
)
from specwire.runtime.facts.text import clip, fingerprint, query_terms, tokenize
from specwire.runtime.facts.vault.notes import Note, parse_note, readable, resolve_links, titles_of
from specwire.runtime.facts.vault.ranking import NoteIndex
from specwire.runtime.facts.vault.scan import Entry, check_vault_path, listing, read_note
from specwire.runtime.fs.safe_open import open_dir_beneath
from specwire.runtime.safety.injection import scan

if TYPE_CHECKING:
    from specwire.runtime.embedders import Embedder

# Candidates each side of the ranking offers before filters and fusion.
MIN_DEPTH = 32
# A recall re-lists the folder when the last listing is older than this (a turn's auto-recall
# and its Recall tool calls share one listing; ``refresh()`` re-lists at once).
REFRESH_INTERVAL_S = 1.0


class ReadOnlyProviderError(InvalidRequestError):
    """A write sent to a read-only provider (a vault)."""


@dataclass(frozen=True)
class _Indexed:
    notes: tuple[Note, ...]  # held notes left out; position + 1 is the index seq
    backlinks: dict[str, tuple[str, ...]]
    lexical: NoteIndex
    vectors: Any  # numpy rows parallel to ``notes``, or None without an embedder
    held: int
    skipped: int


def _flagged(text: str) -> bool:
    """Whether the note as written, or as a hit shows it, trips the injection scanner."""
    if scan(text) is not None:
        return True
    shown = readable(text)
    return shown != text and scan(shown) is not None


class MarkdownVaultProvider:
    """The notes under ``folder/path`` (``path`` relative, inside ``folder``)."""

    def __init__(
        self,
        folder: Path,
        path: str,
        *,
        name: str = "vault",
        embedder: Embedder | None = None,
        now: Clock = utc_now,
        refresh_interval_s: float = REFRESH_INTERVAL_S,
    ) -> None:
        self._parts = check_vault_path(path)
        self._refresh_interval_s = refresh_interval_s
        self._listed_at: float | None = None
        self._folder = folder
        self._path = "/".join(self._parts)
        self._name = name
        self._embedder = embedder
        self._now = now
        self._lock = threading.Lock()
        self._entries: tuple[Entry, ...] | None = None
        self._parsed: dict[Entry, Note | None] = {}  # None: held by the scanner
        self._vectors: dict[Entry, Any] = {}
        self._index = _Indexed((), {}, NoteIndex([]), None, 0, 0)
        self._disposed = False

    # -- the protocol ----------------------------------------------------------------------

    def retain(self, request: RetainRequest) -> RetainResult:
        raise ReadOnlyProviderError(f"the Markdown vault {self._name!r} is read-only")

    def forget(self, request: ForgetRequest) -> ForgetResult:
        raise ReadOnlyProviderError(f"the Markdown vault {self._name!r} is read-only")

    def recall(self, request: RecallRequest) -> RecallResponse:
        give_up_if_expired(request)
        if request.tiers:
            return RecallResponse(())  # a vault holds no tier notes
        with self._lock:
            self._refresh(force=False)
            indexed = self._index
        give_up_if_expired(request)
        hits = self._ranked(indexed, request)
        give_up_if_expired(request)
        return RecallResponse(within_request(request, hits))

    def health(self) -> Health:
        problem = None
        try:
            fd = self._open()
        except (OSError, UnsafeFileError):
            fd, problem = None, "the vault folder cannot be opened"
        if fd is None:
            problem = problem or "the vault folder does not exist"
        else:
            os.close(fd)
        return Health(problem is None, problem, self._now())

    def capabilities(self) -> Capabilities:
        return Capabilities(
            lexical=True,
            semantic=self._embedder is not None,
            scopes=True,
            metadata_filtering=True,
            catalog=True,
            filesystem_documents=True,
        )

    def descriptor(self) -> ProviderDescriptor:
        return ProviderDescriptor(
            self._name, "markdown", read_only=True, description=f"Markdown vault {self._path}/"
        )

    def catalog(self, limit: int = 100) -> tuple[CatalogEntry, ...]:
        """The vault's notes (path, title, type, modification time), by path."""
        with self._lock:
            self._refresh()
            notes = self._index.notes
            stamps = {entry.path: entry.mtime_ns for entry in self._entries or ()}
        return tuple(
            CatalogEntry(
                note.path,
                note.title,
                note.type,
                datetime.fromtimestamp(stamps[note.path] / 1e9, UTC)
                if note.path in stamps
                else None,
            )
            for note in notes[: max(0, limit)]
        )

    def refresh(self) -> None:
        with self._lock:
            self._refresh()

    def dispose(self) -> None:
        with self._lock:
            self._disposed = True
            self._parsed.clear()
            self._vectors.clear()
            self._index = _Indexed((), {}, NoteIndex([]), None, 0, 0)

    @property
    def held(self) -> int:
        """Notes the injection scanner held at the last refresh."""
        return self._index.held

    @property
    def skipped(self) -> int:
        """Notes left out at the last refresh (too large, too deep, too many)."""
        return self._index.skipped

    # -- reading the folder ----------------------------------------------------------------

    def _open(self) -> int | None:
        return open_dir_beneath(self._folder, self._parts)

    def _refresh(self, *, force: bool = True) -> None:
        """Re-list the folder and re-read what changed; without ``force``, only when the last
        listing is older than ``refresh_interval_s``."""
        if self._disposed:
            raise InvalidRequestError(f"the Markdown vault {self._name!r} was disposed")
        moment = time.monotonic()
        listed_at = self._listed_at
        if not force and listed_at is not None and moment - listed_at < self._refresh_interval_s:
            return
        self._listed_at = moment
        try:
            fd = self._open()
        except UnsafeFileError:
            raise InvalidRequestError(
                f"the Markdown vault {self._name!r}: its folder is reached through a symbolic "
                "link; refusing to follow it"
            ) from None
        found: tuple[Entry, ...] = ()
        skipped = 0
        texts: dict[Entry, str | None] = {}
        if fd is not None:
            try:
                listed = listing(fd)
                found, skipped = listed.entries, listed.skipped
                if found == self._entries:
                    return
                texts = {e: read_note(fd, e.path) for e in found if e not in self._parsed}
            finally:
                os.close(fd)
        if found == self._entries:
            return
        parsed: dict[Entry, Note | None] = {
            entry: self._parsed[entry] for entry in found if entry in self._parsed
        }
        for entry, text in texts.items():
            if text is None:
                skipped += 1
                continue
            parsed[entry] = None if _flagged(text) else parse_note(entry.path, text)
        self._parsed = parsed
        self._entries = found
        self._index = self._build(parsed, skipped)

    def _build(self, parsed: dict[Entry, Note | None], skipped: int) -> _Indexed:
        entries = sorted(entry for entry, note in parsed.items() if note is not None)
        notes = tuple(note for entry in entries if (note := parsed[entry]) is not None)
        held = sum(1 for note in parsed.values() if note is None)
        backlinks = resolve_links(notes)
        lexical = NoteIndex([tokenize(_indexed_text(note)) for note in notes])
        vectors = self._embed(entries, notes) if self._embedder is not None and notes else None
        return _Indexed(notes, backlinks, lexical, vectors, held, skipped)

    def _embed(self, entries: list[Entry], notes: tuple[Note, ...]) -> Any:
        import numpy as np

        assert self._embedder is not None
        kept = {entry: self._vectors[entry] for entry in entries if entry in self._vectors}
        missing = [
            (entry, note) for entry, note in zip(entries, notes, strict=True) if entry not in kept
        ]
        if missing:
            rows = self._embedder.embed([_embedded_text(note) for _, note in missing])
            for (entry, _), row in zip(missing, rows, strict=True):
                kept[entry] = row
        self._vectors = kept
        return np.stack([kept[entry] for entry in entries])

    # -- ranking ---------------------------------------------------------------------------

    def _ranked(self, indexed: _Indexed, request: RecallRequest) -> list[ProviderHit]:
        notes = indexed.notes
        if not notes:
            return []
        visible = {key.label() for key in request.visible}
        admitted = [note.scope is not None and note.scope.label() in visible for note in notes]
        text = search_text(request)
        words = query_terms(text)
        depth = min(len(notes), max(MIN_DEPTH, 4 * request.limit))
        lexical = indexed.lexical.rank(words, depth, admitted.__getitem__)
        order = [(number, unit_score(score)) for number, score in lexical]
        if indexed.vectors is not None and self._embedder is not None:
            nearest = self._nearest(indexed, text, admitted, depth)
            fused = reciprocal_rank_fusion([[number for number, _ in lexical], nearest])
            top = 2.0 / (RRF_K + 1)
            order = [(number, min(0.999, score / top)) for number, score in fused]
        by_path = {note.path: note for note in notes}
        wanted = frozenset(request.types)
        hits: list[ProviderHit] = []
        for number, score in order:
            note = notes[number]
            if not admitted[number] or (wanted and note.type not in wanted):
                continue
            if len(hits) == request.limit:
                break
            backlinks = titles_of(indexed.backlinks.get(note.path, ()), by_path)
            hits.append(_hit(note, score, self._name, _reasons(note, set(words), backlinks)))
        return hits

    def _nearest(self, indexed: _Indexed, text: str, admitted: list[bool], depth: int) -> list[int]:
        import numpy as np

        assert self._embedder is not None
        query = self._embedder.embed([text])[0]
        similarity = indexed.vectors @ query
        order = np.argsort(-similarity, kind="stable")
        return [int(number) for number in order if admitted[int(number)]][:depth]


def _indexed_text(note: Note) -> str:
    return " ".join(
        [
            *([note.title] * 3),
            *(alias for alias in note.aliases for _ in range(2)),
            *note.tags,
            note.summary or "",
            readable(note.body),
        ]
    )


def _embedded_text(note: Note) -> str:
    return " ".join([note.title, *note.aliases, *note.tags, note.summary or "", note.body])


def _hit_text(note: Note) -> str:
    """What the model reads: ``Title: summary. body`` (a title taken from the file's name is
    left out of a note with a body: it is a file name, not content, and the same content
    then has the same fingerprint as a fact elsewhere)."""
    body = " ".join(readable(note.body).split())
    title = note.title if note.titled or not body else None
    head = ": ".join(part for part in (title, note.summary) if part)
    return clip(". ".join(part for part in (head, body) if part), MAX_TEXT_CHARS)


def _hit(note: Note, score: float, provider: str, reasons: tuple[str, ...]) -> ProviderHit:
    assert note.scope is not None  # notes without a readable scope are filtered before
    text = _hit_text(note)
    return ProviderHit(
        note.path,
        text,
        note.tags,
        score,
        False,
        scope=note.scope,
        provider=provider,
        reasons=reasons,
        fingerprint=fingerprint(text),
        title=note.title,
        type=note.type,
    )


def _reasons(note: Note, words: set[str], backlinks: tuple[str, ...]) -> tuple[str, ...]:
    reasons = []
    for label, field in (
        ("title", note.title),
        ("alias", " ".join(note.aliases)),
        ("tag", " ".join(note.tags)),
        ("summary", note.summary or ""),
        ("body", readable(note.body)),
    ):
        if words & set(tokenize(field)):
            reasons.append(f"{label} match")
    reasons.append(f"note {note.path}")
    if backlinks:
        reasons.append("linked from " + ", ".join(backlinks[:5]))
    return tuple(reasons)
