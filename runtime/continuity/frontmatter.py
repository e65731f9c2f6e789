"""JSON-in-YAML: the store's YAML files are written as pretty-printed, key-sorted JSON.

JSON is valid YAML 1.2, so ``goals.yaml`` and plan frontmatter stay readable by any YAML tool
while the runtime needs no YAML library. Reading accepts exactly that subset.
"""

from __future__ import annotations

import json
from typing import Any

FENCE = "---"


def dump_data(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)


def load_mapping(text: str) -> dict[str, Any]:
    """Parse a JSON object; raise ValueError when the text is not one."""
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise ValueError("expected a mapping")
    return raw


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split ``---\\n<json>\\n---\\n<body>``.

    Raise ValueError with a short reason a person can act on (line numbers count from the top
    of the file) when the front matter is missing or is not a JSON object.
    """
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != FENCE:
        raise ValueError("no front matter (the file must start with a --- line)")
    for end in range(1, len(lines)):
        if lines[end].strip() == FENCE:
            try:
                raw = json.loads("\n".join(lines[1:end]))
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"front matter is not valid JSON at line {exc.lineno + 1}, "
                    f"column {exc.colno}: {exc.msg}"
                ) from None
            if not isinstance(raw, dict):
                raise ValueError("the front matter is not a JSON object")
            return raw, "\n".join(lines[end + 1 :])
    raise ValueError("the front matter has no closing --- line")


def join_frontmatter(meta: dict[str, Any], body: str) -> str:
    return f"{FENCE}\n{dump_data(meta)}\n{FENCE}\n\n{body}"
