"""The runtime's pydantic-free fragment reader (``runtime.core.fragment_data``) against the
compiler's pydantic models (``runtime.core.fragment_model``): the same fields with the same
defaults, the same fragments accepted (read to the same data), the same ones refused (named at
a location pydantic names too)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from specwire.ir import load_spec, lower
from specwire.runtime.core import fragment_data as data
from specwire.runtime.core import fragment_model as model
from specwire.runtime.core.fragment_data import FragmentShapeError, read_fragment

ROOT = Path(__file__).resolve().parents[3]

PAIRS: list[tuple[type[BaseModel], type[Any]]] = [
    (model.MemoryWiringFragment, data.FragmentData),
    (model.MemoryFactsFragment, data.FactsData),
    (model.ContinuityFragment, data.ContinuityData),
    (model.WikiFragment, data.WikiData),
    (model.DreamFragment, data.DreamData),
    (model.ScopeFragment, data.ScopeData),
    (model.MemoryToolFragment, data.MemoryToolData),
    (model.ProviderFragment, data.ProviderData),
    (model.DocumentBindingFragment, data.DocumentBindingData),
    (model.LearningFragment, data.LearningData),
    (model.ExamFragment, data.ExamData),
]

# Every field of every section declared, with valid values.
FULL: dict[str, Any] = {
    "spec_name": "full",
    "version": 6,
    "specwire": "0.3.0",
    "memory": {
        "enabled": True,
        "backend": "http",
        "dsn": "$DATABASE_URL",
        "url": "https://memory.example",
        "token": "$MEMORY_TOKEN",
        "embedder": "hash/64",
        "ttl_ms": 3_600_000,
        "auto_capture": True,
        "auto_capture_threshold": 2,
        "auto_recall": False,
        "recall_k": 7,
        "wiki": {
            "enabled": True,
            "recall_k": 3,
            "embedder": "hash/32",
            "auto_recall": True,
            "require_sources": False,
        },
        "recall_mode": "per-turn",
        "refresh_every": 3,
        "session_recall": True,
        "dream": {
            "every_ms": 86_400_000,
            "mode": "deterministic",
            "budget_usd": 0.5,
            "instructions": "tidy",
        },
        "scope": {"default": "user", "follow_user": True},
        "tiers": True,
        "protocol": "opencomputer",
        "tools": [
            {
                "name": "lookup",
                "description": "Look up.",
                "access": "read",
                "idempotent": True,
                "input_schema": '{"type":"object"}',
            }
        ],
        "providers": [
            {
                "name": "notes",
                "backend": "markdown",
                "dsn": None,
                "url": None,
                "token": None,
                "protocol": "specwire",
                "path": "notes",
                "deadline_ms": 500,
            }
        ],
        "documents": [{"name": "handbook", "scope": "document", "id": "hb", "access": "read"}],
    },
    "continuity": {
        "plan": False,
        "proof": "require",
        "ledger": False,
        "handoff": False,
        "scope": "session",
        "focus_max_chars": 100,
    },
    "learning": {
        "domain": "billing",
        "curriculum": "invoices, then refunds",
        "sources": ["docs/invoices.md", "https://docs.example.org/refunds"],
        "exam": {"dataset": "exam.jsonl", "graders": ["contains", "covers"]},
        "study_on_dream": False,
    },
}


def as_data(value: Any) -> Any:
    """A read fragment as the compiler's ``to_data`` writes it: undeclared fields left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            item.name: as_data(getattr(value, item.name))
            for item in dataclasses.fields(value)
            if getattr(value, item.name) is not None
        }
    if isinstance(value, tuple):
        return [as_data(item) for item in value]
    return value


def pydantic_locations(fragment: dict[str, Any]) -> list[str] | None:
    """Where pydantic refuses ``fragment`` (None: it accepts it)."""
    try:
        model.MemoryWiringFragment.model_validate(fragment)
    except ValidationError as exc:
        return [".".join(str(part) for part in error["loc"]) for error in exc.errors()]
    return None


@pytest.mark.parametrize(("pydantic_model", "dataclass"), PAIRS, ids=lambda c: c.__name__)
def test_each_class_has_the_models_fields_and_defaults(
    pydantic_model: type[BaseModel], dataclass: type[Any]
) -> None:
    fields = {item.name: item for item in dataclasses.fields(dataclass)}
    assert list(fields) == list(pydantic_model.model_fields)
    for name, info in pydantic_model.model_fields.items():
        if info.is_required():
            assert fields[name].default is dataclasses.MISSING, name
        else:
            assert fields[name].default == info.default, name


def test_every_field_is_exercised_by_the_full_fragment() -> None:
    assert as_data(read_fragment(FULL)) == model.MemoryWiringFragment.model_validate(FULL).to_data()
    for pydantic_model, _ in PAIRS:
        assert pydantic_model.model_fields  # a model without fields would test nothing


@pytest.mark.parametrize("spec", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_reads_to_what_the_compiler_lowered(spec: Path) -> None:
    lowered = lower(load_spec(spec)).to_data()
    assert as_data(read_fragment(lowered)) == lowered


def _set(fragment: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    import copy

    changed = copy.deepcopy(fragment)
    target: Any = changed
    for part in path[:-1]:
        target = target[part]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return changed


_DELETE = object()

BAD: list[tuple[tuple[str | int, ...], Any]] = [
    (("spec_name",), _DELETE),
    (("spec_name",), 5),
    (("surprise",), 1),
    (("memory",), "yes"),
    (("memory", "surprise"), 1),
    (("memory", "recall_k"), 0),
    (("memory", "recall_k"), 51),
    (("memory", "recall_k"), "five"),
    (("memory", "ttl_ms"), 0),
    (("memory", "ttl_ms"), -1),
    (("memory", "ttl_ms"), 1.5),
    (("memory", "enabled"), "maybe"),
    (("memory", "backend"), 3),
    (("memory", "auto_capture_threshold"), 0),
    (("memory", "refresh_every"), 0),
    (("memory", "recall_mode"), "session-start"),
    (("memory", "protocol"), "grpc"),
    (("memory", "wiki", "recall_k"), 0),
    (("memory", "wiki", "surprise"), True),
    (("memory", "dream", "every_ms"), 1000),
    (("memory", "dream", "every_ms"), _DELETE),
    (("memory", "dream", "mode"), "light"),
    (("memory", "dream", "budget_usd"), -0.01),
    (("memory", "dream", "budget_usd"), "free"),
    (("memory", "scope", "default"), "everyone"),
    (("memory", "scope"), {}),
    (("memory", "tools"), {"name": "x"}),
    (("memory", "tools", 0, "access"), "admin"),
    (("memory", "tools", 0, "input_schema"), _DELETE),
    (("memory", "providers", 0, "deadline_ms"), 0),
    (("memory", "providers", 0, "name"), _DELETE),
    (("memory", "documents", 0, "scope"), "folder"),
    (("memory", "documents", 0, "surprise"), 1),
    (("learning", "domain"), _DELETE),
    (("learning", "sources"), "docs/invoices.md"),
    (("learning", "exam", "graders", 0), "exact"),
    (("learning", "study_on_dream"), "maybe"),
    (("continuity",), []),
    (("continuity", "proof"), "maybe"),
    (("continuity", "scope"), "global"),
    (("continuity", "plan"), None),
    (("continuity", "focus_max_chars"), 0),
]


def _bad_id(value: Any) -> str:
    return "deleted" if value is _DELETE else repr(value)[:40]


@pytest.mark.parametrize(("path", "value"), BAD, ids=_bad_id)
def test_both_readers_refuse_the_same_fragments_at_the_same_place(
    path: tuple[str | int, ...], value: Any
) -> None:
    broken = _set(FULL, path, value)
    refused_at = pydantic_locations(broken)
    assert refused_at is not None, "pydantic accepts it: not a bad fragment"
    with pytest.raises(FragmentShapeError) as refused:
        read_fragment(broken)
    assert any(
        location == refused.value.where or location.startswith(refused.value.where + ".")
        for location in refused_at
    ), (refused.value.where, refused_at)


@pytest.mark.parametrize(
    ("path", "value"),
    [(("memory", "recall_k"), "5"), (("memory", "tiers"), 1), (("continuity", "plan"), "true")],
)
def test_the_reader_is_stricter_than_pydantics_lax_mode(
    path: tuple[str | int, ...], value: Any
) -> None:
    """The compiler never writes a number as text or a bool as a number: a fragment that does
    was edited by hand, and is refused rather than coerced."""
    broken = _set(FULL, path, value)
    assert pydantic_locations(broken) is None
    with pytest.raises(FragmentShapeError, match=".".join(map(str, path))):
        read_fragment(broken)


def test_sequences_are_read_as_tuples_and_a_mapping_is_required() -> None:
    read = read_fragment(FULL)
    assert read.memory is not None and isinstance(read.memory.tools, tuple)
    with pytest.raises(FragmentShapeError, match=r"\(input\): must be a mapping"):
        read_fragment([])  # type: ignore[arg-type]
