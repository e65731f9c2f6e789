"""A focus.md a person wrote (no specwire marker): the agent reads it, the store never writes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from continuity_support import SESSION, Clock, Events, Logs, context, layout_for, make_store

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.tools import continuity_tools
from specwire.runtime.continuity.wiring import build_continuity
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import ContinuityFragment
from specwire.runtime.core.seams import HandoffInput, LedgerEntry

LABEL = "focus (written by a person in focus.md; read-only to you — FocusWrite cannot change it):"
TAIL_LABEL = "focus (written by a person in focus.md; read-only):"


def _hand_write(store: ContinuityStore, data: bytes) -> None:
    store.focus_path.parent.mkdir(parents=True, exist_ok=True)
    store.focus_path.write_bytes(data)


def _focus_read(store: ContinuityStore) -> str:
    tools = {t.name: t for t in continuity_tools(store, "ladder", True)}
    result = tools["FocusRead"].invoke({}, context(SESSION, Events()))
    assert not result.is_error
    return result.text


def test_focus_read_returns_a_hand_written_focus_labelled_read_only(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    _hand_write(store, b"\xef\xbb\xbf# My focus\r\n\r\nShip the login fix first.\r\n")
    assert _focus_read(store) == (
        f"{LABEL}\n# My focus\n\nShip the login fix first.\nactive plan: none"
    )
    store.create_plan("Ship")  # plans keep working beside a hand-written focus
    assert _focus_read(store).endswith("\nactive plan: plan-0001 — Ship (0/0 steps proven)")


def test_a_long_hand_written_focus_is_capped_with_a_note(tmp_path: Path) -> None:
    store = make_store(tmp_path, focus_max_chars=10)
    _hand_write(store, b"0123456789abcdef\n")
    assert _focus_read(store) == (
        f"{LABEL}\n0123456789\n[focus.md is 16 chars; showing the first 10]\nactive plan: none"
    )
    assert store.render_plan_tail() == (
        f"{TAIL_LABEL}\n0123456789\n[focus.md is 16 chars; showing the first 10]"
    )


def test_the_tail_shows_a_hand_written_focus(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    _hand_write(store, "Keep the API stable ✋\n".encode())
    store.create_plan("Ship", ["tag"])
    assert store.render_continuity_tail() == (
        f"<current_plan>\n{TAIL_LABEL}\nKeep the API stable ✋\n\n"
        "plan-0001 — Ship\n1. [open] tag\n</current_plan>"
    )
    assert store.render_plan_tail(include_plans=False) == f"{TAIL_LABEL}\nKeep the API stable ✋"


def test_an_empty_hand_written_focus_says_so(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    _hand_write(store, b"\n  \n")
    assert _focus_read(store) == f"{LABEL}\n(empty)\nactive plan: none"
    assert store.render_plan_tail() is None


def test_the_seam_shows_it_and_still_refuses_to_write_it(tmp_path: Path) -> None:
    logs = Logs()
    layout = layout_for(tmp_path)
    wiring = build_continuity(
        ContinuityFragment(),
        layout,
        sessions_dir=layout.sessions_dir,
        session_scope=None,
        now=Clock(),
        log=logs,
    )
    store = wiring.store
    original = b"mine\n"
    _hand_write(store, original)
    assert wiring.seam.load_plan() == f"<current_plan>\n{TAIL_LABEL}\nmine\n</current_plan>"
    assert wiring.seam.record_requirements is not None
    wiring.seam.record_requirements([LedgerEntry("user", "x", SESSION, 1)])
    assert any(
        "requirements not recorded: refusing to overwrite a user-authored file" in line
        for line in logs.lines
    )
    with pytest.raises(StoreError, match="refusing to overwrite a user-authored file"):
        store.write_focus("new")
    store.write_handoff(HandoffInput(SESSION, "exit"))
    handoff = store.handoff_path.read_text()
    assert "## Focus\n_written by a person: see focus.md_\n" in handoff
    assert store.focus_path.read_bytes() == original
