"""The fragment's sections most bundles never declare: ``memory.dream`` (and its prices),
``memory.scope``, ``memory.tools``, ``memory.providers``, ``memory.documents``, ``learning``
(and its exam) and ``thredz``.

``fragment_data`` names them (its annotations of them are strings) and this module is imported
the first time a fragment declares one or a module names one, so a bundle without them never
creates their dataclasses. Same rules as ``fragment_data``: no ``from __future__ import
annotations`` (the reader takes each field's type as a live object), bounds in the metadata.
"""

from dataclasses import dataclass, field
from typing import Literal

from specwire.runtime.core.fragment import (
    DREAM_EVERY_MIN_MS,
    DocumentAccess,
    DocumentScope,
    DreamModeName,
    ExamGrader,
    MemoryProtocol,
    MemoryToolAccess,
    ScopeName,
)
from specwire.runtime.core.fragment_data import _POSITIVE


@dataclass(frozen=True, slots=True)
class ModelPriceData:
    """One of ``memory.dream.prices`` (``fragment_model.ModelPriceFragment``)."""

    model: str
    input_usd_per_mtok: float = field(metadata={"ge": 0})
    output_usd_per_mtok: float = field(metadata={"ge": 0})
    cached_input_usd_per_mtok: float | None = field(default=None, metadata={"ge": 0})


@dataclass(frozen=True, slots=True)
class DreamData:
    """``memory.dream`` (``fragment_model.DreamFragment``)."""

    every_ms: int = field(metadata={"ge": DREAM_EVERY_MIN_MS})
    mode: DreamModeName | None = None
    budget_usd: float | None = field(default=None, metadata={"ge": 0})
    instructions: str | None = None
    prices: tuple[ModelPriceData, ...] | None = None


@dataclass(frozen=True, slots=True)
class ScopeData:
    """``memory.scope`` (``fragment_model.ScopeFragment``)."""

    default: ScopeName
    follow_user: bool | None = None


@dataclass(frozen=True, slots=True)
class MemoryToolData:
    """One of ``memory.tools`` (``fragment_model.MemoryToolFragment``)."""

    name: str
    description: str
    access: MemoryToolAccess
    idempotent: bool | None = None
    input_schema: str = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class ProviderData:
    """One of ``memory.providers`` (``fragment_model.ProviderFragment``)."""

    name: str
    backend: str
    dsn: str | None = None
    url: str | None = None
    token: str | None = None
    protocol: MemoryProtocol | None = None
    path: str | None = None
    deadline_ms: int | None = field(default=None, metadata=_POSITIVE)


@dataclass(frozen=True, slots=True)
class DocumentBindingData:
    """One of ``memory.documents`` (``fragment_model.DocumentBindingFragment``)."""

    name: str
    scope: DocumentScope
    id: str | None = None
    access: DocumentAccess | None = None


@dataclass(frozen=True, slots=True)
class ExamData:
    """``learning.exam`` (``fragment_model.ExamFragment``)."""

    dataset: str
    graders: tuple[ExamGrader, ...]


@dataclass(frozen=True, slots=True)
class LearningData:
    """``learning`` (``fragment_model.LearningFragment``)."""

    domain: str
    curriculum: str | None = None
    sources: tuple[str, ...] = ()
    exam: ExamData | None = None
    study_on_dream: bool = True
    study_on_heartbeat: bool | None = None


@dataclass(frozen=True, slots=True)
class ThredzData:
    """``thredz`` (``fragment_model.ThredzFragment``)."""

    server: str
    visibility: Literal["private", "shared"] = "private"
    goals: bool = False
    agent_name: str | None = None
