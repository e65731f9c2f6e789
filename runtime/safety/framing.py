"""One way stored text enters the prompt: inside a tagged block it cannot open or close.

Facts, the handoff note, the plan, focus, goals, the requirements ledger and skill descriptions
are data a person, a past session or a prompt injection wrote. ``frame`` wraps such text in
``<tag>…</tag>``, and ``neutralize`` first escapes anything in it that reads as a tag (``<name…>``,
``</name…>``), whatever the tag's name, so no stored text can end its block early
and speak with the system's voice. Look-alikes count: fullwidth and small-form ``<``, angle
quotation marks and brackets, fraction and division slashes, and invisible characters (zero-width
spaces and joiners, soft hyphens, bidi marks, variation selectors) inserted to split a tag.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

ESCAPED_OPEN = "&lt;"
ESCAPED_CLOSE = "&gt;"
_TAG_SCAN_CHARS = 200

_LESS_THAN = frozenset("<\uff1c\ufe64\u2039\u2329\u3008\u27e8\u02c2\u1438\u276e\u29fc")
_GREATER_THAN = frozenset(">\uff1e\ufe65\u203a\u232a\u3009\u27e9\u02c3\u1433\u276f\u29fd")
_SLASH = frozenset("/\uff0f\u2044\u2215\u29f8\u2571\u27cb")
_SPACE = frozenset(" \t")


def _invisible(char: str) -> bool:
    if char in _SPACE:
        return True
    category = unicodedata.category(char)
    return category in {"Cf", "Mn", "Me"} or (0xFE00 <= ord(char) <= 0xFE0F)


def _starts_name(char: str) -> bool:
    folded = unicodedata.normalize("NFKC", char)
    return bool(folded) and (folded[0].isalpha() or folded[0] == "_")


def _opens_tag(text: str, start: int) -> bool:
    """Whether ``text[start]`` (a ``<`` or look-alike) begins ``<name`` or ``</name``."""
    index = start + 1
    while index < len(text) and _invisible(text[index]):
        index += 1
    if index < len(text) and text[index] in _SLASH:
        index += 1
        while index < len(text) and _invisible(text[index]):
            index += 1
    return index < len(text) and _starts_name(text[index])


def _closing_bracket(text: str, start: int) -> int | None:
    """The ``>`` (or look-alike) that ends the tag opened at ``start``, on the same line."""
    for index in range(start + 1, min(len(text), start + 1 + _TAG_SCAN_CHARS)):
        char = text[index]
        if char in _GREATER_THAN:
            return index
        if char == "\n" or char in _LESS_THAN:
            return None
    return None


def neutralize(text: str) -> str:
    """``text`` with every tag-opening ``<`` (or look-alike) and its ``>`` escaped."""
    if not any(char in _LESS_THAN for char in text):
        return text
    escaped: dict[int, str] = {}
    for index, char in enumerate(text):
        if char in _LESS_THAN and _opens_tag(text, index):
            escaped[index] = ESCAPED_OPEN
            close = _closing_bracket(text, index)
            if close is not None:
                escaped[close] = ESCAPED_CLOSE
    if not escaped:
        return text
    return "".join(escaped.get(index, char) for index, char in enumerate(text))


def frame(tag: str, body: str | Iterable[str], header: str | None = None) -> str:
    """``<tag>``, an optional trusted header, the neutralized body, ``</tag>``."""
    text = body if isinstance(body, str) else "\n".join(body)
    lines = [f"<{tag}>", *([header] if header else []), neutralize(text), f"</{tag}>"]
    return "\n".join(lines)
