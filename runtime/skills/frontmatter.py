"""The front matter of skill and command files: ``---``, YAML ``key: value`` lines, ``---``.

Read as YAML (``runtime.core.yaml_text``), so folded ``>`` and ``|`` scalars and quoted values mean
what they mean in YAML. Values are strings (a list becomes its items joined by spaces). A file
without front matter is all body; front matter that is not valid YAML raises ``ValueError``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from specwire.runtime.core.yaml_text import load_yaml_mapping

# ``key: value`` where the value is a plain scalar YAML reads as that same text (no indicator
# first, no ": " or " #" inside) or a double-quoted JSON string. Every builtin file is this
# simple, so starting an agent never loads the YAML library.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][\w-]*):(?:[ \t]+(.*?))?[ \t]*")
_PLAIN_SAFE = re.compile(r"[^\s\d.+\-?:,\[\]{}#&*!|>'\"%@`][^\t\n]*")
_YAML_SPECIAL_PLAIN = frozenset({"null", "~", "true", "false", "yes", "no", "on", "off"})


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Return (fields, body)."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    header = text[4:end]
    body = text[end + 4 :].lstrip("\n")
    simple = _simple_fields(header)
    fields = simple if simple is not None else load_yaml_mapping(header, first_line=2)
    return {key: _text(value) for key, value in fields.items() if value is not None}, body


def _simple_fields(header: str) -> dict[str, Any] | None:
    """The fields when every line is a simple ``key: value``; None when YAML must decide."""
    fields: dict[str, Any] = {}
    for line in header.split("\n"):
        match = None if "\t" in line else _SIMPLE_LINE.fullmatch(line)
        if match is None or match.group(1) in fields:
            return None
        value = match.group(2) or ""
        if value.startswith('"'):
            try:
                decoded = json.loads(value)
            except json.JSONDecodeError:
                return None
            if not isinstance(decoded, str):
                return None
            fields[match.group(1)] = decoded
        elif value == "":
            fields[match.group(1)] = None
        elif (
            _PLAIN_SAFE.fullmatch(value)
            and ": " not in value
            and " #" not in value
            and not value.endswith(":")
            and value.lower() not in _YAML_SPECIAL_PLAIN
        ):
            fields[match.group(1)] = value
        else:
            return None
    return fields


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_text(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()
