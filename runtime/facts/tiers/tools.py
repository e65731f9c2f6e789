"""The four tier tools the model sees, with Crewship's schemas and result metadata.

Crewship names them ``memory.read``, ``memory.write``, ``memory.search`` and
``memory.append_daily``; a model API takes only ``^[a-zA-Z0-9_-]{1,64}$``, so here they are
``memory_read``, ``memory_write``, ``memory_search`` and ``memory_append_daily``
(``TIER_TOOL_NAMES``; ``CREWSHIP_TIER_TOOLS`` maps the dotted names). The input schemas are
Crewship's: closed objects, ``tier`` an enum (``lessons`` missing from ``memory_write``'s),
``mode`` required, ``limit`` 1-20.

Each result ends with one ``metadata: {…}`` line (JSON, sorted keys) carrying Crewship's result
metadata: a write's ``source, bytes_written, cap_bytes, cap_pct`` (and ``warning`` plus
``current_entries`` at the soft cap); a refused write's ``tier, cap_bytes, projected_size,
current_size, current_entries, usage``; a held write's ``quarantined, quarantine_id,
quarantine_sha256, quarantine_category, quarantine_pattern, source, tier``. The same metadata,
without any note text, goes to the session log as a ``memory_tier`` event. Labels the scanner
withheld from a search are the operator's (the log and the event), never the model's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from specwire.runtime.core.fragment import TIER_TOOL_NAMES
from specwire.runtime.core.tool_types import Tool, ToolContext, ToolInput, ToolResult, guarded
from specwire.runtime.facts.model import MAX_KEY_CHARS, MAX_KEYED_TEXT_BYTES
from specwire.runtime.facts.text import MAX_QUERY_CHARS, collapse_whitespace
from specwire.runtime.facts.tiers.layout import DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT
from specwire.runtime.facts.tiers.notes import NoteRead, TierCapError, TierNotes, WriteOutcome
from specwire.runtime.facts.tools import unconfirmed
from specwire.runtime.facts.validation import unstorable

ReadableTier = Literal["AGENT", "CREW", "PERSONA", "pins", "daily", "peers", "lessons"]
WritableTier = Literal["AGENT", "CREW", "PERSONA", "pins", "daily", "peers"]

EVENT: Final = "memory_tier"


def _storable(value: str) -> str:
    problem = unstorable(value)
    if problem is not None:
        raise PydanticCustomError("storable_text", problem)
    return value


Storable = Annotated[str, AfterValidator(_storable)]

_TIER_HELP = (
    "The tier: AGENT (your own durable notes), CREW (shared with your crew; crews only), "
    "PERSONA (who you are), pins (things to keep in view), daily (a dated log; key = "
    "YYYY-MM-DD, today by default), peers (one note per person; key = their slug), lessons "
    "(read-only)."
)
_KEY_HELP = (
    "daily: the date (YYYY-MM-DD, default today); peers: the person's slug (required); "
    "ignored by the other tiers. No '/', '\\' or '..'."
)


class MemoryReadInput(ToolInput):
    tier: ReadableTier = Field(description=_TIER_HELP)
    key: str | None = Field(default=None, max_length=MAX_KEY_CHARS, description=_KEY_HELP)


class MemoryWriteInput(ToolInput):
    tier: WritableTier = Field(description=_TIER_HELP)
    key: str | None = Field(default=None, max_length=MAX_KEY_CHARS, description=_KEY_HELP)
    content: Storable = Field(
        min_length=1,
        max_length=MAX_KEYED_TEXT_BYTES,
        description="The text to write (markdown). Each tier has a byte cap.",
    )
    mode: Literal["replace", "append"] = Field(
        description="replace: the note becomes `content`; append: `content` is added as a new "
        "line. Required: say which."
    )


class MemorySearchInput(ToolInput):
    q: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for.")
    tier: ReadableTier | None = Field(
        default=None, description="Search only this tier (default: every tier you can read)."
    )
    limit: int = Field(
        default=DEFAULT_SEARCH_LIMIT,
        ge=1,
        le=MAX_SEARCH_LIMIT,
        description=f"At most this many hits (1-{MAX_SEARCH_LIMIT}).",
    )


class MemoryAppendDailyInput(ToolInput):
    entry: Storable = Field(
        min_length=1,
        max_length=MAX_KEYED_TEXT_BYTES,
        description="One entry for today's log; it is stored as `- <timestamp> — <entry>`.",
    )


_DESCRIPTIONS: Final[dict[str, str]] = {
    "memory_read": "Read one memory note in full: a tier, and for daily or peers its key.",
    "memory_write": (
        "Write a memory note: replace it or append to it. Notes have byte caps; near the cap "
        "you are asked to consolidate (rewrite with mode=replace). lessons is read-only."
    ),
    "memory_search": (
        "Search your memory notes. Each hit names its source note and line and shows a short "
        "snippet; read the note for the whole text."
    ),
    "memory_append_daily": "Append a timestamped entry to today's daily note.",
}


def tier_tools(notes: TierNotes, *, log: Callable[[str], None]) -> list[Tool]:
    """The four tools over ``notes``, in ``TIER_TOOL_NAMES`` order."""
    handlers: dict[str, tuple[type[ToolInput], Callable[[Any, ToolContext], ToolResult], bool]] = {
        "memory_read": (MemoryReadInput, _read(notes), True),
        "memory_write": (MemoryWriteInput, _write(notes), False),
        "memory_search": (MemorySearchInput, _search(notes, log), True),
        "memory_append_daily": (MemoryAppendDailyInput, _append_daily(notes), False),
    }
    tools = []
    for name in TIER_TOOL_NAMES:
        model, handler, read_only = handlers[name]
        tools.append(
            Tool(
                name,
                _DESCRIPTIONS[name],
                model,
                guarded(name, unconfirmed(name, handler, check="Read the note")),
                read_only=read_only,
                destructive=not read_only,
            )
        )
    return tools


def _metadata(meta: dict[str, Any]) -> str:
    return "metadata: " + json.dumps(meta, ensure_ascii=False, sort_keys=True)


def _read(notes: TierNotes) -> Callable[[MemoryReadInput, ToolContext], ToolResult]:
    def handle(args: MemoryReadInput, ctx: ToolContext) -> ToolResult:
        read = notes.read(args.tier, args.key)
        meta = _read_meta(read)
        ctx.emit(EVENT, {"tool": "memory_read", **meta})
        parts: list[str] = []
        several = len(read.notes) > 1
        for note in read.notes:
            if several:
                parts.append(f"## {note.label} ({note.scope.scope} scope)")
            parts.append(note.text)
        for withheld in read.quarantined:
            parts.append(f"{withheld} is withheld: it is quarantined for the owner's review.")
        if not parts:
            parts.append(f"{read.label} is empty.")
        return ToolResult("\n".join([*parts, _metadata(meta)]))

    return handle


def _read_meta(read: NoteRead) -> dict[str, Any]:
    return {
        "source": read.label,
        "tier": read.tier,
        "scopes": [note.scope.scope for note in read.notes],
        "bytes": sum(len(note.text.encode("utf-8")) for note in read.notes),
        "quarantined": len(read.quarantined),
    }


def _write(notes: TierNotes) -> Callable[[MemoryWriteInput, ToolContext], ToolResult]:
    def handle(args: MemoryWriteInput, ctx: ToolContext) -> ToolResult:
        return _written(
            "memory_write",
            lambda: notes.write(
                args.tier, args.key, args.content, args.mode, session_id=ctx.session_id
            ),
            ctx,
        )

    return handle


def _append_daily(notes: TierNotes) -> Callable[[MemoryAppendDailyInput, ToolContext], ToolResult]:
    def handle(args: MemoryAppendDailyInput, ctx: ToolContext) -> ToolResult:
        return _written(
            "memory_append_daily",
            lambda: notes.append_daily(args.entry, session_id=ctx.session_id),
            ctx,
        )

    return handle


def _written(name: str, write: Callable[[], WriteOutcome], ctx: ToolContext) -> ToolResult:
    try:
        outcome = write()
    except TierCapError as exc:
        meta: dict[str, Any] = {
            "tier": exc.tier,
            "source": exc.label,
            "cap_bytes": exc.usage.cap_bytes,
            "projected_size": exc.projected_size,
            "current_size": exc.usage.size,
            "usage": exc.usage.text(),
        }
        ctx.emit(EVENT, {"tool": name, "refused": "cap", **meta})
        meta["current_entries"] = list(exc.entries)
        return ToolResult(f"{name}: {exc}\n{_metadata(meta)}", True)
    if outcome.quarantined is not None:
        category, _, pattern = outcome.quarantined.partition("/")
        meta = {
            "quarantined": True,
            "quarantine_id": outcome.id,
            "quarantine_sha256": outcome.content_sha256,
            "quarantine_category": category,
            "quarantine_pattern": pattern,
            "source": outcome.label,
            "tier": outcome.tier,
        }
        ctx.emit(EVENT, {"tool": name, **meta})
        return ToolResult(
            f"{name}: not written: the injection scanner quarantined this content (rule "
            f"{outcome.quarantined}). It will not be read back; the owner reviews it with "
            f"`codegen memory list --quarantined`.\n{_metadata(meta)}",
            True,
        )
    meta = {
        "source": outcome.label,
        "tier": outcome.tier,
        "scope": outcome.scope.scope,
        "bytes_written": outcome.bytes_written,
        "note_bytes": outcome.usage.size,
        "cap_bytes": outcome.usage.cap_bytes,
        "cap_pct": outcome.usage.pct,
    }
    lines = [f"ok: {outcome.bytes_written} bytes written to {outcome.label}"]
    if outcome.usage.soft_capped:
        warning = (
            f"{outcome.label} is at {outcome.usage.text()}: consolidate it soon (rewrite it "
            "shorter with mode=replace)"
        )
        meta["warning"] = warning
        lines.append(f"warning: {warning}")
    ctx.emit(EVENT, {"tool": name, **meta})
    if outcome.usage.soft_capped:
        meta["current_entries"] = list(outcome.entries)
    return ToolResult("\n".join([*lines, _metadata(meta)]))


def _search(
    notes: TierNotes, log: Callable[[str], None]
) -> Callable[[MemorySearchInput, ToolContext], ToolResult]:
    def handle(args: MemorySearchInput, ctx: ToolContext) -> ToolResult:
        found = notes.search(args.q, args.tier, args.limit)
        if found.quarantined:
            # The operator's, never the model's: labels only.
            ctx.emit(EVENT, {"tool": "memory_search", "quarantined": list(found.quarantined)})
            log(
                f"[memory] memory_search withheld {len(found.quarantined)} note(s) the "
                f"injection scanner flagged: {', '.join(found.quarantined)}\n"
            )
        query = collapse_whitespace(args.q)
        meta = {
            "hits": [
                {
                    "source": hit.source,
                    "line": hit.line,
                    "score": round(hit.score, 4),
                    "tier": hit.tier,
                    "scope": hit.scope.scope,
                }
                for hit in found.hits
            ]
        }
        if not found.hits:
            return ToolResult(f'no memory notes matched "{query}"\n{_metadata(meta)}')
        lines = [f'{len(found.hits)} note match(es) for "{query}":']
        for hit in found.hits:
            lines.append(f"- {hit.source}:{hit.line} ({hit.scope.scope} scope)")
            lines.extend(f"    {line}" for line in hit.snippet.splitlines())
        return ToolResult("\n".join([*lines, _metadata(meta)]))

    return handle
