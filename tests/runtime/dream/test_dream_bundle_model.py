"""``codegen dream run --bundle`` reads the bundle's model without running it: a literal id, a
secret reference (read from the environment when the session starts), or none."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.runtime.owner.bundle_fragment import read_bundle_model
from specwire.runtime.owner.selection import SelectionError
from specwire.runtime.safety.secrets import SecretRef


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('MODEL = "claude-sonnet-4-5"', "claude-sonnet-4-5"),
        ('MODEL = SecretRef("AGENT_MODEL")', SecretRef("AGENT_MODEL")),
        ('MODEL: str = "scripted"', "scripted"),
        ("MODEL = pick_one()", None),  # not something a bundle writes: no guess
        ('OTHER = "scripted"', None),
    ],
)
def test_the_bundle_s_model(tmp_path: Path, line: str, expected: object) -> None:
    (tmp_path / "agent.py").write_text(f"import os\n{line}\n", encoding="utf-8")
    assert read_bundle_model(tmp_path) == expected
    assert read_bundle_model(tmp_path / "agent.py") == expected


def test_an_unreadable_bundle_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SelectionError, match="--bundle"):
        read_bundle_model(tmp_path / "missing")
