"""Property: any input either loads (and lowers) or fails with located SpecIssues. Nothing else."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from ir import TARGETS, SpecError, load_spec_text, lower
from ir.keys import table_for
from ir.source import SOURCE_MODELS, ContinuitySource, MemorySource, WikiSource

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
        positions = [(issue.line, issue.col) for issue in error.issues]
        assert positions == sorted(positions)
        return
    fragment = lower(ir)
    assert fragment.spec_name == ir.name


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
