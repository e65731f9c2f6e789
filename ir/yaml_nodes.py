"""Parse YAML text into a small tree of positioned nodes; every YAML problem becomes an issue.

ruamel's round-trip loader keeps the line and column of every key and value. The tree it gives
is converted into plain nodes here (``YMap``, ``YSeq``, ``YScalar``) so the rest of ``ir`` never
sees ruamel types: scalars are plain ``str``/``int``/``float``/``bool``/``None`` (dates and
other tagged values stay as loaded and are refused later by type checks).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    CollectionEndEvent,
    CollectionStartEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
)
from ruamel.yaml.parser import RoundTripParser
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.scanner import RoundTripScanner

from specwire.ir.errors import ROOT_KEY, ROOT_MARK, Mark, SpecIssue
from specwire.ir.limits import MAX_ENTRIES, MAX_NUMBER_CHARS, MAX_YAML_DEPTH, MAX_YAML_NODES
from specwire.ir.positions import join_display
from specwire.ir.values import quote

TOO_MANY_NODES: Final = f"the document is too large (more than {MAX_YAML_NODES} keys and values)"
TOO_MANY_EXPANDED: Final = (
    f"aliases expand the document past {MAX_YAML_NODES} keys and values (an alias bomb?)"
)
# What YAML reads as a number: decimal, hex, octal or binary integers, decimals, exponents.
_NUMBER: Final = re.compile(
    r"[-+]?(?:0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[0-9_]*\.?[0-9_]*(?:[eE][-+]?[0-9]+)?)"
)
TOO_DEEP: Final = f"the document is nested too deeply (more than {MAX_YAML_DEPTH} levels)"


@dataclass(frozen=True)
class YScalar:
    value: object
    mark: Mark


@dataclass(frozen=True)
class YEntry:
    key: object
    key_mark: Mark
    value: YNode


@dataclass(frozen=True)
class YMap:
    mark: Mark
    entries: list[YEntry] = field(default_factory=list)


@dataclass(frozen=True)
class YSeq:
    mark: Mark
    items: list[YNode] = field(default_factory=list)


YNode = YScalar | YMap | YSeq


class YamlProblem(Exception):
    """A problem found while reading YAML, with its position (and key, when known)."""

    def __init__(self, mark: Mark, message: str, key: str = ROOT_KEY) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message
        self.key = key


@dataclass
class _Open:
    """A collection the parser is inside: how many nodes it holds so far, and the key (or index)
    of the latest, which leads to the collection opened next."""

    mapping: bool
    nodes: int = 0
    key: str | int = "?"


class _LimitedParser(RoundTripParser):
    """ruamel's round-trip parser, stopping at the first node past a cap (nodes in all, entries
    in one list or mapping, depth).

    The composer pulls events one by one, so an oversized document is refused after at most
    ``MAX_YAML_NODES`` events, whatever its length.
    """

    def __init__(self, loader: Any) -> None:
        super().__init__(loader)
        self.nodes = 0
        self.open: list[_Open] = []

    def get_event(self) -> Any:
        event = super().get_event()
        if isinstance(event, NodeEvent):
            self.nodes += 1
            if self.nodes > MAX_YAML_NODES:
                raise YamlProblem(_event_mark(event), TOO_MANY_NODES)
            if self.open:
                self._count_entry(self.open[-1], event)
            if isinstance(event, ScalarEvent):
                self._check_number(event)
        if isinstance(event, CollectionStartEvent):
            self.open.append(_Open(mapping=isinstance(event, MappingStartEvent)))
            if len(self.open) > MAX_YAML_DEPTH:
                raise YamlProblem(_event_mark(event), TOO_DEEP)
        elif isinstance(event, CollectionEndEvent):
            self.open.pop()
        return event

    def _check_number(self, event: ScalarEvent) -> None:
        """Python refuses to read (or print) integers of more than 4,300 digits."""
        value = event.value
        if event.style is not None or len(value) <= MAX_NUMBER_CHARS:
            return
        if _NUMBER.fullmatch(value):
            message = (
                f"a number may be at most {MAX_NUMBER_CHARS} characters long "
                f"(this one has {len(value)})"
            )
            raise YamlProblem(_event_mark(event), message, self._path())

    def _path(self) -> str:
        display = ""
        for outer in self.open:
            display = join_display(display, outer.key)
        return display or ROOT_KEY

    def _count_entry(self, parent: _Open, event: NodeEvent) -> None:
        parent.nodes += 1
        if parent.mapping and parent.nodes % 2 == 0:
            return  # a value
        entries = (parent.nodes + 1) // 2 if parent.mapping else parent.nodes
        if entries > MAX_ENTRIES:
            display = ""
            for outer in self.open[:-1]:
                display = join_display(display, outer.key)
            what = "keys" if parent.mapping else "items"
            message = f"has more than {MAX_ENTRIES} {what} (at most {MAX_ENTRIES} are allowed)"
            raise YamlProblem(_event_mark(event), message, display or ROOT_KEY)
        if parent.mapping:
            parent.key = event.value if isinstance(event, ScalarEvent) else "?"
        else:
            parent.key = entries - 1


class _LimitedScanner(RoundTripScanner):
    """ruamel's round-trip scanner, refusing flow collections nested past the depth cap as it
    meets them. (The parser's own check comes too late for ``[[[[…``: the scanner looks up to
    1,024 characters ahead for a possible key, once per open bracket, before the parser sees the
    first event.)"""

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: str) -> None:  # noqa: N803
        # Open block collections (one indent each) plus open flow collections: the depth the
        # parser will count once this bracket's event reaches it.
        if len(self.indents) + len(self.flow_context) >= MAX_YAML_DEPTH:
            mark = self.reader.get_mark()
            raise YamlProblem(Mark(mark.line + 1, mark.column + 1), TOO_DEEP)
        super().fetch_flow_collection_start(TokenClass, to_push)


def _event_mark(event: NodeEvent) -> Mark:
    mark = event.start_mark
    return Mark(mark.line + 1, mark.column + 1)


def parse_yaml(text: str) -> YNode:
    """The document as a node tree, or ``YamlProblem`` with a located message."""
    loader = YAML(typ="rt")
    loader.allow_duplicate_keys = False
    loader.Parser = _LimitedParser
    loader.Scanner = _LimitedScanner
    try:
        loaded = loader.load(text.removeprefix("\ufeff"))
    except YamlProblem:
        raise
    except MarkedYAMLError as exc:
        raise YamlProblem(_marked_position(exc), _marked_message(exc)) from None
    except ReaderError as exc:
        raise YamlProblem(
            _offset_mark(text, exc.position), f"character {exc.character!r} is not allowed in YAML"
        ) from None
    except YAMLError as exc:
        raise YamlProblem(ROOT_MARK, f"invalid YAML: {_first_line(str(exc))}") from None
    except RecursionError:
        raise YamlProblem(ROOT_MARK, "the document is nested too deeply") from None
    except Exception as exc:  # the YAML library tripping over junk input is still a YAML problem
        raise YamlProblem(ROOT_MARK, f"invalid YAML ({type(exc).__name__})") from None
    try:
        return _Converter().node(loaded, ROOT_MARK)
    except RecursionError:
        raise YamlProblem(ROOT_MARK, "the document is nested too deeply") from None


def problem_issue(problem: YamlProblem, display_path: str) -> SpecIssue:
    return SpecIssue(
        display_path, problem.mark.line, problem.mark.col, problem.key, problem.message
    )


def _marked_position(exc: MarkedYAMLError) -> Mark:
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return ROOT_MARK
    return Mark(mark.line + 1, mark.column + 1)


def _marked_message(exc: MarkedYAMLError) -> str:
    problem = str(exc.problem or exc.context or "invalid YAML")
    if "duplicate key" in problem:
        # ruamel: 'found duplicate key "a" with value "3" (original value: "1")'
        key = problem.split('"')[1] if problem.count('"') >= 2 else "?"
        return f"duplicate key {quote(key)}"
    if "\\t" in problem or "\t" in problem:
        return "tab characters are not allowed here; indent YAML with spaces"
    if problem.startswith("found undefined alias"):
        name = problem.rsplit(" ", 1)[-1].strip("'\"")
        return f'undefined alias "*{name}" (no anchor "&{name}" before it)'
    if "expected a single document" in str(exc.context or "") or "another document" in problem:
        return "expected a single YAML document (found another one)"
    return f"invalid YAML: {problem}"


def _offset_mark(text: str, offset: int) -> Mark:
    before = text[: max(offset, 0)]
    line = before.count("\n") + 1
    col = offset - (before.rfind("\n") + 1) + 1
    return Mark(line, col)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown problem"


def _lc_mark(pair: Any, fallback: Mark) -> Mark:
    try:
        line, col = pair[0], pair[1]
    except (TypeError, IndexError, KeyError):
        return fallback
    if isinstance(line, int) and isinstance(col, int):
        return Mark(line + 1, col + 1)
    return fallback


class _Converter:
    """ruamel round-trip objects → positioned nodes (guarding against alias blow-ups)."""

    def __init__(self) -> None:
        self.count = 0
        self.active: set[int] = set()
        self.built: set[int] = set()
        # Where the outermost alias being expanded sits: a blow-up is reported there.
        self.expansion: Mark | None = None

    def node(self, value: Any, mark: Mark) -> YNode:
        if isinstance(value, dict):
            return self._guarded(value, mark, self._map)
        if isinstance(value, list):
            return self._guarded(value, mark, self._seq)
        self._count(mark)
        return YScalar(_plain_scalar(value), mark)

    def _count(self, mark: Mark) -> None:
        """Aliases repeat what they name: the expanded tree is held to the parser's cap."""
        self.count += 1
        if self.count > MAX_YAML_NODES:
            if self.expansion is None:
                raise YamlProblem(mark, TOO_MANY_NODES)
            raise YamlProblem(self.expansion, TOO_MANY_EXPANDED)

    def _guarded(self, value: Any, mark: Mark, build: Callable[[Any, Mark], YNode]) -> YNode:
        ident = id(value)
        if ident in self.active:
            raise YamlProblem(mark, "an alias refers to a value that contains it (recursive YAML)")
        outermost_alias = ident in self.built and self.expansion is None
        if outermost_alias:
            self.expansion = mark
        self.active.add(ident)
        try:
            self._count(mark)
            built = build(value, mark)
        finally:
            self.active.discard(ident)
            if outermost_alias:
                self.expansion = None
        self.built.add(ident)
        return built

    def _map(self, value: dict[Any, Any], mark: Mark) -> YMap:
        lc = getattr(value, "lc", None)
        entries: list[YEntry] = []
        for key, item in value.items():
            key_mark = _lc_mark(_lc_call(lc, "key", key), mark)
            value_mark = _lc_mark(_lc_call(lc, "value", key), key_mark)
            if item is None:
                value_mark = key_mark  # a missing value is best shown at its key
            self._count(key_mark)
            entries.append(YEntry(_plain_key(key), key_mark, self.node(item, value_mark)))
        return YMap(mark, entries)

    def _seq(self, value: list[Any], mark: Mark) -> YSeq:
        lc = getattr(value, "lc", None)
        items: list[YNode] = []
        for index, item in enumerate(value):
            item_mark = _lc_mark(_lc_call(lc, "item", index), mark)
            items.append(self.node(item, item_mark))
        return YSeq(mark, items)


def _lc_call(lc: Any, method: str, arg: Any) -> Any:
    if lc is None:
        return None
    try:
        return getattr(lc, method)(arg)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None  # e.g. keys brought in by a `<<` merge have no position of their own


def _plain_key(key: Any) -> object:
    if isinstance(key, str | int | float | bool) or key is None:
        return _plain_scalar(key)
    return key  # a complex key (sequence or mapping): refused later


def _plain_scalar(value: Any) -> object:
    if isinstance(value, ScalarBoolean | bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if value is None or isinstance(value, _dt.date):
        return value
    tagged = getattr(value, "value", None)
    tag = getattr(value, "tag", None)
    if tagged is not None and tag is not None:
        return _Tagged(str(getattr(tag, "value", tag)), tagged)
    return value


@dataclass(frozen=True)
class _Tagged:
    """A scalar with an application tag (``!foo bar``): kept opaque so type checks refuse it."""

    tag: str
    value: object

    def __str__(self) -> str:
        return f"{self.tag} {self.value}"
