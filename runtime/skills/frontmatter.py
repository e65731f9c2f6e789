"""A small front-matter reader for skill and command files (``---`` key: value ``---`` body)."""

from __future__ import annotations

import json


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Return (fields, body). Values may be bare or JSON-quoted; a file without front matter
    is all body."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    header = text[4:end]
    body = text[end + 4 :].lstrip("\n")
    fields: dict[str, str] = {}
    for line in header.splitlines():
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            try:
                value = str(json.loads(value))
            except json.JSONDecodeError:
                value = value[1:-1]
        fields[key.strip()] = value
    return fields, body
