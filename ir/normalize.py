"""From positioned YAML nodes to canonical plain data, checking keys on the way.

The normalizer knows, per target, which keys each level accepts (``ir.keys``). It maps
snake_case aliases to the canonical camelCase key, reports unknown keys (with a did-you-mean),
keys given in both spellings, non-string keys and keys given without a value, and records the
position of every key and value under its canonical path for later messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from specwire.ir.constants import TARGETS
from specwire.ir.errors import ROOT_KEY, ROOT_MARK, Mark, SpecIssue
from specwire.ir.keys import (
    KeyTable,
    ListShape,
    MapShape,
    ModelShape,
    describe,
    merged_table,
    shape_of,
    table_for,
)
from specwire.ir.positions import Loc, Located, Locator, join_display
from specwire.ir.source import SOURCE_MODELS
from specwire.ir.suggest import closest
from specwire.ir.text import code_point, line_breaker, lone_surrogate, scrub
from specwire.ir.values import got, quote, show
from specwire.ir.yaml_nodes import YMap, YNode, YScalar, YSeq

TARGET_LIST = ", ".join(TARGETS)

# Extra words for keys a user is likely to carry over from another target.
_KEY_HINTS: dict[tuple[str, str], str] = {
    ("crew", "agent"): 'crew specs have no "agent": use top-level "model", "entry" and "roles"',
}


@dataclass
class Normalized:
    """The outcome of normalization: data for the source models plus everything learnt."""

    data: dict[str, Any] | None
    target: str | None
    locator: Locator
    issues: list[SpecIssue] = field(default_factory=list)
    # Required keys whose absence is already explained (a misspelling, a key without a value).
    explained: set[Loc] = field(default_factory=set)
    # Values already refused here (not text): validation errors inside them are not reported
    # again.
    refused: set[Loc] = field(default_factory=set)


def normalize(root: YNode, display_path: str) -> Normalized:
    return _Normalizer(display_path).run(root)


class _Normalizer:
    def __init__(self, display_path: str) -> None:
        self.locator = Locator(display_path)
        self.issues: list[SpecIssue] = []
        self.explained: set[Loc] = set()
        self.refused: set[Loc] = set()
        self.target: str | None = None

    def run(self, root: YNode) -> Normalized:
        if not isinstance(root, YMap):
            self._issue_at(root, ROOT_KEY, _root_message(root))
            return self._result(None)
        target = self._find_target(root)
        self.target = target
        if target is None:
            table = merged_table(SOURCE_MODELS.values())
        else:
            table = table_for(SOURCE_MODELS[target])
        data = self._mapping(root, table, (), "")
        return self._result(data)

    def _result(self, data: dict[str, Any] | None) -> Normalized:
        return Normalized(
            data, self.target, self.locator, self.issues, self.explained, self.refused
        )

    # -- target ---------------------------------------------------------------------------

    def _find_target(self, root: YMap) -> str | None:
        for entry in root.entries:
            if entry.key != "target":
                continue
            value = entry.value
            if isinstance(value, YScalar) and isinstance(value.value, str):
                if value.value in TARGETS:
                    return value.value
                shown = quote(value.value)
            else:
                shown = show(_plain(value))
            self.issues.append(
                self.locator.at_mark(
                    value.mark, "target", f"unknown target {shown}: expected one of {TARGET_LIST}"
                )
            )
            self.explained.add(("target",))
            return None
        self.issues.append(
            self.locator.at_mark(
                ROOT_MARK, ROOT_KEY, f'missing required key "target" (one of {TARGET_LIST})'
            )
        )
        self.explained.add(("target",))
        return None

    # -- walking --------------------------------------------------------------------------

    def _mapping(self, node: YMap, table: KeyTable, loc: Loc, display: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        spelt: dict[str, str] = {}
        for entry in node.entries:
            if not isinstance(entry.key, str):
                self._bad_key(entry.key, entry.key_mark, display)
                continue
            child_display = join_display(display, entry.key)
            canonical = table.spellings.get(entry.key)
            if canonical is None:
                self._unknown_key(entry.key, table, loc, child_display, entry.key_mark)
                continue
            if canonical in spelt:
                first = spelt[canonical]
                other = entry.key if first == canonical else first
                self.issues.append(
                    self.locator.at_mark(
                        entry.key_mark,
                        child_display,
                        f'both "{canonical}" and "{other}" are given; keep one',
                    )
                )
                continue
            spelt[canonical] = entry.key
            child_loc = (*loc, canonical)
            self.locator.positions[child_loc] = Located(
                child_display, entry.key_mark, entry.value.mark
            )
            info = table.keys[canonical]
            if isinstance(entry.value, YScalar) and entry.value.value is None:
                if info.null_as_empty:
                    out[canonical] = {}
                else:
                    self.issues.append(
                        self.locator.at_mark(
                            entry.key_mark,
                            child_display,
                            f"expected {describe(info.annotation)} (got null)",
                        )
                    )
                    self.explained.add(child_loc)
                continue
            out[canonical] = self._value(entry.value, info.annotation, child_loc, child_display)
        return out

    def _value(self, node: YNode, annotation: Any, loc: Loc, display: str) -> Any:
        shape = shape_of(annotation)
        if isinstance(shape, ModelShape) and isinstance(node, YMap):
            return self._mapping(node, table_for(shape.model), loc, display)
        if isinstance(shape, MapShape) and isinstance(node, YMap):
            return self._free_mapping(node, shape, loc, display)
        if isinstance(shape, ListShape) and isinstance(node, YSeq):
            items: list[Any] = []
            for index, item in enumerate(node.items):
                item_loc = (*loc, index)
                item_display = join_display(display, index)
                self.locator.positions[item_loc] = Located(item_display, item.mark, item.mark)
                items.append(self._value(item, shape.item, item_loc, item_display))
            return items
        return self._leaf(node, loc, display)

    def _leaf(self, node: YNode, loc: Loc, display: str) -> Any:
        """The value as plain data; a lone surrogate anywhere in it refuses it."""
        value = _plain(node)
        found = _first_surrogate(node)
        if found is None:
            return value
        mark, char = found
        self.issues.append(
            self.locator.at_mark(
                mark,
                display,
                f"is not valid text: it contains a lone surrogate ({code_point(char)})",
            )
        )
        self.refused.add(loc)
        return scrub(value)

    def _free_mapping(self, node: YMap, shape: MapShape, loc: Loc, display: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for entry in node.entries:
            if not isinstance(entry.key, str):
                self._bad_key(entry.key, entry.key_mark, display)
                continue
            bad = line_breaker(entry.key)
            if bad is not None:
                self.issues.append(
                    self.locator.at_mark(
                        entry.key_mark,
                        join_display(display, entry.key),
                        f"keys must be one line of printable text (this one has {code_point(bad)})",
                    )
                )
                continue
            child_loc = (*loc, entry.key)
            child_display = join_display(display, entry.key)
            self.locator.positions[child_loc] = Located(
                child_display, entry.key_mark, entry.value.mark
            )
            out[entry.key] = self._value(entry.value, shape.value, child_loc, child_display)
        return out

    # -- problems -------------------------------------------------------------------------

    def _unknown_key(self, key: str, table: KeyTable, loc: Loc, display: str, mark: Mark) -> None:
        hint = _KEY_HINTS.get((self.target or "", key)) if not loc else None
        suggestion = closest(key, table.spellings)
        if hint is not None:
            message = f'unknown key "{key}": {hint}'
        elif suggestion is not None:
            message = f'unknown key "{key}" (did you mean "{suggestion}"?)'
            self.explained.add((*loc, table.spellings[suggestion]))
        else:
            message = f'unknown key "{key}"'
        self.issues.append(self.locator.at_mark(mark, display, message))

    def _bad_key(self, key: object, mark: Mark, display: str) -> None:
        self.issues.append(
            self.locator.at_mark(mark, display, f"keys must be strings {got(_plain_key(key))}")
        )

    def _issue_at(self, node: YNode, display: str, message: str) -> None:
        self.issues.append(self.locator.at_mark(node.mark, display, message))


def _root_message(root: YNode) -> str:
    if isinstance(root, YScalar) and root.value is None:
        return 'the spec is empty: expected a mapping with at least "name" and "target"'
    return f"expected a mapping at the top level {got(_plain(root))}"


def _first_surrogate(node: YNode) -> tuple[Mark, str] | None:
    if isinstance(node, YScalar):
        char = lone_surrogate(node.value) if isinstance(node.value, str) else None
        return (node.mark, char) if char is not None else None
    if isinstance(node, YSeq):
        children: list[tuple[Mark, object, YNode | None]] = [
            (item.mark, None, item) for item in node.items
        ]
    else:
        children = [(entry.key_mark, entry.key, entry.value) for entry in node.entries]
    for mark, key, child in children:
        char = lone_surrogate(key) if isinstance(key, str) else None
        if char is not None:
            return mark, char
        found = _first_surrogate(child) if child is not None else None
        if found is not None:
            return found
    return None


def _plain(node: YNode) -> Any:
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [_plain(item) for item in node.items]
    return {entry.key: _plain(entry.value) for entry in node.entries}


def _plain_key(key: object) -> object:
    if isinstance(key, tuple):
        return list(key)
    return key
