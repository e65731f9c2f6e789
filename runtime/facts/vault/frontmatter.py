"""A note's YAML front matter, read with a small, closed subset of YAML.

A vault is written by people (and synced from elsewhere), so it is hostile input: a full YAML
loader would expand aliases, build deep structures and run for as long as the file asks. What
notes put in front matter is flat, so only this is read, line by line, in linear time:

- ``key: value`` with a plain, ``'single'`` or ``"double"`` quoted scalar (a plain scalar ends
  at `` #``, a comment);
- ``key: [a, "b c", d]``, a flow list of scalars;
- ``key:`` followed by ``  - item`` lines, a block list of scalars;
- comment and blank lines.

Anything else (nested mappings, anchors, multi-line scalars) leaves that key out, never the
whole note. The block starts with ``---`` on the first line and ends with ``---`` or ``...``
within ``MAX_FRONT_MATTER_LINES`` lines and ``MAX_FRONT_MATTER_BYTES``; otherwise the note has
no front matter and its whole text is the body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_FRONT_MATTER_LINES = 200
MAX_FRONT_MATTER_BYTES = 16 * 1024
# A list keeps at most this many items (an alias or tag list, not a data set).
MAX_LIST_ITEMS = 64

_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]{0,63})\s*:(?:\s+(.*))?$")
_ITEM_LINE = re.compile(r"^\s+-\s+(.*)$|^-\s+(.*)$")

Value = str | tuple[str, ...]


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, Value] = field(default_factory=dict)
    # The text after the block (the whole text when there is none).
    body: str = ""

    def text(self, key: str) -> str | None:
        """A scalar field (the first item of a list), stripped; None when absent or empty."""
        value = self.fields.get(key)
        if isinstance(value, tuple):
            value = value[0] if value else None
        return value.strip() or None if isinstance(value, str) else None

    def items(self, key: str) -> tuple[str, ...]:
        """A list field (a scalar is a list of one, ``a, b`` split at commas), non-empty
        items only."""
        value = self.fields.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            value = tuple(value.split(","))
        return tuple(item.strip() for item in value if item.strip())


def split_front_matter(text: str) -> FrontMatter:
    """The front matter fields of ``text`` and the body after them."""
    if not text.startswith("---"):
        return FrontMatter(body=text)
    lines = text.split("\n", MAX_FRONT_MATTER_LINES + 1)
    if lines[0].rstrip() != "---":
        return FrontMatter(body=text)
    size = 0
    for index in range(1, min(len(lines), MAX_FRONT_MATTER_LINES + 1)):
        line = lines[index]
        size += len(line) + 1
        if size > MAX_FRONT_MATTER_BYTES:
            break
        if line.rstrip() in ("---", "..."):
            block = lines[1:index]
            rest = text.split("\n", index + 1)
            body = rest[index + 1] if len(rest) > index + 1 else ""
            return FrontMatter(parse_block(block), body)
    return FrontMatter(body=text)


def parse_block(lines: list[str]) -> dict[str, Value]:
    fields: dict[str, Value] = {}
    pending: str | None = None  # a ``key:`` with no value: its block list items may follow
    items: list[str] = []
    broken = False  # the pending key met a line that is not an item: left out
    for raw in lines:
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        item = _ITEM_LINE.match(line)
        if item is not None and pending is not None:
            value = _scalar(item.group(1) if item.group(1) is not None else item.group(2))
            if value is None or len(items) >= MAX_LIST_ITEMS:
                broken = True
            else:
                items.append(value)
            continue
        if pending is not None:
            if items and not broken:
                fields[pending] = tuple(items)
            pending, items, broken = None, [], False
        key_line = _KEY_LINE.match(line)
        if key_line is None:
            continue  # nested or unknown syntax: skipped
        key, rest = key_line.group(1), (key_line.group(2) or "").strip()
        if not rest or rest.startswith("#"):
            pending = key
            continue
        read: Value | None = _flow_list(rest) if rest.startswith("[") else _scalar(rest)
        if read is not None:
            fields[key] = read
    if pending is not None and items and not broken:
        fields[pending] = tuple(items)
    return fields


def _scalar(text: str) -> str | None:
    """A plain or quoted scalar; None for what this subset does not read."""
    text = text.strip()
    if not text:
        return ""
    if text[0] == '"':
        end = _closing_double(text)
        if end is None or not _nothing_but_a_comment(text[end + 1 :]):
            return None
        return _unescape_double(text[1:end])
    if text[0] == "'":
        inner = re.match(r"^'((?:[^']|'')*)'", text)
        if inner is None or not _nothing_but_a_comment(text[inner.end() :]):
            return None
        return inner.group(1).replace("''", "'")
    if text[0] in "&*!|>{[@`%":
        return None  # anchors, aliases, tags, block scalars, flow mappings: not read
    comment = re.search(r"\s#", text)
    return (text[: comment.start()] if comment else text).strip()


def _nothing_but_a_comment(rest: str) -> bool:
    """What follows a quoted scalar is nothing, or a comment."""
    stripped = rest.strip()
    return not stripped or (stripped.startswith("#") and rest[:1].isspace())


def _closing_double(text: str) -> int | None:
    index = 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index
        index += 1
    return None


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}


def _unescape_double(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def _flow_list(text: str) -> tuple[str, ...] | None:
    """``[a, "b, c", 'd']`` (scalars only); None for anything else."""
    end = _flow_end(text)
    if end is None or not _nothing_but_a_comment(text[end + 1 :]):
        return None
    inner = text[1:end]
    items: list[str] = []
    for part in _flow_items(inner):
        value = _scalar(part)
        if value is None or len(items) >= MAX_LIST_ITEMS:
            return None
        if value:
            items.append(value)
    return tuple(items)


def _flow_end(text: str) -> int | None:
    quote: str | None = None
    index = 1
    while index < len(text):
        char = text[index]
        if quote == '"' and char == "\\":
            index += 2
            continue
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "[" or char == "{":
            return None  # nested: not read
        elif char == "]":
            return index
        index += 1
    return None


def _flow_items(inner: str) -> list[str]:
    parts: list[str] = []
    quote: str | None = None
    start = 0
    index = 0
    while index < len(inner):
        char = inner[index]
        if quote == '"' and char == "\\":
            index += 2
            continue
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == ",":
            parts.append(inner[start:index])
            start = index + 1
        index += 1
    parts.append(inner[start:])
    return [part for part in parts if part.strip()]
