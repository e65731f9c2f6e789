"""The fact pages: the filtered list (keyset pages), search with each hit's reasons, one fact."""

from __future__ import annotations

from collections.abc import Mapping

from specwire.runtime.console.data import NotFound, filter_of
from specwire.runtime.console.html import (
    Content,
    Markup,
    definitions,
    link,
    table,
    tag,
    url,
    void,
)
from specwire.runtime.console.view import View, status_cell
from specwire.runtime.core.scopes import SCOPES
from specwire.runtime.facts.model import MAX_RECALL_K, FactStatus, QuarantinedFact
from specwire.runtime.facts.providers.admin import FactFilter

STATES = ("live", "superseded", "forgotten", "expired", "quarantined", "all")
MAX_FILTER_CHARS = 256


class BadQuery(ValueError):
    """A query parameter out of range (one line for the owner)."""


def _param(query: Mapping[str, str], name: str) -> str | None:
    value = query.get(name, "").strip()
    if len(value) > MAX_FILTER_CHARS:
        raise BadQuery(f"{name}: at most {MAX_FILTER_CHARS} characters")
    return value or None


def _scope_filter(query: Mapping[str, str]) -> FactFilter:
    scope, subject = _param(query, "scope"), _param(query, "subject")
    if scope is not None and scope not in SCOPES:
        raise BadQuery(f"scope: one of {', '.join(SCOPES)}")
    try:
        return filter_of(scope, subject)
    except ValueError as exc:
        raise BadQuery(str(exc)) from None


def _select(name: str, options: tuple[str, ...], chosen: str | None, label: str) -> Markup:
    return tag(
        "label",
        [
            label,
            tag(
                "select",
                [
                    tag("option", option, value=option, selected=option == chosen)
                    for option in options
                ],
                name=name,
            ),
        ],
    )


def _text_input(name: str, value: str | None, label: str, **attrs: object) -> Markup:
    return tag("label", [label, void("input", type="text", name=name, value=value or "", **attrs)])


def _filters(view: View, action: str, query: Mapping[str, str], extra: Content = None) -> Markup:
    return tag(
        "form",
        [
            extra,
            _select("scope", ("", *SCOPES), query.get("scope"), "scope"),
            _text_input("subject", query.get("subject"), "subject"),
            tag("button", "Apply", type="submit"),
        ],
        method="get",
        action=view.href(action),
        class_="filters",
    )


def facts_list(view: View, query: Mapping[str, str]) -> tuple[str, Markup]:
    status = query.get("status") or "live"
    if status not in STATES:
        raise BadQuery(f"status: one of {', '.join(STATES)}")
    where = _scope_filter(query)
    tag_filter, text = _param(query, "tag"), _param(query, "text")
    cursor = _param(query, "after")
    page = view.data.page(status, where, tag=tag_filter, text=text, cursor=cursor)
    form = _filters(
        view,
        "/",
        query,
        [
            _select("status", STATES, status, "state"),
            _text_input("tag", tag_filter, "tag"),
            _text_input("text", text, "text contains"),
        ],
    )
    if status == "quarantined":
        rows: list[list[Content]] = [
            [
                view.fact_link(held.id),
                status_cell("quarantined"),
                held.scope.label(),
                ", ".join(held.tags),
                held.created_at.isoformat(timespec="seconds"),
                held.text,
            ]
            for held in page.held
        ]
    else:
        rows = [_fact_row(view, item) for item in page.statuses]
    pager: list[Content] = []
    if cursor is not None:
        pager.append(link(view.href(url("/", {**query, "after": None})), "first page"))
    if page.next_cursor is not None:
        pager.append(link(view.href(url("/", {**query, "after": page.next_cursor})), "next page"))
    body = [
        form,
        table(("id", "state", "scope", "tags", "written", "text"), rows, id="facts"),
        tag("p", "no facts match" if not rows else None, class_="note"),
        tag("div", pager, class_="pager"),
    ]
    return "Facts", Markup("".join(str(part) for part in body))


def _fact_row(view: View, item: FactStatus) -> list[Content]:
    fact = item.fact
    return [
        view.fact_link(fact.id),
        status_cell(item.status),
        fact.scope.label(),
        ", ".join(fact.tags),
        fact.created_at.isoformat(timespec="seconds"),
        fact.text,
    ]


def search(view: View, query: Mapping[str, str]) -> tuple[str, Markup]:
    text = _param(query, "q")
    k_raw = query.get("k") or "10"
    if not k_raw.isdigit() or not 1 <= int(k_raw) <= MAX_RECALL_K:
        raise BadQuery(f"k: between 1 and {MAX_RECALL_K}")
    k = int(k_raw)
    where = _scope_filter(query)
    form = _filters(
        view,
        "/search",
        query,
        [
            _text_input("q", text, "recall", autofocus=True),
            tag(
                "label",
                [
                    "k",
                    void("input", type="number", name="k", value=str(k), min=1, max=MAX_RECALL_K),
                ],
            ),
        ],
    )
    if text is None:
        return "Search", Markup(
            form + tag("p", "Recall as the agent does: type a query.", class_="note")
        )
    hits = view.data.search(text, where, k)
    rows: list[list[Content]] = [
        [
            str(hit.rank),
            f"{hit.score:.4g}",
            view.fact_link(hit.id),
            hit.scope.label(),
            hit.text,
            tag("ul", [tag("li", reason) for reason in hit.reasons], class_="reasons"),
        ]
        for hit in hits
    ]
    note = (
        "Scores as recall returns them: BM25 alone, or BM25 and cosine fused by reciprocal "
        "rank (1/(60+rank) per ranking) when the store has an embedder; a fact backed by "
        "tool evidence gets the evidence factor."
    )
    body = [
        form,
        tag("p", note, class_="note"),
        table(("#", "score", "id", "scope", "text", "why it ranked"), rows, id="hits"),
        tag("p", "nothing recalled" if not rows else None, class_="note"),
    ]
    return f"Search: {text}", Markup("".join(str(part) for part in body))


def fact_page(view: View, fact_id: str) -> tuple[str, Markup]:
    found = view.data.fact(fact_id)
    if isinstance(found, QuarantinedFact):
        return _held_page(view, found)
    fact = found.fact
    session = fact.provenance.session_id
    writer = view.data.writing_call(fact)
    written_by: Content = "no session recorded"
    if session is not None:
        written_by = [
            link(view.session_href(session, writer), tag("code", session)),
            " (the tool call that wrote it)" if writer is not None else " (session timeline)",
        ]
    evidence: Content = "none"
    if fact.provenance.evidence:
        evidence = tag(
            "ul", [tag("li", view.tool_link(session, use)) for use in fact.provenance.evidence]
        )
    tomb = found.tombstone
    facts: list[tuple[str, Content]] = [
        ("id", tag("code", fact.id)),
        ("state", status_cell(found.status)),
        ("text", tag("div", fact.text, class_="fact-text")),
        ("scope", fact.scope.label()),
        ("tags", ", ".join(fact.tags) or "none"),
        ("key", fact.key or "none"),
        ("tier", fact.tier or "none"),
        ("written", fact.created_at.isoformat(timespec="seconds")),
        (
            "expires",
            "never" if fact.expires_at is None else fact.expires_at.isoformat(timespec="seconds"),
        ),
        ("written in", written_by),
        ("evidence", evidence),
        (
            "tombstone",
            "none"
            if tomb is None
            else f"{tomb.kind} at {tomb.at.isoformat(timespec='seconds')}: "
            f"{tomb.reason or 'no reason given'}",
        ),
    ]
    chain = view.data.chain(found)
    chain_body: Content = tag("p", "not superseded", class_="note")
    if chain:
        chain_body = tag(
            "ol",
            [
                tag(
                    "li",
                    [
                        view.fact_link(item.fact.id),
                        " ",
                        status_cell(item.status),
                        " ",
                        item.fact.text,
                    ],
                )
                for item in chain
            ],
            id="chain",
        )
    body = [definitions(facts), tag("h2", "Superseded by"), chain_body]
    return f"Fact {fact.id}", Markup("".join(str(part) for part in body))


def _held_page(view: View, held: QuarantinedFact) -> tuple[str, Markup]:
    items: list[tuple[str, Content]] = [
        ("id", tag("code", held.id)),
        ("state", status_cell("quarantined")),
        ("text", tag("div", held.text, class_="fact-text")),
        ("held by rule", held.rule),
        ("found on", held.found_on),
        ("scope", held.scope.label()),
        ("tags", ", ".join(held.tags) or "none"),
        ("written", held.created_at.isoformat(timespec="seconds")),
        (
            "written in",
            "no session recorded"
            if held.provenance.session_id is None
            else link(
                view.session_href(held.provenance.session_id),
                tag("code", held.provenance.session_id),
            ),
        ),
        (
            "review",
            [
                link(view.href(f"/quarantine/{held.id}/release"), "release…"),
                " ",
                link(view.href(f"/quarantine/{held.id}/delete"), "delete…"),
            ],
        ),
    ]
    return f"Held write {held.id}", definitions(items)


def not_found(what: NotFound) -> tuple[str, Markup]:
    return "Not found", tag("p", str(what))
