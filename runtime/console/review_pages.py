"""The pages that change memory, each a confirm page (GET: what will change) and its POST:
releasing or deleting a held write, erasing a subject (preview, confirm, receipt)."""

from __future__ import annotations

from collections.abc import Mapping

from specwire.runtime.console.data import Refused
from specwire.runtime.console.html import (
    Content,
    Markup,
    definitions,
    hidden,
    link,
    post_form,
    table,
    tag,
    void,
)
from specwire.runtime.console.view import View
from specwire.runtime.core.scopes import PERSONAL_SCOPES, ScopeError, ScopeKey
from specwire.runtime.erasure.subject import Subject, SubjectError
from specwire.runtime.facts.providers.admin import EVERY_KEY

ERASE_KINDS = ("subject", "user", "conversation", "role")


def quarantine(view: View) -> tuple[str, Markup]:
    with view.data.facts() as facts:
        held = facts.quarantine("quarantine").quarantined(EVERY_KEY)
    held.sort(key=lambda item: (item.created_at, item.id), reverse=True)
    rows: list[list[Content]] = [
        [
            view.fact_link(item.id),
            item.rule,
            item.scope.label(),
            item.created_at.isoformat(timespec="seconds"),
            item.text,
            [
                link(view.href(f"/quarantine/{item.id}/release"), "release…"),
                " ",
                link(view.href(f"/quarantine/{item.id}/delete"), "delete…"),
            ],
        ]
        for item in held
    ]
    body = [
        tag(
            "p",
            "Writes the injection scanner held. Releasing one stores it as a live fact the "
            "agent will recall (you vouch for it); deleting drops it for good.",
            class_="note",
        ),
        table(("id", "rule", "scope", "written", "text", "review"), rows, id="held"),
        tag("p", "nothing is held" if not rows else None, class_="note"),
    ]
    return "Quarantine", Markup("".join(str(part) for part in body))


def confirm_held(view: View, fact_id: str, action: str) -> tuple[str, Markup]:
    held = view.data.held(fact_id)
    what = (
        "Release this write as a live fact the agent will recall:"
        if action == "release"
        else "Delete this held write for good:"
    )
    body = [
        tag("p", what),
        definitions(
            [
                ("id", tag("code", held.id)),
                ("held by rule", held.rule),
                ("scope", held.scope.label()),
                ("text", tag("div", held.text, class_="fact-text")),
            ]
        ),
        post_form(
            view.href(f"/quarantine/{held.id}/{action}"),
            view.csrf,
            None,
            f"Yes, {action} it",
            class_="confirm",
        ),
        link(view.href("/quarantine"), "cancel"),
    ]
    return f"Confirm: {action} {held.id}", Markup("".join(str(part) for part in body))


def released(view: View, fact_id: str) -> tuple[str, Markup]:
    fact = view.data.release(fact_id)
    body = [
        tag("p", ["Released as ", view.fact_link(fact.id), ": the agent recalls it from now on."]),
        link(view.href("/quarantine"), "back to the quarantine"),
    ]
    return "Released", Markup("".join(str(part) for part in body))


def deleted(view: View, fact_id: str) -> tuple[str, Markup]:
    view.data.delete_held(fact_id)
    body = [tag("p", f"Deleted the held write {fact_id}."), link(view.href("/quarantine"), "back")]
    return "Deleted", Markup("".join(str(part) for part in body))


def erase_form(view: View) -> tuple[str, Markup]:
    form = tag(
        "form",
        [
            tag(
                "label",
                [
                    "erase",
                    tag(
                        "select",
                        [tag("option", kind, value=kind) for kind in ERASE_KINDS],
                        name="kind",
                    ),
                ],
            ),
            tag("label", ["text or id", void("input", type="text", name="value", required=True)]),
            tag("button", "Preview", type="submit"),
        ],
        method="get",
        action=view.href("/erase/preview"),
        class_="filters",
    )
    note = (
        "subject: the text, case-insensitive, wherever it is (facts that mention it are "
        "deleted, every other copy redacted); user, conversation, role: that subject's whole "
        "memory and every mention of the id. A preview shows where it is before anything "
        "changes."
    )
    return "Erase a subject", Markup(form + tag("p", note, class_="note"))


def erase_subject_of(kind: str, value: str) -> tuple[Subject, ScopeKey | None]:
    """The subject (and the scope key erased whole) a form names; ``Refused`` otherwise."""
    if kind not in ERASE_KINDS:
        raise Refused(f"kind: one of {', '.join(ERASE_KINDS)}")
    try:
        if kind == "subject":
            return Subject.literal(value), None
        key = ScopeKey(kind, value)  # type: ignore[arg-type]
        assert key.scope in PERSONAL_SCOPES and key.subject is not None
        return Subject.identifier(key.subject, key.label()), key
    except (SubjectError, ScopeError) as exc:
        raise Refused(str(exc)) from None


def erase_preview(view: View, query: Mapping[str, str]) -> tuple[str, Markup]:
    kind, value = query.get("kind", "subject"), query.get("value", "")
    subject, key = erase_subject_of(kind, value)
    found = view.data.erase_preview(subject, key)
    rows: list[list[Content]] = [[path, str(count)] for path, count in found.items()]
    whole = (
        "Facts that mention it are deleted"
        if key is None
        else f"Every fact, tier note and held write of {key.label()}, and facts that mention "
        "it, are deleted"
    )
    body = [
        definitions([("erase", kind), ("value", tag("code", value))]),
        tag("h2", "Where it is now"),
        table(("file", "occurrences"), rows, id="preview"),
        tag("p", "it is in no file" if not rows else None, class_="note"),
        tag("p", f"{whole}; every other copy is redacted to [erased]. This cannot be undone."),
        post_form(
            view.href("/erase"),
            view.csrf,
            [hidden("kind", kind), hidden("value", value)],
            "Erase it",
            class_="confirm",
        ),
        link(view.href("/erase"), "cancel"),
    ]
    return "Confirm erasure", Markup("".join(str(part) for part in body))


def erase_done(view: View, kind: str, value: str) -> tuple[str, Markup]:
    subject, key = erase_subject_of(kind, value)
    receipt = view.data.erase(subject, key)
    data = receipt.to_json()
    tiers: list[list[Content]] = [
        [tier, ", ".join(f"{name} {count}" for name, count in counts.items())]
        for tier, counts in sorted(receipt.tiers.items())
    ]
    verification = data["verification"]
    items: list[tuple[str, Content]] = [
        ("subject (keyed hash)", tag("code", receipt.subject_hmac)),
        ("match", receipt.kind),
        ("scope erased whole", receipt.scope or "none"),
        ("tenants covered", ", ".join(receipt.tenants) or "none"),
        ("at", receipt.at),
        ("receipt file", str(receipt.path) if receipt.path is not None else "not written"),
        (
            "verification",
            "clean: 0 occurrences"
            if receipt.verification.clean
            else f"{sum(receipt.verification.hits.values())} occurrence(s) remain",
        ),
        ("files searched", str(verification.get("filesSearched", ""))),
    ]
    body = [
        definitions(items),
        tag("h2", "What was erased"),
        table(("tier", "counts"), tiers, id="receipt"),
    ]
    return "Erasure receipt", Markup("".join(str(part) for part in body))
