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

Input models (``runtime.facts.inputs``, named lazily: pydantic loads on a tool's first call)
forbid extra fields and describe every field (they become the JSON schema the model reads). They
declare the store's bounds and attach its ``unstorable`` rule; the store applies the rest of
``runtime.facts.validation`` itself (which layer owns what is written there). The TTL floor and
ceiling, the required justification and the forget-at-once cap are this layer's own rules.
Store failures come back as error results, never as exceptions. Provenance is recorded (the
session id of the call) but never shown to the model.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.clock import iso
from specwire.runtime.core.fragment import MS_PER_DAY
from specwire.runtime.core.scopes import ScopeError
from specwire.runtime.core.tool_types import (
    LazyInput,
    Tool,
    ToolContext,
    ToolHandler,
    ToolResult,
    guarded,
)
from specwire.runtime.facts.model import (
    MAX_FORGET_AT_ONCE,
    CapExceededError,
    FactRecord,
    Provenance,
)
from specwire.runtime.facts.providers.errors import ProviderUncertain
from specwire.runtime.facts.providers.protocol import (
    FactProvider,
    FactReader,
    ProviderHit,
    ReadingFactProvider,
    RecallRequest,
)
from specwire.runtime.facts.scoping import UNSCOPED, FactScoping
from specwire.runtime.facts.text import MAX_QUERY_CHARS, clip_query, collapse_whitespace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import BaseModel

    from specwire.runtime.facts.inputs import (
        MemoryForgetInput,
        MemoryReadInput,
        RecallInput,
        RememberInput,
    )

# The longest piece of a memory Recall shows; MemoryRead returns the whole text.
SNIPPET_CHARS = 500


def ttl_days_to_ms(days: float) -> int:
    return round(days * MS_PER_DAY)


def _input(name: str) -> LazyInput:
    """An input model of ``facts.inputs``, imported (with pydantic) on the first call."""
    return LazyInput("specwire.runtime.facts.inputs", name)


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
    remember_input: type[BaseModel] | LazyInput = _input("RememberInput")
    if len(choices) > 1:  # a class made at run time per set of scopes: built here, with pydantic
        from specwire.runtime.facts.inputs import scoped_remember_input

        remember_input = scoped_remember_input(choices)
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
            input_model=_input("RecallInput"),
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
                input_model=_input("MemoryReadInput"),
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
            input_model=_input("MemoryForgetInput"),
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
        from specwire.runtime.facts.providers.protocol import RetainRequest

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
        lines += [
            f"  • ({_relevance(ratio)}) {snippet(hit.text)}{_tag_list(hit.tags)}"
            f" — source {hit.id}{_scope_note(hit, scoping)}"
            for hit, ratio in zip(hits, relevances(hits), strict=True)
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
        from specwire.runtime.facts.providers.protocol import ReadRequest

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


def relevances(hits: Sequence[ProviderHit]) -> list[float]:
    """Each hit's score relative to the best one (the best is 1.0), as ``Recall`` shows them and
    ``codegen memory search`` reports them. Scores have no fixed scale across stores (raw BM25 is
    tiny in a small one), so they are shown relative to the best match, on the store's own scale
    (the provider's squash undone)."""
    best = max((_raw(hit) for hit in hits), default=0.0) or 1.0
    return [_raw(hit) / best for hit in hits]


def _raw(hit: ProviderHit) -> float:
    """Undo the provider's ``s / (1 + s)`` squash (monotone), so relevance ratios are the
    store's own."""
    score = min(max(hit.score, 0.0), MAX_UNIT_SCORE)  # a remote provider may send 1.0
    return score / (1.0 - score)


def _forget_handler(provider: FactProvider, scoping: FactScoping) -> ToolHandler:
    # Unscoped (cli, research): every key, as before scopes; scoped: only what the audience sees.
    visible = scoping.visible if scoping.scoped else None

    def handle(args: MemoryForgetInput, ctx: ToolContext) -> ToolResult:
        from specwire.runtime.facts.providers.protocol import ForgetRequest

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
