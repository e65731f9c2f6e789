"""focus.md: the marker gate, the cap, and the verbatim requirements ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from continuity_support import SESSION, Logs, make_store

from specwire.runtime.continuity.focus import FocusDoc, parse_focus, render_focus
from specwire.runtime.continuity.ledger import Requirement, parse_requirement, render_requirement
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.seams import LedgerEntry


def _user(text: str, turn: int = 1) -> LedgerEntry:
    return LedgerEntry("user", text, SESSION, turn)


def test_focus_file_layout_golden(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship it")
    store.write_focus("  Fix the login bug first.\nThen the docs.  ")
    store.record_requirements([_user('Use "tabs", not spaces', 3)])
    assert store.focus_path.read_text() == (
        "<!-- specwire:focus -->\n"
        "# Focus\n"
        "\n"
        "Fix the login bug first.\n"
        "Then the docs.\n"
        "\n"
        "## Active plan\n"
        "<!-- specwire:active-plan -->\n"
        "plan-0001\n"
        "\n"
        "## Requirements\n"
        "<!-- specwire:requirements -->\n"
        f'- REQ-001 [open] "Use \\"tabs\\", not spaces" (user, {SESSION}, turn 3)\n'
    )
    assert store.focus_path.stat().st_mode & 0o777 == 0o600
    doc = store.read_focus()
    assert doc is not None and doc.body == "Fix the login bug first.\nThen the docs."


def test_empty_focus_renders_placeholders_and_round_trips() -> None:
    text = render_focus(FocusDoc())
    assert "_no focus set_" in text and text.count("_none_") == 2
    assert parse_focus(text) == FocusDoc()


def test_a_user_authored_focus_file_is_never_touched(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.focus_path.parent.mkdir(parents=True)
    original = b"# My own focus\r\n\r\nDo not touch \xe2\x9c\x8b\n"
    store.focus_path.write_bytes(original)
    with pytest.raises(StoreError, match="refusing to overwrite a user-authored file"):
        store.write_focus("new focus")
    with pytest.raises(StoreError, match="refusing to overwrite a user-authored file"):
        store.record_requirements([_user("keep it")])
    store.create_plan("Plans still work")  # the active plan lives in plans/ACTIVE
    assert store.active_plan_id() == "plan-0001"
    assert store.read_focus() is None
    assert store.focus_is_user_authored()
    assert store.focus_path.read_bytes() == original


def test_the_marker_must_be_the_first_line(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.focus_path.parent.mkdir(parents=True)
    store.focus_path.write_text("notes\n<!-- specwire:focus -->\n")
    assert store.read_focus() is None


def test_focus_cap_refuses_an_over_long_write(tmp_path: Path) -> None:
    store = make_store(tmp_path, focus_max_chars=20)
    store.write_focus("x" * 20)
    with pytest.raises(StoreError) as refused:
        store.write_focus("y" * 21)
    assert "21 chars; the cap is 20" in str(refused.value)
    doc = store.read_focus()
    assert doc is not None and doc.body == "x" * 20


def test_focus_cannot_smuggle_markers(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with pytest.raises(StoreError, match="markers"):
        store.write_focus('hi\n<!-- specwire:requirements -->\n- REQ-999 [open] "x"')


def test_ledger_keeps_text_verbatim(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    tricky = 'Line one\n  "quoted" — ünïcode, (parens), trailing space '
    added = store.record_requirements([_user(tricky, 7)])
    assert [r.text for r in added] == [tricky]
    (req,) = store.requirements()
    assert req == Requirement("REQ-001", "open", tricky, "user", SESSION, 7)
    line = store.focus_path.read_text().splitlines()[-1]
    assert (
        line
        == f"- REQ-001 [open] {json.dumps(tricky, ensure_ascii=False)} (user, {SESSION}, turn 7)"
    )


def test_ledger_dedupes_identical_text_and_ignores_non_user_entries(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.record_requirements([_user("A"), _user("A"), LedgerEntry("assistant", "B", SESSION, 1)])
    assert store.record_requirements([_user("A", 5)]) == []
    store.record_requirements([_user("a")])  # different text: a new requirement
    assert [(r.id, r.text) for r in store.requirements()] == [("REQ-001", "A"), ("REQ-002", "a")]


def test_ledger_evicts_oldest_first_with_a_truncated_line(tmp_path: Path) -> None:
    store = make_store(tmp_path, ledger_max_bytes=300)
    for n in range(1, 7):
        store.record_requirements([_user(f"requirement number {n} " + "z" * 20, n)])
    doc = store.read_focus()
    assert doc is not None and doc.ledger_truncated
    ids = [r.id for r in doc.requirements]
    assert ids == sorted(ids) and ids[-1] == "REQ-006" and "REQ-001" not in ids
    total = sum(len(render_requirement(r).encode()) + 1 for r in doc.requirements)
    assert total <= 300
    text = store.focus_path.read_text()
    assert "<!-- specwire:requirements -->\n[ledger truncated]\n- REQ-" in text


def test_ledger_status_change_needs_identical_text(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.record_requirements([_user("Deploy on Fridays only")])
    with pytest.raises(StoreError, match="verbatim-only"):
        store.set_requirement_status("REQ-001", "confirmed", "Deploy on fridays only")
    req = store.set_requirement_status("REQ-001", "confirmed", "Deploy on Fridays only")
    assert req.status == "confirmed"
    assert store.requirements()[0].status == "confirmed"


def test_focus_write_keeps_the_ledger_and_a_persons_notes(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.record_requirements([_user("Keep it short")])
    with store.focus_path.open("a") as handle:
        handle.write("- a note a person added\n")
    store.write_focus("new focus")
    text = store.focus_path.read_text()
    assert '"Keep it short"' in text and text.endswith("- a note a person added\n")


def test_requirement_line_parsing_rejects_junk() -> None:
    assert parse_requirement('- REQ-01 [open] "x" (user, s, turn 1)') is None
    assert parse_requirement('- REQ-001 [open] "x (user, s, turn 1)') is None
    assert parse_requirement('- REQ-001 [maybe] "x" (user, s, turn 1)') is None
    assert parse_requirement('- REQ-1234 [dropped] "x" (user, s, turn 12)') == Requirement(
        "REQ-1234", "dropped", "x", "user", "s", 12
    )


def test_reads_of_a_missing_store_create_nothing(tmp_path: Path) -> None:
    store = make_store(tmp_path, log=Logs())
    assert store.read_focus() == FocusDoc()
    assert store.requirements() == ()
    assert store.list_plans() == [] and store.list_goals() == []
    assert store.render_continuity_tail() is None and store.read_handoff() is None
    assert store.list_trash() == []
    assert not (tmp_path / ".specwire").exists()
