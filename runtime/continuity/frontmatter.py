"""The store's YAML files: written as pretty-printed, key-sorted JSON, read as any YAML.

JSON is valid YAML 1.2, so what the store writes stays readable by any YAML tool and is read back
without a YAML library; a person may rewrite ``goals.yaml`` or a plan's front matter as ordinary
block YAML (``runtime.core.yaml_text``), and the store reads that too.
"""

from __future__ import annotations

import json
from typing import Any

from specwire.runtime.core.yaml_text import load_yaml_mapping

FENCE = "---"


def dump_data(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)


def load_mapping(text: str) -> dict[str, Any]:
    """Parse a YAML mapping; raise ValueError (with the line) when the text is not one."""
    return load_yaml_mapping(text)


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split a ``---`` fenced YAML front matter from the body after it.

    Raise ValueError with a short reason a person can act on (line numbers count from the top
    of the file) when the front matter is missing or is not a YAML mapping.
    """
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != FENCE:
        raise ValueError("no front matter (the file must start with a --- line)")
    for end in range(1, len(lines)):
        if lines[end].strip() == FENCE:
            try:
                raw = load_yaml_mapping("\n".join(lines[1:end]), first_line=2)
            except ValueError as exc:
                raise ValueError(f"front matter {exc}") from None
            return raw, "\n".join(lines[end + 1 :])
    raise ValueError("the front matter has no closing --- line")


def join_frontmatter(meta: dict[str, Any], body: str) -> str:
    return f"{FENCE}\n{dump_data(meta)}\n{FENCE}\n\n{body}"
