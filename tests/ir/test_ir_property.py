"""Property: any input either loads (and lowers) or fails with located SpecIssues. Nothing else."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from specwire.emitters.registry import emit
from specwire.ir import TARGETS, SpecError, load_spec_text, lower
from specwire.ir.keys import table_for
from specwire.ir.source import SOURCE_MODELS, ContinuitySource, MemorySource, WikiSource

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))
EXAMPLE_TEXTS = [path.read_text(encoding="utf-8") for path in EXAMPLES]

KEYS = sorted(
    {
        spelling
        for model in [*SOURCE_MODELS.values(), MemorySource, ContinuitySource, WikiSource]
        for spelling in table_for(model).spellings
    }
    | {"model", "instructions", "sessionKey", "id", "budget", "allowedOrigins", "slack", "a"}
)
WORDS = [
    *TARGETS,
    "session", "spec", "auto", "ladder", "require", "off", "thread", "read", "raed", "file",
    "hash/256", "openai", "90d", "30m", "1h", "5 days", "$TOKEN", "$lower", "$", "yes", "a/b", "",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.sampled_from(WORDS),
    st.text(max_size=12),
)
keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=8))
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(keys, children, max_size=5),
    ),
    max_leaves=15,
)
documents = st.builds(
    lambda target, name, body: {"target": target, "name": name, **body},
    st.sampled_from([*TARGETS, "nope"]),
    st.sampled_from(["s", "a/b"]),
    st.dictionaries(keys, values, max_size=8),
)


# -- hostile values: not-text, non-finite numbers, control characters, long names and text ------

HOSTILE_CHARS = [
    "\ud800", "\udfff", "\u2028", "\u2029", "\x85", "\x00", "\x1b", "\x7f", "\x9b", "\t",
    "\r", "\n", "\u202e", "\ufeff", "a", " ", '"', "\\", "$", "é", "🧠",
]  # fmt: skip
hostile_text = st.one_of(
    st.text(st.sampled_from(HOSTILE_CHARS), max_size=20),
    st.text(st.characters(categories=["Cs", "Cc", "Zl", "Zp", "Cf", "Ll"]), max_size=20),
)
special_numbers = st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0, 2**64])
long_names = st.integers(min_value=100, max_value=400).map(lambda n: "n" * n)
long_text = st.integers(min_value=90, max_value=3000).map(
    lambda n: "".join(f'line {i} "q" \\\n' for i in range(n))
)
hostile_values = st.one_of(hostile_text, special_numbers, long_names, long_text)


def flow_yaml(value: Any) -> str:
    """One-line YAML for ``value``; strings double-quoted with JSON escapes (so a lone surrogate
    is written as ``\\ud800``), non-finite numbers as ``.nan`` / ``.inf``."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(flow_yaml(item) for item in value) + "]"
    return "{" + ", ".join(f"{flow_yaml(k)}: {flow_yaml(v)}" for k, v in value.items()) + "}"


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in ``data`` a value can be put at (dict keys and list indexes)."""
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*prefix, index))
    return found


def _replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {k: (_replaced(v, rest, value) if k == head else v) for k, v in data.items()}
    return [(_replaced(v, rest, value) if i == head else v) for i, v in enumerate(data)]


def _with_key(data: Any, path: tuple[Any, ...], key: str) -> Any:
    """``data`` with a ``key: 1`` entry added to the mapping at ``path`` (if it is one)."""
    if not path:
        return {**data, key: 1} if isinstance(data, dict) else data
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {k: (_with_key(v, rest, key) if k == head else v) for k, v in data.items()}
    return [(_with_key(v, rest, key) if i == head else v) for i, v in enumerate(data)]


EXAMPLE_DATA = [YAML(typ="safe", pure=True).load(text) for text in EXAMPLE_TEXTS]


@st.composite
def hostile_specs(draw: st.DrawFn) -> str:
    """An example spec with one value replaced, or one key added, by something hostile."""
    data = draw(st.sampled_from(EXAMPLE_DATA))
    path = draw(st.sampled_from(_paths(data)))
    if draw(st.booleans()):
        data = _replaced(data, path, draw(hostile_values))
    else:
        data = _with_key(data, path[:-1], draw(hostile_text))
    return flow_yaml(data) + "\n"


def dump(data: Any) -> str:
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, out)
    return out.getvalue()


def assert_loads_or_fails_cleanly(text: str) -> None:
    try:
        ir = load_spec_text(text, "fuzz.yaml")
    except SpecError as error:
        assert error.issues, "a SpecError always says what is wrong"
        for issue in error.issues:
            assert issue.path == "fuzz.yaml"
            assert issue.line >= 1 and issue.col >= 1
            assert issue.key and issue.message
            assert "internal error" not in issue.message, str(issue)
            assert str(issue).isprintable(), repr(str(issue))  # one line, always encodable
        positions = [(issue.line, issue.col) for issue in error.issues]
        assert positions == sorted(positions)
        return
    fragment = lower(ir)
    assert fragment.spec_name == ir.name


def assert_compiles_or_fails_cleanly(text: str) -> None:
    """Loads and emits a verified bundle (UTF-8 encodable), or fails with located issues."""
    try:
        ir = load_spec_text(text, "fuzz.yaml")
    except SpecError:
        assert_loads_or_fails_cleanly(text)
        return
    for path, content in emit(ir).items():
        content.encode("utf-8")
        assert path.isprintable()


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(documents)
def test_structured_documents(document: dict[str, Any]) -> None:
    assert_loads_or_fails_cleanly(dump(document))


@FUZZ
@given(st.text(max_size=200))
def test_arbitrary_text(text: str) -> None:
    assert_loads_or_fails_cleanly(text)


@FUZZ
@given(
    st.sampled_from(EXAMPLE_TEXTS),
    st.integers(min_value=0, max_value=2000),
    st.integers(min_value=0, max_value=40),
    st.text(alphabet=" \t\n:-[]{}&*!|>'\"#$%@`,?abc0123", max_size=6),
)
def test_mutated_examples(text: str, start: int, length: int, insert: str) -> None:
    cut = start % (len(text) + 1)
    assert_loads_or_fails_cleanly(text[:cut] + insert + text[cut + length :])


COMPILE_FUZZ = settings(FUZZ, max_examples=100)


@COMPILE_FUZZ
@given(hostile_specs())
def test_hostile_values_compile_or_fail_cleanly(text: str) -> None:
    assert_compiles_or_fails_cleanly(text)


@COMPILE_FUZZ
@given(st.sampled_from(EXAMPLE_DATA), hostile_values)
def test_hostile_names_compile_or_fail_cleanly(data: dict[str, Any], name: Any) -> None:
    assert_compiles_or_fails_cleanly(flow_yaml({**data, "name": name}) + "\n")
