"""The front matter of skill and command files: ``---``, YAML ``key: value`` lines, ``---``.

Read as YAML (``runtime.yaml_text``), so folded ``>`` and ``|`` scalars and quoted values mean
what they mean in YAML. Values are strings (a list becomes its items joined by spaces). A file
without front matter is all body; front matter that is not valid YAML raises ``ValueError``.
"""

from __future__ import annotations

from typing import Any

from runtime.yaml_text import load_yaml_mapping


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Return (fields, body)."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    header = text[4:end]
    body = text[end + 4 :].lstrip("\n")
    fields = load_yaml_mapping(header, first_line=2)
    return {key: _text(value) for key, value in fields.items() if value is not None}, body


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_text(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()
