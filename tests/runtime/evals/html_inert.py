"""Reading report HTML back with ``html.parser``: its elements, attributes and text, and the
check that nothing in it can run (no script element, no event handler attribute, no
``javascript:`` URL, no reference outside the page).

Also the hostile texts the report tests feed in: the injection corpus (plain, labelled) and the
markup attacks aimed at a browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from tests.runtime.safety.injection_corpus import BENIGN, MALICIOUS
from tests.runtime.safety.labelled_corpus import load_corpus

MARKUP_ATTACKS = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "javascript:alert(document.cookie)",
    "</title><script>alert(1)</script>",
    "<svg onload=alert(1)><circle/></svg>",
    "]]><script>alert(1)</script>",
    "<a href='javascript:alert(1)'>click</a>",
    "' onmouseover='alert(1)",
    '<style>body{display:none}</style><link rel=stylesheet href="https://evil.example/x.css">',
    "<iframe src=//evil.example></iframe>",
    "<foreignObject><body onload=alert(1)></foreignObject>",
    "<scr\x00ipt>alert(1)</scr\x00ipt>",
    "&lt;script&gt; already escaped &amp; text",
)
RUNNABLE_TAGS = frozenset(
    {"script", "iframe", "object", "embed", "foreignobject", "link", "img", "image", "use", "a"}
)
URL_ATTRIBUTES = frozenset({"href", "src", "xlink:href", "action", "formaction", "srcset"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def hostile_texts() -> list[str]:
    """Every text of the injection corpus and the markup attacks."""
    return [*MALICIOUS, *BENIGN, *(item.text for item in load_corpus()), *MARKUP_ATTACKS]


def shown_as(value: str) -> str:
    """What a report shows of ``value``: control characters dropped."""
    return _CONTROL.sub("", value)


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None = None
    children: list[Element] = field(default_factory=list)
    text: str = ""

    def all_text(self) -> str:
        return self.text + "".join(child.all_text() for child in self.children)

    def find_all(self, tag: str) -> list[Element]:
        found = [self] if self.tag == tag else []
        for child in self.children:
            found += child.find_all(tag)
        return found


VOID = frozenset({"meta", "br", "hr", "input", "link", "img"})


class Tree(HTMLParser):
    """The document as a tree of elements (text kept per element, entities decoded)."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.current = self.root
        self.attributes: list[tuple[str, str, str]] = []  # (tag, name, value)
        self.doctype: str | None = None
        self.feed(markup)
        self.close()

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.attributes += [(tag, name, value) for name, value in values.items()]
        element = Element(tag, values, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.attributes += [(tag, name, value) for name, value in values.items()]
        self.current.children.append(Element(tag, values, self.current))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        node: Element | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"unbalanced </{tag}>"
        assert node is self.current, f"</{tag}> closes <{self.current.tag}> too"
        self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.text += data


def parse(markup: str) -> Tree:
    tree = Tree(markup)
    assert tree.current is tree.root, f"<{tree.current.tag}> is never closed"
    return tree


def assert_inert(markup: str) -> Tree:
    """Parse ``markup`` and check that nothing in it can run or fetch."""
    tree = parse(markup)
    assert "<script" not in markup.lower()
    tags = _tags(tree.root)
    assert not tags & RUNNABLE_TAGS, tags & RUNNABLE_TAGS
    for tag, name, value in tree.attributes:
        assert not name.startswith("on"), (tag, name, value)
        assert name not in URL_ATTRIBUTES, (tag, name, value)
        assert "javascript:" not in re.sub(r"\s", "", value).lower(), (tag, name, value)
        if name == "style":
            assert "url(" not in value.lower(), (tag, name, value)
    for style in tree.root.find_all("style"):
        assert "url(" not in style.all_text() and "@import" not in style.all_text()
    return tree


def _tags(element: Element) -> set[str]:
    found = {element.tag}
    for child in element.children:
        found |= _tags(child)
    return found
