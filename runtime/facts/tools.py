"""The facts tools the model sees: ``Remember``, ``Recall``, ``MemoryRead`` and ``MemoryForget``.

Scopes (``runtime.facts.scoping``): every write goes to the wiring's scope key unless the model
names a scope among the ones it may choose (never wider than the spec's default, never a
subject: subjects come from the host); recall, point reads and forget see only the keys the
host's audience may see. A keyed ``Remember`` (``key``) replaces the fact with that key in the
same scope key. Recall shows each hit's ``source`` (its id) and a snippet of at most
``SNIPPET_CHARS``; ``MemoryRead`` returns the whole text.

They speak only the provider protocol (``runtime.facts.providers.protocol``), so the same tools
serve the
local SQLite store, PostgreSQL and a remote memory service.

Input models forbid extra fields and describe every field (they become the JSON schema the model
reads). They declare the store's bounds and attach its ``unstorable`` rule; the store applies the
rest of ``runtime.facts.validation`` itself (which layer owns what is written there). The TTL
floor and ceiling, the required justification and the forget-at-once cap are this layer's own
rules. Store failures come back as error results, never as exceptions. Provenance is recorded
(the session id of the call) but never shown to the model.
"""

from __future__ import annotations

import functools
from itertools import zip_longest
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, create_model
from pydantic_core import PydanticCustomError

from specwire.runtime.core.clock import iso
from specwire.runtime.core.fragment import MS_PER_DAY, TTL_MAX_DAYS, TTL_MIN_MS
from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.scopes import Scope, ScopeError
from specwire.runtime.core.tool_types import (
    Tool,
    ToolContext,
    ToolHandler,
    ToolInput,
    ToolResult,
    guarded,
)
from specwire.runtime.facts.model import (
    MAX_FORGET_AT_ONCE,
    MAX_KEY_CHARS,
    MAX_REASON_CHARS,
    MAX_RECALL_K,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TEXT_CHARS,
    CapExceededError,
    FactRecord,
    Provenance,
)
from specwire.runtime.facts.providers.errors import ProviderUncertain
from specwire.runtime.facts.providers.protocol import (
    FactProvider,
    FactReader,
    ForgetRequest,
    ProviderHit,
    ReadingFactProvider,
    ReadRequest,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.scoping import UNSCOPED, FactScoping
from specwire.runtime.facts.text import MAX_QUERY_CHARS, clip_query, collapse_whitespace
from specwire.runtime.facts.validation import unstorable

# The longest piece of a memory Recall shows; MemoryRead returns the whole text.
SNIPPET_CHARS = 500

# The same bounds as the spec's `memory.ttl`: both come from the contract (runtime.core.fragment).
MIN_TTL_MS = TTL_MIN_MS
MAX_TTL_DAYS = TTL_MAX_DAYS


def _storable(value: str) -> str:
    """The store's ``unstorable`` rule, reported as an input error naming the field."""
    problem = unstorable(value)
    if problem is not None:
        raise PydanticCustomError("storable_text", problem)
    return value


Tag = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_TAG_CHARS), AfterValidator(_storable)
]


def ttl_days_to_ms(days: float) -> int:
    return round(days * MS_PER_DAY)


def _at_least_an_hour(days: float) -> float:
    # ``not >=`` also refuses NaN. Compared in whole milliseconds, as the handler stores it.
    if not ttl_days_to_ms(days) >= MIN_TTL_MS:
        raise PydanticCustomError(
            "ttl_below_floor",
            "must be at least 1 hour (1/24 ≈ 0.0417 days; got {days}) — a shorter lifetime "
            "expires the fact mid-session. Omit ttlDays to keep the spec's default lifetime.",
            {"days": days},
        )
    return days


TtlDays = Annotated[
    float,
    Field(le=MAX_TTL_DAYS, json_schema_extra={"minimum": MIN_TTL_MS / MS_PER_DAY}),
    AfterValidator(_at_least_an_hour),
]


class _Input(ToolInput):
    pass


class RememberInput(_Input):
    text: Annotated[str, AfterValidator(_storable)] = Field(
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description="The fact to remember. One short, self-contained sentence.",
    )
    tags: list[Tag] | None = Field(
        default=None,
        max_length=MAX_TAGS,
        description="Optional short labels to group the fact (at most 8).",
    )
    ttlDays: TtlDays | None = Field(
        default=None,
        description="Forget the fact automatically after this many days: at least 1 hour "
        f"(0.0417), at most {TTL_MAX_DAYS} (omit to keep the spec's default lifetime).",
    )

    key: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_KEY_CHARS,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="Optional name for this fact (e.g. 'preferred-language'). Remembering "
        "again with the same key replaces the earlier fact instead of adding a second one.",
    )


_SCOPE_WORDS: dict[str, str] = {
    "user": "the person you are talking to (recalled only in their private conversations)",
    "conversation": "this conversation (everyone in it)",
    "role": "your role only",
    "crew": "every role of the crew",
    "agent": "everyone who talks to this agent",
}


@functools.cache
def scoped_remember_input(choices: tuple[Scope, ...]) -> type[RememberInput]:
    """``RememberInput`` with a ``scope`` field naming only ``choices`` (cached: at most one
    class per set of scopes, so a per-turn wiring never makes a new one)."""
    described = "; ".join(f"{name}: {_SCOPE_WORDS[name]}" for name in choices)
    allowed: Any = Literal[choices]  # a Literal of exactly these names, made at run time
    model: type[RememberInput] = create_model(
        "ScopedRememberInput",
        __base__=RememberInput,
        scope=(
            allowed | None,
            Field(
                default=None,
                description="Who may see this fact later (omit for the default). " + described,
            ),
        ),
    )
    return model


class MemoryReadInput(_Input):
    id: str | None = Field(
        default=None,
        pattern=MEMORY_ID_RE.pattern,
        description="The id of one memory (its `source` in Recall results).",
    )
    key: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_KEY_CHARS,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="The key a memory was remembered under.",
    )


class RecallInput(_Input):
    query: str = Field(min_length=1, description="What to look for, in plain words.")
    k: int | None = Field(
        default=None,
        ge=1,
        le=MAX_RECALL_K,
        description="How many memories to return at most (1-50; defaults to the spec's "
        "recall size).",
    )


class MemoryForgetInput(_Input):
    id: str | None = Field(
        default=None,
        pattern=MEMORY_ID_RE.pattern,
        description="The id of one memory to forget (mem_ followed by 16 hex digits). "
        "Only that memory is forgotten.",
    )
    query: str | None = Field(
        default=None,
        min_length=1,
        description="Forget every memory that contains all of these words (common words such "
        "as 'the' are ignored; a memory missing any of the words is kept). Use `id` to forget "
        "just one.",
    )
    reason: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_REASON_CHARS,
        description="Why the memory is being forgotten (kept with the record).",
    )
    # MemoryForget requires a justification (REFERENCE §1.6): `Tool.invoke` refuses the call
    # without one. It is also the fallback reason, so the tombstone records why.
    justification: str = Field(
        min_length=1,
        max_length=MAX_REASON_CHARS,
        description="A short justification for forgetting, checked against the instructions.",
    )


def unconfirmed(name: str, handler: ToolHandler, *, check: str = "Use Recall") -> ToolHandler:
    """A write the store did not confirm in time, said in the model's terms (the provider's
    own message speaks of operation ids no tool takes); ``check`` says how to look."""

    def handle(args: Any, ctx: ToolContext) -> ToolResult:
        try:
            return handler(args, ctx)
        except ProviderUncertain:
            return ToolResult(
                f"{name}: the memory store did not confirm the change in time; it may or may "
                f"not have been made. {check} to check before trying again.",
                True,
            )

    return handle


def fact_tools(
    provider: FactProvider,
    *,
    ttl_ms: int | None,
    recall_k: int,
    scoping: FactScoping = UNSCOPED,
) -> list[Tool]:
    """``[Remember, Recall, MemoryRead, MemoryForget]`` over ``provider`` (``MemoryRead`` only
    when the provider has point reads)."""
    choices = tuple(name for name, _ in scoping.choices)
    remember_input = scoped_remember_input(choices) if len(choices) > 1 else RememberInput
    tools = [
        Tool(
            name="Remember",
            description=(
                "Store a durable fact for future sessions (a preference, a decision, a detail "
                "about the user or the project). Keep it to one self-contained sentence. "
                "Remembering a fact already stored (same text) keeps the one copy; with a "
                "`key`, the new text replaces the fact kept under that key."
            ),
            input_model=remember_input,
            handler=guarded(
                "Remember",
                unconfirmed("Remember", _remember_handler(provider, ttl_ms, scoping)),
            ),
            destructive=True,
        ),
        Tool(
            name="Recall",
            description=(
                "Search the facts remembered in earlier sessions. Returns the best matches "
                "with their relevance relative to the best one (1.00) and their `source` id; "
                f"a match longer than {SNIPPET_CHARS} characters is cut (MemoryRead gives it "
                "whole)."
            ),
            input_model=RecallInput,
            handler=guarded("Recall", _recall_handler(provider, recall_k, scoping)),
            read_only=True,
        ),
    ]
    # Offered whenever the provider can read; whether its backend answers point reads is
    # asked on the first call, not here: a remote backend's capabilities cost a round trip, and
    # wiring (every turn, on serving hosts) must not depend on the service being up.
    if isinstance(provider, FactReader):
        tools.append(
            Tool(
                name="MemoryRead",
                description=(
                    "Read one remembered fact in full: by `id` (a Recall `source`) or by the "
                    "`key` it was remembered under."
                ),
                input_model=MemoryReadInput,
                handler=guarded("MemoryRead", _read_handler(provider, scoping)),
                read_only=True,
            )
        )
    return [
        *tools,
        Tool(
            name="MemoryForget",
            description=(
                "Forget remembered facts: one by `id`, or by `query` every memory that contains "
                "all of the query's words (not just one of them). The record is kept for audit "
                "but is never recalled again."
            ),
            input_model=MemoryForgetInput,
            handler=guarded(
                "MemoryForget", unconfirmed("MemoryForget", _forget_handler(provider, scoping))
            ),
            destructive=True,
            require_justification=True,
        ),
    ]


def _remember_handler(
    provider: FactProvider, default_ttl_ms: int | None, scoping: FactScoping
) -> ToolHandler:
    def handle(args: RememberInput, ctx: ToolContext) -> ToolResult:
        ttl_ms = default_ttl_ms
        if args.ttlDays is not None:
            ttl_ms = ttl_days_to_ms(args.ttlDays)
        tags = tuple(args.tags or ())
        try:
            scope = scoping.key_for(getattr(args, "scope", None))
        except ScopeError as exc:
            return ToolResult(f"Remember: {exc}", True)
        try:
            result = provider.retain(
                RetainRequest(
                    args.text,
                    tags,
                    ttl_ms=ttl_ms,
                    provenance=Provenance(ctx.session_id or None),
                    if_absent=args.key is None,
                    scope=scope,
                    key=args.key,
                )
            )
        except CapExceededError as exc:
            return ToolResult(f"not remembered: {exc}", True)
        if result.quarantined is not None:
            return ToolResult(render_quarantined(result.id, result.quarantined), is_error=True)
        if args.key is not None:
            text = collapse_whitespace(args.text)
            replaced = f", replacing {result.superseded}" if result.superseded else ""
            return ToolResult(f"remembered ({result.id}) as {args.key!r}{replaced}: {text}")
        if not result.created:
            # The copy already stored is kept as it is (its tags and lifetime too).
            kept_text = collapse_whitespace(result.text or args.text)
            kept_tags = _tag_list(result.tags if result.tags is not None else tags)
            return ToolResult(f"already remembered ({result.id}){kept_tags}: {kept_text}")
        text = collapse_whitespace(args.text)
        expires = f" (expires {iso(result.expires_at)})" if result.expires_at is not None else ""
        return ToolResult(f"remembered ({result.id}){_tag_list(tags)}{expires}: {text}")

    return handle


def _recall_handler(provider: FactProvider, recall_k: int, scoping: FactScoping) -> ToolHandler:
    def handle(args: RecallInput, ctx: ToolContext) -> ToolResult:
        query = collapse_whitespace(args.query)
        k = args.k if args.k is not None else recall_k
        request = RecallRequest(clip_query(args.query), k, visible=scoping.visible)
        hits = provider.recall(request).hits
        if not hits:
            return ToolResult(f'no memories matched "{query}"')
        lines = [f'{len(hits)} memory match(es) for "{query}" (relevance, best = 1.00):']
        # Scores have no fixed scale across stores (raw BM25 is tiny in a small one), so they
        # are shown relative to the best match.
        best = max(_raw(hit) for hit in hits) or 1.0
        lines += [
            f"  • ({_relevance(_raw(hit) / best)}) {snippet(hit.text)}{_tag_list(hit.tags)}"
            f" — source {hit.id}{_scope_note(hit, scoping)}"
            for hit in hits
        ]
        return ToolResult("\n".join(lines))

    return handle


def snippet(text: str) -> str:
    """The text on one line, cut to ``SNIPPET_CHARS`` (with a ``…``)."""
    flat = collapse_whitespace(text)
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


def _scope_note(hit: ProviderHit | FactRecord, scoping: FactScoping) -> str:
    """The scope (never its subject) and key of a hit, when the spec has scopes or a key."""
    parts = [f"scope {hit.scope.scope}"] if scoping.scoped else []
    if hit.key is not None:
        parts.append(f"key {hit.key!r}")
    return f" ({', '.join(parts)})" if parts else ""


def _read_handler(provider: ReadingFactProvider, scoping: FactScoping) -> ToolHandler:
    def handle(args: MemoryReadInput, ctx: ToolContext) -> ToolResult:
        if (args.id is None) == (args.key is None):
            return ToolResult("MemoryRead: provide exactly one of `id` or `key`.", True)
        if not provider.capabilities().point_read:
            return ToolResult("MemoryRead: this memory backend cannot read one fact.", True)
        records = provider.read(ReadRequest(id=args.id, key=args.key, visible=scoping.visible))
        what = f"id {args.id}" if args.id is not None else f"key {args.key!r}"
        if not records.records:
            return ToolResult(f"no live memory with {what}")
        blocks = [
            f"{record.id}{_scope_note(record, scoping)}{_tag_list(record.tags)}, remembered "
            f"{iso(record.created_at)}"
            + (f", expires {iso(record.expires_at)}" if record.expires_at is not None else "")
            + f":\n{record.text}"
            for record in records.records
        ]
        return ToolResult("\n\n".join(blocks))

    return handle


# Below 1.0, so that undoing the squash stays finite.
MAX_UNIT_SCORE = 1.0 - 1e-9


def _raw(hit: ProviderHit) -> float:
    """Undo the provider's ``s / (1 + s)`` squash (monotone), so relevance ratios are the
    store's own."""
    score = min(max(hit.score, 0.0), MAX_UNIT_SCORE)  # a remote provider may send 1.0
    return score / (1.0 - score)


def _forget_handler(provider: FactProvider, scoping: FactScoping) -> ToolHandler:
    # Unscoped (cli, research): every key, as before scopes; scoped: only what the audience sees.
    visible = scoping.visible if scoping.scoped else None

    def handle(args: MemoryForgetInput, ctx: ToolContext) -> ToolResult:
        if (args.id is None) == (args.query is None):
            return ToolResult("MemoryForget: provide exactly one of `id` or `query`.", True)
        reason = args.reason or args.justification
        if args.id is not None:
            result = provider.forget(ForgetRequest(id=args.id, reason=reason, visible=visible))
            target = f"id {args.id}"
        else:
            assert args.query is not None
            if len(args.query) > MAX_QUERY_CHARS:  # every provider's limit, said the same way
                return ToolResult(
                    f"MemoryForget: the query is too long ({len(args.query)} characters; at "
                    f"most {MAX_QUERY_CHARS}): use fewer words or forget by id.",
                    True,
                )
            result = provider.forget(
                ForgetRequest(
                    query=args.query, reason=reason, at_most=MAX_FORGET_AT_ONCE, visible=visible
                )
            )
            target = f'"{collapse_whitespace(args.query)}"'
        if not result.ids:
            return ToolResult(f"nothing to forget — no live memory matched {target}")
        why = f" — {collapse_whitespace(reason)}" if reason else ""
        lines = [f"forgot {len(result.ids)} memory(ies){why}:"]
        lines += [
            f"  • ({fact_id})" + (f" {collapse_whitespace(text)}" if text else "")
            for fact_id, text in zip_longest(result.ids, result.texts[: len(result.ids)])
        ]
        return ToolResult("\n".join(lines))

    return handle


def _relevance(ratio: float) -> str:
    return f"{ratio:.2f}" if ratio >= 0.005 else "<0.01"


def render_quarantined(fact_id: str, rule: str) -> str:
    """What the agent is told about a write the scanner held (never the text itself)."""
    return (
        f"not remembered: quarantined ({fact_id}) by the injection scanner, rule {rule}. "
        "It will not be recalled; the owner reviews it with `codegen memory list --quarantined`."
    )


def _tag_list(tags: tuple[str, ...] | list[str]) -> str:
    return f" [{', '.join(tags)}]" if tags else ""
