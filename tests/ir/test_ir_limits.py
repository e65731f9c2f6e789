"""The size caps: specs right at a cap load, files are never read past the cap, and the name cap
leaves room for the store files the runtime derives from the name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specwire.ir import SpecError, load_spec, load_spec_text
from specwire.ir.limits import MAX_ENTRIES, MAX_NAME_LENGTH, MAX_SPEC_BYTES, MAX_YAML_DEPTH
from specwire.runtime.core.fragment import storage_name

AGENT = "agent: {model: scripted, instructions: i}\n"
CLI = "name: s\ntarget: cli\n" + AGENT


def test_a_spec_of_exactly_the_size_cap_loads() -> None:
    padding = MAX_SPEC_BYTES - len(CLI) - len("# \n")
    text = CLI + "# " + "x" * padding + "\n"
    assert len(text.encode("utf-8")) == MAX_SPEC_BYTES
    assert load_spec_text(text, "spec.yaml").name == "s"


def test_the_size_cap_counts_bytes_not_characters() -> None:
    text = CLI + "# " + "é" * (MAX_SPEC_BYTES // 2) + "\n"
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    assert "the file is too large" in str(caught.value)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_file_is_refused_after_the_cap() -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(Path("/dev/zero"), display_path="zero.yaml")
    assert (
        str(caught.value)
        == "zero.yaml:1:1: (root): the file is too large: a spec may be at most 512 KiB"
    )


def test_a_big_file_reports_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(CLI.encode() + b"#" * (3 * MAX_SPEC_BYTES))
    with pytest.raises(SpecError) as caught:
        load_spec(path, display_path="big.yaml")
    size = os.path.getsize(path)
    assert str(caught.value) == (
        f"big.yaml:1:1: (root): the file is too large ({size:,} bytes): "
        "a spec may be at most 512 KiB"
    )


def test_the_entry_cap_itself_is_allowed_even_for_tenants_with_budgets() -> None:
    tenants = "".join(
        f"  - {{id: t{n}, budget: {{maxInputTokens: 9, maxOutputTokens: 9}}}}\n"
        for n in range(MAX_ENTRIES)
    )
    text = "name: s\ntarget: managed\n" + AGENT + f"tenants:\n{tenants}"
    assert len(load_spec_text(text, "spec.yaml").model_dump()["tenants"]) == MAX_ENTRIES


def test_nesting_up_to_the_depth_cap_is_only_a_type_error() -> None:
    # The root mapping is level 1, so `memory:` may hold 31 more levels.
    nested = "[" * (MAX_YAML_DEPTH - 1) + "]" * (MAX_YAML_DEPTH - 1)
    with pytest.raises(SpecError) as caught:
        load_spec_text(CLI + f"memory: {nested}\n", "spec.yaml")
    assert [issue.message for issue in caught.value.issues] == ["expected a mapping (got a list)"]


@pytest.mark.parametrize(
    "name",
    ["a" * MAX_NAME_LENGTH, ("support bot " * 20)[: MAX_NAME_LENGTH - 1] + "x"],
    ids=["plain", "needs-a-hash"],
)
def test_the_longest_name_still_fits_every_store_file(name: str) -> None:
    ir = load_spec_text(f"name: {name}\ntarget: cli\n" + AGENT, "spec.yaml")
    assert ir.name == name
    longest = f"{storage_name(name)}.sqlite3-journal"
    assert len(longest.encode("utf-8")) <= 255
    assert len(name.encode("utf-8")) <= 255
