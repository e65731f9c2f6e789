"""One black pass per generated file gives the bytes ``black.format_str`` (two passes whenever the
first changed anything) gives: on every example, and on generated specs of every shape, with
hostile text in every literal."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import black
import pytest
from emitter_cases import EXAMPLES
from hypothesis import HealthCheck, given, settings
from test_emit_properties import specs

from specwire.emitters import pipeline
from specwire.emitters.format import BLACK_MODE, format_python, normalize_newlines
from specwire.emitters.registry import emit
from specwire.ir import IrSpec, load_spec

Rendered = list[tuple[str, str, str]]  # (file, what the templates rendered, what black made)


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> Iterator[Rendered]:
    """Every Python source the pipeline formats, recorded beside its formatted text."""
    seen: Rendered = []
    real: Callable[..., str] = pipeline.format_python

    def recording(source: str, *, name: str = "<generated>") -> str:
        formatted = real(source, name=name)
        seen.append((name, source, formatted))
        return formatted

    monkeypatch.setattr(pipeline, "format_python", recording)
    yield seen


def two_passes(source: str) -> str:
    return normalize_newlines(black.format_str(normalize_newlines(source), mode=BLACK_MODE))


def test_every_example_formats_as_format_str_does(rendered: Rendered) -> None:
    for path in EXAMPLES:
        emit(load_spec(path))
    assert len(rendered) >= len(EXAMPLES)
    changed = 0
    for name, source, formatted in rendered:
        assert formatted == two_passes(source), name
        changed += formatted != normalize_newlines(source)
    # The templates do not render black's layout: black's first pass does change these files,
    # which is when format_str would have run its second pass.
    assert changed == len(rendered)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_generated_specs_format_as_format_str_does(spec: IrSpec) -> None:
    seen: Rendered = []
    real = format_python

    def recording(source: str, *, name: str = "<generated>") -> str:
        formatted = real(source, name=name)
        seen.append((name, source, formatted))
        return formatted

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "format_python", recording)
        emit(spec)
    assert seen
    for name, source, formatted in seen:
        assert formatted == two_passes(source), name
