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
from dataclasses import field
from datetime import UTC, date, datetime
from typing import Any

from specwire.runtime.core.lazy_dataclass import lazy_dataclass


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


class LocatedYamlError(ValueError):
    """YAML that cannot be read, at a 1-based line and column."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@lazy_dataclass(frozen=True)
class Located:
    """A YAML value and the 1-based line and column where it starts.

    ``value`` is a plain scalar (``str``, ``int``, ``float``, ``bool``, ``None``; timestamps as
    ISO strings), a ``dict[str, Located]`` (``key_marks`` holds each key's own position) or a
    ``list[Located]``.
    """

    value: Any
    line: int
    column: int
    key_marks: dict[str, tuple[int, int]] = field(default_factory=dict)


def load_located_yaml(text: str) -> Located:
    """Parse a hand-written YAML file keeping positions (duplicate keys are refused), for files
    whose problems are reported as ``file:line:col``; ``LocatedYamlError`` otherwise."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    loader = YAML(typ="rt", pure=True)
    loader.allow_duplicate_keys = False
    try:
        data = loader.load(text.removeprefix("\ufeff"))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise LocatedYamlError(f"invalid YAML: {problem}", line, column) from None
    except (YAMLError, RecursionError) as exc:
        first = str(exc).strip().splitlines()
        raise LocatedYamlError(f"invalid YAML: {first[0] if first else exc!r}") from None
    try:
        return _locate(data, 1, 1, [MAX_LOCATED_VALUES])
    except RecursionError:
        raise LocatedYamlError(
            "invalid YAML: nested too deeply (or an alias inside itself)"
        ) from None


# Aliases can repeat a collection many times over ("billion laughs"): a document may expand to
# at most this many values.
MAX_LOCATED_VALUES = 100_000


def _locate(value: Any, line: int, column: int, budget: list[int]) -> Located:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    budget[0] -= 1
    if budget[0] < 0:
        raise LocatedYamlError(
            f"invalid YAML: aliases expand the document past {MAX_LOCATED_VALUES} values",
            line,
            column,
        )
    if isinstance(value, CommentedMap):
        children: dict[str, Located] = {}
        marks: dict[str, tuple[int, int]] = {}
        for key in value:
            key_line, key_column = value.lc.key(key)
            value_line, value_column = value.lc.value(key)
            name = str(key)
            marks[name] = (key_line + 1, key_column + 1)
            children[name] = _locate(value[key], value_line + 1, value_column + 1, budget)
        return Located(children, line, column, marks)
    if isinstance(value, CommentedSeq):
        items = []
        for index, item in enumerate(value):
            item_line, item_column = value.lc.item(index)
            items.append(_locate(item, item_line + 1, item_column + 1, budget))
        return Located(items, line, column)
    return Located(_scalar(value), line, column)


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return _plain(value)
