"""Small HTML builders: every value they are given is escaped, so stored text renders as text.

``Markup`` marks HTML this module (or a caller building from these functions) made; anything
else is a ``str`` and is escaped where it is placed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from urllib.parse import urlencode

STYLESHEET = "/static/console.css"


class Markup(str):
    """HTML built by these functions (never escaped again)."""


Content = str | Markup | Iterable["Content"] | None


def esc(value: object) -> Markup:
    """``value`` as text inside HTML (quotes escaped too: safe inside attributes)."""
    return Markup(escape(str(value), quote=True))


def render(content: Content) -> Markup:
    if content is None:
        return Markup("")
    if isinstance(content, Markup):
        return content
    if isinstance(content, str):
        return esc(content)
    return Markup("".join(render(part) for part in content))


def tag(element: str, content: Content = None, **attrs: object) -> Markup:
    """``<element attrs>content</element>``; an attribute named with a trailing ``_`` (``class_``)
    loses it; None or False leaves the attribute out, True writes its name alone."""
    return Markup(f"{_open(element, attrs)}{render(content)}</{element}>")


def void(element: str, **attrs: object) -> Markup:
    return Markup(_open(element, attrs))


def _open(element: str, attrs: Mapping[str, object]) -> str:
    parts = [element]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        parts.append(attr if value is True else f'{attr}="{esc(value)}"')
    return f"<{' '.join(parts)}>"


def link(href: str, content: Content, **attrs: object) -> Markup:
    return tag("a", content, href=href, **attrs)


def url(path: str, query: Mapping[str, object | None] | None = None) -> str:
    """``path`` with the non-empty ``query`` values (percent-encoded)."""
    pairs = [(k, str(v)) for k, v in (query or {}).items() if v not in (None, "")]
    return f"{path}?{urlencode(pairs)}" if pairs else path


def table(headers: Sequence[str], rows: Iterable[Sequence[Content]], **attrs: object) -> Markup:
    head = tag("tr", [tag("th", header) for header in headers])
    body = [tag("tr", [tag("td", cell) for cell in row]) for row in rows]
    return tag("table", [tag("thead", head), tag("tbody", body)], **attrs)


def definitions(items: Iterable[tuple[str, Content]]) -> Markup:
    return tag("dl", [[tag("dt", term), tag("dd", value)] for term, value in items])


def hidden(field: str, value: str) -> Markup:
    return void("input", type="hidden", name=field, value=value)


def post_form(action: str, csrf: str, fields: Content, button: str, **attrs: object) -> Markup:
    """A POST form carrying the session's CSRF token."""
    return tag(
        "form",
        [hidden("csrf", csrf), fields, tag("button", button, type="submit")],
        method="post",
        action=action,
        **attrs,
    )


NAV = (
    ("/", "Facts"),
    ("/search", "Search"),
    ("/quarantine", "Quarantine"),
    ("/continuity", "Continuity"),
    ("/sessions", "Sessions"),
    ("/wiki", "Wiki"),
    ("/erase", "Erase"),
    ("/evals", "Evals & dream"),
)


def page(
    title: str, body: Content, *, where: str, base: str = "", csrf: str | None = None
) -> Markup:
    """A whole page: the stylesheet, the navigation (paths under ``base``; with ``csrf``, a
    logged-in session's, the log-out button), ``where`` (the store the console reads) and
    ``body``."""
    links: list[Content] = [link(base + path, label) for path, label in NAV]
    if csrf is not None:
        links.append(post_form(base + "/logout", csrf, None, "Log out", class_="logout"))
    nav = tag("nav", links)
    return Markup(
        "<!doctype html>"
        + tag(
            "html",
            [
                tag(
                    "head",
                    [
                        void("meta", charset="utf-8"),
                        tag("title", f"{title} · specwire console"),
                        void("link", rel="stylesheet", href=base + STYLESHEET),
                    ],
                ),
                tag(
                    "body",
                    [
                        tag(
                            "header",
                            [tag("strong", "specwire memory console"), " ", tag("small", where)],
                        ),
                        nav,
                        tag("main", [tag("h1", title), body]),
                    ],
                ),
            ],
            lang="en",
        )
    )
