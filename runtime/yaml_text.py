"""Reading the YAML a person may write by hand: plan front matter, ``goals.yaml``, skill and
command front matter.

What the runtime writes is JSON (valid YAML 1.2), read on a fast path with no YAML library.
Anything else — block mappings, folded ``>`` scalars, comments, quoted values — is read with
ruamel.yaml's safe loader, imported only then, so ``import runtime`` stays fast. Timestamps a
person left unquoted come back as ISO-8601 strings, as the stores write them. A file that is not
valid YAML raises ``ValueError`` naming the line and column (counted from the file's top); its
message reads after the file's name ("goals.yaml is not valid YAML at line 3, column 1: …").
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any


def load_yaml_mapping(text: str, *, first_line: int = 1) -> dict[str, Any]:
    """Parse a YAML (or JSON) mapping; ``first_line`` is the file line ``text`` starts on."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raw = _load_yaml(text, first_line)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"is not a mapping of key: value lines (line {first_line})")
    return {str(key): _plain(value) for key, value in raw.items()}


def _load_yaml(text: str, first_line: int) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return YAML(typ="safe", pure=True).load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + first_line}, column {mark.column + 1}" if mark else "?"
        raise ValueError(f"is not valid YAML at {where}: {exc.problem or exc.context}") from None
    except (YAMLError, RecursionError) as exc:
        raise ValueError(f"is not valid YAML: {exc}") from None


def _plain(value: Any) -> Any:
    """JSON-shaped data: timestamps as ISO strings, keys as strings."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
