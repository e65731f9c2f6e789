"""The memory wiring fragment as the runtime reads it: frozen dataclasses and a reader that
checks a bundle's fragment literal without pydantic.

The compiler validates and lowers with the pydantic models (``fragment_model``); a bundle hands
the literal the compiler wrote to ``wire_memory``, which reads it here. Importing pydantic and
building the models' validators cost a memory bundle most of its start, for a check the
compiler already made. The reader still refuses a hand-edited fragment: an unknown key, a wrong
type, a value out of bounds or outside its vocabulary, named by its dotted location. It is
stricter than pydantic's lax mode (no ``"5"`` for 5, no ``1`` for ``true``): the compiler never
writes those. ``tests/runtime/core/test_fragment_data.py`` keeps these classes field for field
the same as the pydantic models, and both readers in agreement.

A field's bounds are in its metadata (``ge``, ``gt``, ``le``); its type is its annotation:
``bool``, ``int``, ``float``, ``str``, a ``Literal`` vocabulary, a nested class, a
``tuple[<class>, ...]``, each optionally ``| None``.
"""

# No ``from __future__ import annotations``: the reader takes each field's type from
# ``dataclasses.fields`` as a live object (``typing.get_type_hints`` would evaluate strings,
# a few milliseconds on every wiring).
import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from specwire.runtime.core.fragment import (
    FRAGMENT_VERSION,
    RECALL_K_MAX,
    RECALL_K_MIN,
    ContinuityScope,
    MemoryProtocol,
    ProofMode,
)
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from specwire.runtime.core.fragment_sections import DocumentBindingData as DocumentBindingData
    from specwire.runtime.core.fragment_sections import DreamData as DreamData
    from specwire.runtime.core.fragment_sections import ExamData as ExamData
    from specwire.runtime.core.fragment_sections import LearningData as LearningData
    from specwire.runtime.core.fragment_sections import MemoryToolData as MemoryToolData
    from specwire.runtime.core.fragment_sections import ModelPriceData as ModelPriceData
    from specwire.runtime.core.fragment_sections import ProviderData as ProviderData
    from specwire.runtime.core.fragment_sections import ScopeData as ScopeData
    from specwire.runtime.core.fragment_sections import ThredzData as ThredzData

# The sections most bundles never declare live in ``fragment_sections.py``, created the first
# time a fragment has one (or a module names one, through ``__getattr__`` below): a field of
# such a type is annotated as a string, which the reader resolves there.
_SECTIONS = frozenset(
    {
        "DocumentBindingData",
        "DreamData",
        "ExamData",
        "LearningData",
        "MemoryToolData",
        "ModelPriceData",
        "ProviderData",
        "ScopeData",
        "ThredzData",
    }
)

_Data = TypeVar("_Data", bound="DataclassInstance")
_RECALL_K = {"ge": RECALL_K_MIN, "le": RECALL_K_MAX}
_POSITIVE = {"gt": 0}


class FragmentShapeError(ValueError):
    """A fragment that does not have the contract's shape: ``where`` is the dotted location."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where or '(input)'}: {problem}")
        self.where = where
        self.problem = problem


@lazy_methods_dataclass(frozen=True, slots=True)
class WikiData:
    """``memory.wiki`` (``fragment_model.WikiFragment``)."""

    enabled: bool | None = None
    recall_k: int | None = field(default=None, metadata=_RECALL_K)
    embedder: str | None = None
    auto_recall: bool | None = None
    require_sources: bool | None = None


@lazy_methods_dataclass(frozen=True, slots=True)
class FactsData:
    """``memory``: see ``fragment_model.MemoryFactsFragment`` for what each field means."""

    enabled: bool | None = None
    backend: str | None = None
    dsn: str | None = None
    url: str | None = None
    token: str | None = None
    embedder: str | None = None
    ttl_ms: int | None = field(default=None, metadata=_POSITIVE)
    auto_capture: bool | None = None
    auto_capture_threshold: int | None = field(default=None, metadata=_POSITIVE)
    auto_recall: bool | None = None
    recall_k: int | None = field(default=None, metadata=_RECALL_K)
    wiki: WikiData | None = None
    recall_mode: Literal["per-turn"] | None = None
    refresh_every: int | None = field(default=None, metadata=_POSITIVE)
    session_recall: bool | None = None
    dream: "DreamData | None" = None
    scope: "ScopeData | None" = None
    tiers: bool | None = None
    protocol: MemoryProtocol | None = None
    tools: "tuple[MemoryToolData, ...] | None" = None
    providers: "tuple[ProviderData, ...] | None" = None
    documents: "tuple[DocumentBindingData, ...] | None" = None
    state: Literal["postgres"] | None = None


@lazy_methods_dataclass(frozen=True, slots=True)
class ContinuityData:
    """``continuity`` (``fragment_model.ContinuityFragment``)."""

    plan: bool = True
    proof: ProofMode = "ladder"
    ledger: bool = True
    handoff: bool = True
    scope: ContinuityScope = "spec"
    focus_max_chars: int | None = field(default=None, metadata=_POSITIVE)


@lazy_methods_dataclass(frozen=True, slots=True)
class FragmentData:
    """The whole fragment (``fragment_model.MemoryWiringFragment``'s fields)."""

    spec_name: str
    version: int = FRAGMENT_VERSION
    specwire: str | None = None
    memory: FactsData | None = None
    continuity: ContinuityData | None = None
    learning: "LearningData | None" = None
    thredz: "ThredzData | None" = None

    @property
    def is_memoryless(self) -> bool:
        return self.memory is None and self.continuity is None


def __getattr__(name: str) -> Any:
    if name in _SECTIONS:
        from specwire.runtime.core import fragment_sections

        return getattr(fragment_sections, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_fragment(data: Mapping[str, Any]) -> FragmentData:
    """The fragment ``data`` describes; ``FragmentShapeError`` names the first thing wrong."""
    return _read_object(FragmentData, data, "")


def _read_object(cls: type[_Data], data: Any, where: str) -> _Data:
    if not isinstance(data, Mapping):
        raise FragmentShapeError(where, f"must be a mapping, not {_kind(data)}")
    known = {item.name: item for item in dataclasses.fields(cls)}
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise FragmentShapeError(_join(where, unknown[0]), "unknown field")
    values: dict[str, Any] = {}
    for name, item in known.items():
        here = _join(where, name)
        if name not in data:
            if item.default is dataclasses.MISSING:
                raise FragmentShapeError(here, "required")
            continue
        values[name] = _read_value(item.type, data[name], here, item.metadata)
    return cls(**values)


def _read_value(hint: Any, value: Any, where: str, bounds: Mapping[str, Any]) -> Any:
    if isinstance(hint, str):
        hint = _section_hint(hint)
    options = _union_options(hint)
    if options is not None:
        if value is None and type(None) in options:
            return None
        (hint,) = (option for option in options if option is not type(None))
    origin = typing.get_origin(hint)
    if origin is Literal:
        allowed = typing.get_args(hint)
        if isinstance(value, str) and value in allowed:
            return value
        shown = ", ".join(repr(choice) for choice in allowed)
        raise FragmentShapeError(where, f"must be one of {shown}, not {value!r}")
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise FragmentShapeError(where, f"must be a list, not {_kind(value)}")
        item_type = typing.get_args(hint)[0]
        return tuple(
            _read_value(item_type, item, f"{where}.{index}", {}) for index, item in enumerate(value)
        )
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _read_object(hint, value, where)
    return _read_scalar(hint, value, where, bounds)


def _read_scalar(hint: Any, value: Any, where: str, bounds: Mapping[str, Any]) -> Any:
    if hint is bool:
        if not isinstance(value, bool):
            raise FragmentShapeError(where, f"must be true or false, not {_kind(value)}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise FragmentShapeError(where, f"must be a string, not {_kind(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FragmentShapeError(where, f"must be an integer, not {_kind(value)}")
    elif hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FragmentShapeError(where, f"must be a number, not {_kind(value)}")
        value = float(value)
        if value != value or value in (float("inf"), float("-inf")):
            raise FragmentShapeError(where, "must be a finite number")
    else:  # a field of a type this reader does not know: a defect in this module
        raise TypeError(f"fragment field {where} has an unreadable type {hint!r}")
    _check_bounds(value, where, bounds)
    return value


def _check_bounds(value: float, where: str, bounds: Mapping[str, Any]) -> None:
    if "ge" in bounds and value < bounds["ge"]:
        raise FragmentShapeError(where, f"must be at least {bounds['ge']}, not {value!r}")
    if "gt" in bounds and value <= bounds["gt"]:
        raise FragmentShapeError(where, f"must be greater than {bounds['gt']}, not {value!r}")
    if "le" in bounds and value > bounds["le"]:
        raise FragmentShapeError(where, f"must be at most {bounds['le']}, not {value!r}")


_section_hints: dict[str, Any] = {}


def _section_hint(hint: str) -> Any:
    """A field annotated with a ``fragment_sections`` class, as a live type (the annotation is
    this module's own text, never input)."""
    found = _section_hints.get(hint)
    if found is None:
        from specwire.runtime.core import fragment_sections

        found = eval(hint, vars(fragment_sections))
        _section_hints[hint] = found
    return found


def _union_options(hint: Any) -> tuple[Any, ...] | None:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return typing.get_args(hint)
    return None


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return type(value).__name__
