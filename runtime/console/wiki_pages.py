"""Wiki articles, their versions, and the difference between two versions (``difflib``, every
line escaped)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from urllib.parse import quote

from specwire.runtime.console.data import NotFound
from specwire.runtime.console.html import Content, Markup, definitions, link, table, tag, url
from specwire.runtime.console.view import View


def articles(view: View) -> tuple[str, Markup]:
    rows: list[list[Content]] = [
        [
            link(view.href(f"/wiki/{quote(article.slug, safe='')}"), article.title),
            tag("code", article.slug),
            str(article.version),
            article.status,
            article.updated_at,
        ]
        for article in view.data.articles()
    ]
    body = [
        table(("title", "slug", "version", "status", "updated"), rows, id="articles"),
        tag("p", "no articles" if not rows else None, class_="note"),
    ]
    return "Wiki", Markup("".join(str(part) for part in body))


def _version(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name, "")
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= 1_000_000:
        raise NotFound(f"{name}: not a version number")
    return int(raw)


def article(view: View, slug: str, query: Mapping[str, str]) -> tuple[str, Markup]:
    current = view.data.article(slug)
    shown = current
    wanted = _version(query, "version")
    if wanted is not None and wanted != current.version:
        shown = view.data.article(slug, wanted)
    base = f"/wiki/{quote(slug, safe='')}"
    versions: list[Content] = []
    for number in range(current.version, 0, -1):
        entry: list[Content] = [
            link(view.href(url(base, {"version": number})), f"version {number}")
        ]
        if number > 1:
            entry += [
                " · ",
                link(view.href(url(f"{base}/diff", {"from": number - 1, "to": number})), "diff"),
            ]
        versions.append(tag("li", entry))
    body = [
        definitions(
            [
                ("slug", tag("code", shown.slug)),
                ("version", f"{shown.version} of {current.version}"),
                ("status", shown.status),
                ("tags", ", ".join(shown.tags) or "none"),
                ("sources", ", ".join(shown.sources) or "none"),
                ("edit message", shown.edit_message or "none"),
            ]
        ),
        tag("pre", shown.body, class_="article-body"),
        tag("h2", "Versions"),
        tag("ul", versions),
    ]
    return shown.title, Markup("".join(str(part) for part in body))


def diff(view: View, slug: str, query: Mapping[str, str]) -> tuple[str, Markup]:
    old_number, new_number = _version(query, "from"), _version(query, "to")
    if old_number is None or new_number is None:
        raise NotFound("a diff needs from= and to= versions")
    old, new = view.data.article(slug, old_number), view.data.article(slug, new_number)
    lines = difflib.unified_diff(
        old.body.splitlines(),
        new.body.splitlines(),
        f"version {old_number}",
        f"version {new_number}",
        lineterm="",
    )
    rendered = [
        tag(
            "div",
            line,
            class_="diff-add"
            if line.startswith("+")
            else "diff-del"
            if line.startswith("-")
            else None,
        )
        for line in lines
    ]
    body = [
        tag("p", link(view.href(f"/wiki/{quote(slug, safe='')}"), "back to the article")),
        tag("pre", rendered or "no difference", id="diff"),
    ]
    return f"{new.title}: version {old_number} → {new_number}", Markup(
        "".join(str(part) for part in body)
    )
