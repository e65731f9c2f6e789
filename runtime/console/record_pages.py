"""Continuity (plans, steps, proofs and their evidence, goals, focus, handoff) and the session
timelines the proofs point into."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from specwire.runtime.console.data import PERSON_SCOPES, Refused
from specwire.runtime.console.html import Content, Markup, definitions, link, table, tag, void
from specwire.runtime.console.view import View, tool_anchor
from specwire.runtime.continuity.plans import Plan
from specwire.runtime.continuity.proof import Citation, FrozenProof
from specwire.runtime.core.scopes import ScopeError, ScopeKey
from specwire.runtime.sessions.log import Event

MAX_PAYLOAD_CHARS = 4000


def _proofs(
    view: View, proofs: tuple[FrozenProof, ...], citations: tuple[Citation, ...]
) -> Content:
    items: list[Content] = [
        tag(
            "li",
            [
                "proof: ",
                view.tool_link(proof.session_id, proof.tool_use_id),
                f" {proof.tool_name or 'tool'} · verified {proof.verified_at}",
            ],
            class_="proof",
        )
        for proof in proofs
    ]
    items += [
        tag(
            "li",
            ["cited (not verified): ", view.tool_link(cite.session_id, cite.tool_use_id)],
            class_="citation",
        )
        for cite in citations
    ]
    return tag("ul", items) if items else None


def _plan(view: View, plan: Plan, active: bool) -> Markup:
    steps = [
        tag(
            "li",
            [
                tag("span", f"[{step.status}] ", class_=f"status-{step.status}"),
                step.text,
                _proofs(view, plan.proofs.get(number, ()), plan.citations.get(number, ())),
            ],
        )
        for number, step in enumerate(plan.steps, start=1)
    ]
    title = f"{plan.id} — {plan.title}" + (" (active)" if active else "")
    return tag("section", [tag("h2", title), tag("ol", steps)], class_="plan", id=plan.id)


def person_of(query: Mapping[str, str]) -> ScopeKey | None:
    """Whose working memory the page shows: ``?user=ID`` or ``?conversation=ID`` (one), or
    None for the tenant-wide (or ``--session``) folder. ``Refused`` for both, or a bad id."""
    given = [(scope, query.get(scope, "")) for scope in PERSON_SCOPES]
    named = [(scope, value) for scope, value in given if value.strip()]
    if len(named) > 1:
        raise Refused("whose working memory: a user or a conversation, not both")
    if not named:
        return None
    scope, value = named[0]
    try:
        return ScopeKey(scope, value)  # type: ignore[arg-type]
    except ScopeError as exc:
        raise Refused(f"{scope}: {exc}") from None


def _whose_form(view: View, person: ScopeKey | None) -> Markup:
    fields: list[Content] = [
        tag(
            "label",
            [
                scope,
                void(
                    "input",
                    type="text",
                    name=scope,
                    value=person.subject if person is not None and person.scope == scope else "",
                ),
            ],
        )
        for scope in PERSON_SCOPES
    ]
    return tag(
        "form",
        [*fields, tag("button", "Show", type="submit")],
        method="get",
        action=view.href("/continuity"),
        class_="filters",
    )


def continuity(view: View, query: Mapping[str, str] | None = None) -> tuple[str, Markup]:
    person = person_of(query or {})
    store = view.data.continuity(person)
    focus = store.read_focus()
    active = store.active_plan_id()
    plans = store.list_plans()
    goals = store.list_goals()
    handoff = store.read_handoff()
    goal_rows: list[list[Content]] = [
        [
            goal.id,
            goal.status,
            goal.title,
            "" if goal.target is None else f"{goal.current or 0}/{goal.target} {goal.unit or ''}",
            _proofs(view, goal.proofs, goal.citations),
        ]
        for goal in goals
    ]
    whose = (
        f"{person.scope} {person.subject}'s working memory (a managed bundle keeps each "
        "person's apart)"
        if person is not None
        else "the tenant-wide working memory (a managed bundle keeps each person's apart: name "
        "a user or conversation to see theirs)"
        if view.data.selection.session is None
        else f"the working memory of conversation {view.data.selection.session}"
    )
    body: list[Content] = [
        _whose_form(view, person),
        tag("p", ["showing ", whose], class_="note", id="whose"),
        tag("h2", "Focus"),
        tag("pre", focus.body.strip() if focus is not None and focus.body.strip() else "(none)"),
        *[_plan(view, plan, plan.id == active) for plan in plans],
        tag("p", "no plans" if not plans else None, class_="note"),
        tag("h2", "Goals"),
        table(("id", "status", "title", "progress", "proofs"), goal_rows, id="goals"),
        tag("h2", "Handoff"),
        tag("pre", handoff.strip() if handoff else "(none)"),
    ]
    return "Continuity", Markup("".join(str(part) for part in body))


def sessions(view: View) -> tuple[str, Markup]:
    rows: list[list[Content]] = [
        [
            link(view.session_href(session_id), tag("code", session_id)),
            f"{size:,} bytes",
            datetime.fromtimestamp(modified, UTC).isoformat(timespec="seconds"),
        ]
        for session_id, size, modified in view.data.sessions()
    ]
    body = [
        table(("session", "log size", "last written"), rows, id="sessions"),
        tag("p", "no session logs" if not rows else None, class_="note"),
    ]
    return "Sessions", Markup("".join(str(part) for part in body))


def _payload(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    return text if len(text) <= MAX_PAYLOAD_CHARS else text[:MAX_PAYLOAD_CHARS] + " …"


def _event(event: Event) -> Markup:
    payload = event.payload
    kind = event.type
    element_id = f"e{event.seq}"
    parts: list[Content] = [tag("span", kind, class_="kind"), tag("small", event.at)]
    if kind in ("user_message", "assistant_message"):
        parts.append(tag("div", _payload(payload.get("text", "")), class_="text"))
        usage = payload.get("usage")
        if isinstance(usage, dict):
            parts.append(tag("small", "tokens: " + ", ".join(f"{k} {v}" for k, v in usage.items())))
    elif kind == "tool_use":
        use = payload.get("id")
        if isinstance(use, str):
            element_id = tool_anchor(use)
        parts += [
            " ",
            tag("code", str(payload.get("name", ""))),
            tag("pre", _payload(payload.get("input"))),
        ]
    elif kind == "tool_result":
        parts += [
            " ",
            tag("code", str(payload.get("name", ""))),
            " error" if payload.get("isError") is True else "",
            tag("pre", _payload(payload.get("text", ""))),
        ]
    elif kind == "recall":
        parts += [
            f" {payload.get('query', '')!s} → {payload.get('count', 0)!s} recalled",
            tag("pre", _payload(payload.get("lines", ""))),
        ]
    else:
        parts.append(tag("pre", _payload(payload)))
    return tag("div", parts, class_=f"event event-{kind}", id=element_id)


def session(view: View, session_id: str) -> tuple[str, Markup]:
    events = view.data.session_events(session_id)
    usage = _usage(events)
    summary = definitions(
        [
            ("events", str(len(events))),
            ("turns", str(sum(event.type == "user_message" for event in events))),
            ("tool calls", str(sum(event.type == "tool_use" for event in events))),
            ("recalls", str(sum(event.type == "recall" for event in events))),
            ("usage", usage or "none recorded"),
        ]
    )
    body = [
        summary,
        tag("h2", "Timeline"),
        tag("div", [_event(event) for event in events], id="timeline"),
    ]
    return f"Session {session_id}", Markup("".join(str(part) for part in body))


def _usage(events: list[Event]) -> str:
    """Token usage and cost summed over the events that carry them."""
    totals: dict[str, float] = {}
    for event in events:
        usage = event.payload.get("usage")
        if not isinstance(usage, dict):
            continue
        for name, value in usage.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                totals[str(name)] = totals.get(str(name), 0) + value
    return ", ".join(f"{name} {value:g}" for name, value in sorted(totals.items()))
