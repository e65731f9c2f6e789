"""Loading from disk: display paths, unreadable files, encodings, line endings, odd YAML."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.ir import SpecError, load_spec, load_spec_text

GOOD = "name: s\ntarget: cli\nagent: {model: scripted, instructions: i}\n"
BAD = GOOD + "memory: {recallK: 80}\n"


def messages(caught: pytest.ExceptionInfo[SpecError]) -> list[str]:
    return [str(issue) for issue in caught.value.issues]


def test_display_path_defaults_to_the_path_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "bad.yaml").write_text(BAD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as caught:
        load_spec(Path("specs/bad.yaml"))
    assert messages(caught) == [
        "specs/bad.yaml:4:19: memory.recallK: must be between 1 and 50 (got 80)"
    ]


def test_display_path_can_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec(path, display_path="support.yaml")
    assert messages(caught)[0].startswith("support.yaml:4:19: ")


def test_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as caught:
        load_spec(Path("nope.yaml"))
    assert messages(caught) == [
        "nope.yaml:1:1: (root): cannot read the file: No such file or directory"
    ]


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path, display_path="dir")
    assert messages(caught)[0].startswith("dir:1:1: (root): cannot read the file: ")


def test_not_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: s\nagent: caf\xe9\n")
    with pytest.raises(SpecError) as caught:
        load_spec(path, display_path="latin1.yaml")
    assert messages(caught) == ["latin1.yaml:2:11: (root): the file is not valid UTF-8 text"]


def test_byte_order_mark_and_crlf_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(("\ufeff" + BAD).replace("\n", "\r\n").encode("utf-8"))
    with pytest.raises(SpecError) as caught:
        load_spec(path, display_path="bom.yaml")
    assert messages(caught) == ["bom.yaml:4:19: memory.recallK: must be between 1 and 50 (got 80)"]
    path.write_bytes(("\ufeff" + GOOD).replace("\n", "\r\n").encode("utf-8"))
    assert load_spec(path).name == "s"


def test_anchors_and_merge_keys_work() -> None:
    text = (
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\n"
        "roles:\n  a: &base {instructions: x, model: scripted/big}\n"
        "  b:\n    <<: *base\n    instructions: y\n"
    )
    ir = load_spec_text(text, "spec.yaml")
    # Undeclared keys keep their defaults (a role without a pool or fallbacks).
    role = ir.model_dump(exclude_defaults=True)["roles"][1]
    assert role == {"name": "b", "instructions": "y", "model": "scripted/big"}


def test_unknown_key_brought_in_by_a_merge_is_still_reported() -> None:
    text = GOOD + "extra: &x {recalK: 1}\n"
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    assert messages(caught)[0] == 'spec.yaml:4:1: extra: unknown key "extra"'


def test_recursive_alias_is_an_error_not_a_hang() -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text(GOOD + "tools: &t [*t]\n", "spec.yaml")
    assert len(caught.value.issues) == 1


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 8):
        prev = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([prev] * 10)}]")
    with pytest.raises(SpecError) as caught:
        load_spec_text("\n".join(lines) + "\n", "bomb.yaml")
    assert messages(caught) == [
        "bomb.yaml:3:5: (root): aliases expand the document past 5000 keys and values "
        "(an alias bomb?)"
    ]


def test_deep_nesting_is_an_error() -> None:
    with pytest.raises(SpecError):
        load_spec_text("a: " + "[" * 400 + "]" * 400 + "\n", "deep.yaml")


def test_dates_and_tags_are_not_strings() -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text(
            "name: 2024-01-01\ntarget: cli\nagent: {model: !foo m, instructions: i}\n", "t"
        )
    assert messages(caught) == [
        "t:1:7: name: expected a string (got 2024-01-01)",
        "t:3:16: agent.model: expected a string (got !foo m)",
    ]


def test_error_lists_are_sorted_by_position() -> None:
    text = "tools: [nope]\nname: a/b\ntarget: cli\nagent: {model: '', instructions: i}\n"
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "t")
    positions = [(issue.line, issue.col) for issue in caught.value.issues]
    assert positions == sorted(positions) and len(positions) == 3


def test_complex_keys_are_refused() -> None:
    text = GOOD + "? {k: v}\n: c\n? [a]\n: d\n"
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "t")
    assert messages(caught) == [
        "t:4:3: (root): keys must be strings (got a mapping)",
        "t:6:3: (root): keys must be strings (got a list)",
    ]
