"""``TierNotes``: read, write, append to and search the tier notes one audience may reach.

Where a note lives: a write goes to the audience's default write key under the spec's default
scope (``Audience.default_key``): the person in a direct conversation, the conversation in a
shared one, the role in a crew, ``agent`` on cli and research. ``CREW`` notes always go to the
crew's key, and exist only in a crew. The subject of a key comes from the host, never from the
model, so a note is never written into, or read from, someone else's memory.

How visible notes of one tier combine: a read sees the note with that label in every visible
key (an ``AGENT.md`` the owner wrote for everyone and the one written in this person's direct
conversation, say). They are returned, and shown, widest first (``agent``, ``crew``, ``role``,
``conversation``, ``user``), each under its own heading when there is more than one; a write
changes only the note in its own key, and the cap applies to each note on its own.

Every text read back is scanned again (``runtime.safety.injection``): a note the scanner flags
is withheld, and only its label is reported (``quarantined``), never its content. Writes are
screened by the provider (a flagged write is held in its quarantine, never stored as a note).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from specwire.runtime.core.clock import Clock, iso
from specwire.runtime.core.scopes import CREW, Audience, Scope, ScopeError, ScopeKey
from specwire.runtime.facts.model import MAX_KEYED_TEXT_BYTES, CapExceededError, Provenance
from specwire.runtime.facts.providers.protocol import (
    ReadingFactProvider,
    ReadRequest,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.text import clip_query, collapse_whitespace
from specwire.runtime.facts.tiers.layout import (
    DEFAULT_SEARCH_LIMIT,
    MAX_SEARCH_LIMIT,
    TIER_SPECS,
    TierError,
    TierSpec,
    label,
    note_key,
    split_label,
    tier_spec,
    today_of,
)
from specwire.runtime.facts.tiers.snippets import snippet_of
from specwire.runtime.facts.tiers.usage import Usage, entries, utf8_size
from specwire.runtime.safety.injection import scan

Mode = Literal["replace", "append"]

# Widest first: the order several visible notes of one tier are shown in.
_BREADTH: dict[Scope, int] = {"agent": 0, "crew": 1, "role": 2, "conversation": 3, "user": 4}


# A fact provider with keyed writes and point reads: what tier notes need.
NoteProvider = ReadingFactProvider


@dataclass(frozen=True)
class Note:
    tier: str
    label: str
    scope: ScopeKey
    text: str
    id: str


@dataclass(frozen=True)
class NoteRead:
    tier: str
    label: str
    # The visible notes with this label, widest scope first; empty when there is none.
    notes: tuple[Note, ...]
    # ``<label> (<scope>)`` of notes the scanner flagged on the way out: withheld.
    quarantined: tuple[str, ...] = ()


@dataclass(frozen=True)
class WriteOutcome:
    tier: str
    label: str
    scope: ScopeKey
    id: str
    # UTF-8 bytes this call wrote (the content, or the daily line).
    bytes_written: int
    # The note's size after the write, against its tier's cap.
    usage: Usage
    content_sha256: str
    superseded: str | None = None
    # The rule the scanner fired: nothing was stored as a note, the write is held.
    quarantined: str | None = None
    # The note's lines, when the write left it at or above the soft cap.
    entries: tuple[str, ...] = ()


class TierCapError(TierError):
    """A write refused because the note would grow past its tier's cap; nothing was written."""

    def __init__(
        self, tier: str, note: str, cap_bytes: int, current: int, projected: int, lines: list[str]
    ) -> None:
        self.tier = tier
        self.label = note
        self.usage = Usage(current, cap_bytes)
        self.projected_size = projected
        self.entries = tuple(lines)
        super().__init__(
            f"{note} would grow to {projected} bytes, over the {tier} cap of {cap_bytes} bytes "
            f"(now {self.usage.text()}). Consolidate it: rewrite the note shorter with "
            "mode=replace in this turn, then add what is new."
        )


@dataclass(frozen=True)
class SearchHit:
    source: str
    tier: str
    scope: ScopeKey
    snippet: str
    line: int
    score: float


@dataclass(frozen=True)
class SearchOutcome:
    hits: tuple[SearchHit, ...]
    # Labels of hits the scanner flagged: shown to the operator, never their content.
    quarantined: tuple[str, ...] = ()


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TierNotes:
    """The tier notes of one audience, over a provider with keyed writes and point reads."""

    def __init__(
        self, provider: NoteProvider, audience: Audience, default: Scope, *, now: Clock
    ) -> None:
        self._provider = provider
        self._audience = audience
        self._default = default
        self._now = now

    @property
    def in_crew(self) -> bool:
        return self._audience.crew

    def write_key(self, tier: str) -> ScopeKey:
        spec = self._usable(tier)
        if spec.crew_only:
            return CREW
        try:
            return self._audience.default_key(self._default)
        except ScopeError as exc:
            raise TierError(str(exc)) from None

    def visible(self, tier: str) -> tuple[ScopeKey, ...]:
        spec = self._usable(tier)
        return (CREW,) if spec.crew_only else self._audience.visible()

    def readable_tiers(self) -> tuple[str, ...]:
        return tuple(
            name for name, spec in TIER_SPECS.items() if self.in_crew or not spec.crew_only
        )

    # -- read ------------------------------------------------------------------------------------

    def read(self, tier: str, key: str | None = None) -> NoteRead:
        note = label(tier, note_key(tier, key, today_of(self._now())))
        request = ReadRequest(key=note, visible=self.visible(tier))
        notes: list[Note] = []
        flagged: list[str] = []
        for record in self._provider.read(request).records:
            if record.tier != tier or record.key != note or record.scope not in request.visible:
                continue  # a plain fact keyed like a label, or a provider overstepping
            if scan(record.text) is not None:
                flagged.append(f"{note} ({record.scope.scope})")
                continue
            notes.append(Note(tier, note, record.scope, record.text, record.id))
        notes.sort(key=lambda item: _BREADTH[item.scope.scope])
        return NoteRead(tier, note, tuple(notes), tuple(flagged))

    # -- write -----------------------------------------------------------------------------------

    def write(
        self,
        tier: str,
        key: str | None,
        content: str,
        mode: str,
        *,
        session_id: str | None = None,
        owner: bool = False,
    ) -> WriteOutcome:
        """Replace the note or append to it. ``lessons`` is written only by the owner
        (``owner=True``: the owner's commands, consolidation), never through the tools."""
        spec = self._usable(tier)
        if not spec.writable and not owner:
            raise TierError(f"the {tier} tier is read-only via this surface")
        if mode != "replace" and mode != "append":
            raise TierError("mode is required: replace or append")
        checked: Mode = "replace" if mode == "replace" else "append"
        if not content.strip():
            raise TierError("content must not be empty")
        note = label(tier, note_key(tier, key, today_of(self._now())))
        scope = self.write_key(tier)
        cap = spec.cap_bytes
        request = RetainRequest(
            content,
            provenance=Provenance(session_id or None),
            scope=scope,
            key=note,
            mode=checked,
            tier=tier,
            max_bytes=cap if cap is not None else MAX_KEYED_TEXT_BYTES,
        )
        try:
            result = self._provider.retain(request)
        except CapExceededError as exc:
            current = self._note_in(scope, tier, note)
            raise TierCapError(
                tier,
                note,
                exc.cap_bytes,
                exc.current_size,
                exc.projected_size,
                entries(current.text) if current is not None else [],
            ) from None
        usage = Usage(result.bytes, cap)
        lines: tuple[str, ...] = ()
        if result.quarantined is None and usage.soft_capped:
            current = self._note_in(scope, tier, note)
            lines = tuple(entries(current.text)) if current is not None else ()
        return WriteOutcome(
            tier,
            note,
            scope,
            result.id,
            utf8_size(content),
            usage,
            content_sha256(content),
            superseded=result.superseded,
            quarantined=result.quarantined,
            entries=lines,
        )

    def append_daily(self, entry: str, *, session_id: str | None = None) -> WriteOutcome:
        """Append ``- <RFC3339> — <entry>`` to today's daily note (the entry on one line)."""
        line = collapse_whitespace(entry)
        if not line:
            raise TierError("entry must not be empty")
        return self.write(
            "daily", None, f"- {iso(self._now())} — {line}", "append", session_id=session_id
        )

    def _note_in(self, scope: ScopeKey, tier: str, note: str) -> Note | None:
        """The note with this label in exactly ``scope``, unscreened (it is the caller's own,
        about to be shown to the same caller only when the scanner lets it through)."""
        records = self._provider.read(ReadRequest(key=note, visible=(scope,))).records
        for record in records:
            if record.tier == tier and record.scope == scope and scan(record.text) is None:
                return Note(tier, note, scope, record.text, record.id)
        return None

    # -- search ----------------------------------------------------------------------------------

    def search(
        self, query: str, tier: str | None = None, limit: int = DEFAULT_SEARCH_LIMIT
    ) -> SearchOutcome:
        if not query.strip():
            raise TierError("q must not be empty")
        tiers = (tier,) if tier is not None else self.readable_tiers()
        for name in tiers:
            self._usable(name)
        visible = self._audience.visible()
        limit = max(1, min(limit, MAX_SEARCH_LIMIT))
        request = RecallRequest(clip_query(query), limit, visible=visible, tiers=tiers)
        hits: list[SearchHit] = []
        flagged: list[str] = []
        for hit in self._provider.recall(request).hits:
            parsed = split_label(hit.key) if hit.key is not None else None
            if (
                parsed is None
                or hit.tier != parsed[0]
                or hit.tier not in tiers
                or hit.scope not in visible
            ):
                continue  # not a tier note this caller may see: never shown
            if scan(hit.text) is not None:
                flagged.append(hit.key or "")
                continue
            snippet = snippet_of(hit.text, query)
            hits.append(
                SearchHit(hit.key or "", hit.tier, hit.scope, snippet.text, snippet.line, hit.score)
            )
        return SearchOutcome(tuple(hits), tuple(dict.fromkeys(flagged)))

    # -- the prompt's notes ----------------------------------------------------------------------

    def prompt_notes(self, tiers: Sequence[str]) -> tuple[dict[str, NoteRead], tuple[str, ...]]:
        """The notes of ``tiers`` the prompt carries (today's ``daily``), by tier, and the
        labels withheld as flagged."""
        found: dict[str, NoteRead] = {}
        flagged: list[str] = []
        for tier in tiers:
            if tier_spec(tier).crew_only and not self.in_crew:
                continue
            read = self.read(tier)
            found[tier] = read
            flagged.extend(read.quarantined)
        return found, tuple(flagged)

    def _usable(self, tier: str) -> TierSpec:
        spec = tier_spec(tier)
        if spec.crew_only and not self.in_crew:
            raise TierError(f"{tier} memory exists only in a crew; this agent is not in one")
        return spec
