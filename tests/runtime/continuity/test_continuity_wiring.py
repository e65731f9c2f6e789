"""build_continuity: scope dirs, the seam, the log line, tenancy, and nothing created early."""

from __future__ import annotations

from pathlib import Path

import pytest
from continuity_support import SESSION, Clock, Logs, layout_for

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.wiring import ContinuityWiring, build_continuity
from specwire.runtime.core.errors import MemoryServiceError, TenancyError
from specwire.runtime.core.fragment import ContinuityFragment
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import HandoffInput, LedgerEntry
from specwire.runtime.core.tenancy import build_tenant


def _build(
    tmp_path: Path, fragment: ContinuityFragment, session_scope: str | None = None
) -> tuple[Logs, ContinuityWiring]:
    logs = Logs()
    layout = layout_for(tmp_path)
    wiring = build_continuity(
        fragment,
        layout,
        sessions_dir=layout.sessions_dir,
        session_scope=session_scope,
        now=Clock(),
        log=logs,
    )
    return logs, wiring


def test_spec_scope_logs_and_creates_nothing(tmp_path: Path) -> None:
    logs, wiring = _build(tmp_path, ContinuityFragment())
    state = (tmp_path / ".specwire" / "state" / "demo").resolve()
    assert logs.lines == [f"[memory] continuity on — {state} (focus · plans · goals)\n"]
    assert [t.name for t in wiring.tools][:2] == ["FocusRead", "FocusWrite"]
    assert len(wiring.tools) == 9
    seam = wiring.seam
    assert seam.load_handoff is not None
    assert seam.load_plan() is None and seam.load_handoff() is None
    assert not (tmp_path / ".specwire").exists()


def test_session_scope_needs_a_session(tmp_path: Path) -> None:
    with pytest.raises(
        MemoryServiceError, match='continuity scope "session" needs deps.session_scope'
    ):
        _build(tmp_path, ContinuityFragment(scope="session"))


def test_session_scope_uses_its_own_directory(tmp_path: Path) -> None:
    _, wiring = _build(tmp_path, ContinuityFragment(scope="session"), SESSION)
    store: ContinuityStore = wiring.store
    assert store.scope_dir == (tmp_path / ".specwire/state/demo/sessions" / SESSION).resolve()
    store.write_focus("per conversation")
    assert store.focus_path.is_file()
    _, other = _build(tmp_path, ContinuityFragment(scope="session"), "sess_1111111111111111")
    other_doc = other.store.read_focus()
    assert other_doc is not None and other_doc.body == ""
    spec_doc = ContinuityStore(layout_for(tmp_path)).read_focus()
    assert spec_doc is not None and spec_doc.body == ""


def test_the_seam_with_everything_on(tmp_path: Path) -> None:
    _, wiring = _build(tmp_path, ContinuityFragment())
    seam = wiring.seam
    store: ContinuityStore = wiring.store
    assert seam.ledger is True
    assert seam.record_requirements is not None and seam.on_handoff is not None
    assert seam.load_handoff is not None
    seam.record_requirements([LedgerEntry("user", "Be brief", SESSION, 1)])
    store.create_plan("Ship", ["a"])
    tail = seam.on_plan_dirty()
    assert tail is not None and tail == seam.load_plan()
    assert tail.startswith("<current_plan>\nplan-0001 — Ship\n1. [open] a\n</current_plan>\n")
    assert "- (user, turn 1) Be brief\n</requirements_ledger>" in tail
    seam.on_handoff(HandoffInput(SESSION, "complete"))
    handoff = seam.load_handoff()
    assert handoff is not None and handoff.endswith(
        f"## Last session\n{SESSION} (stop: complete)\n"
    )


def test_the_seam_with_ledger_handoff_and_plans_off(tmp_path: Path) -> None:
    logs, wiring = _build(tmp_path, ContinuityFragment(plan=False, ledger=False, handoff=False))
    seam = wiring.seam
    assert logs.lines[0].endswith("(focus)\n")
    assert seam.ledger is False and seam.record_requirements is None
    assert seam.on_handoff is None and seam.load_handoff is None
    assert [t.name for t in wiring.tools] == ["FocusRead", "FocusWrite", "MemoryClear"]
    store: ContinuityStore = wiring.store
    store.write_focus("f")
    store.create_plan("hidden")
    assert seam.load_plan() == "<current_plan>\nfocus: f\n</current_plan>"


def test_seam_writes_log_store_refusals_instead_of_raising(tmp_path: Path) -> None:
    logs, wiring = _build(tmp_path, ContinuityFragment())
    store: ContinuityStore = wiring.store
    store.focus_path.parent.mkdir(parents=True)
    store.focus_path.write_text("mine\n")
    store.handoff_path.write_text("mine too\n")
    seam = wiring.seam
    assert seam.record_requirements is not None and seam.on_handoff is not None
    seam.record_requirements([LedgerEntry("user", "x", SESSION, 1)])
    seam.on_handoff(HandoffInput(SESSION, "abort"))
    assert any("requirements not recorded" in line for line in logs.lines)
    assert any("handoff not written" in line for line in logs.lines)
    assert store.focus_path.read_text() == "mine\n"


def test_proof_mode_and_focus_cap_reach_the_store(tmp_path: Path) -> None:
    _, wiring = _build(tmp_path, ContinuityFragment(proof="require", focus_max_chars=10))
    store: ContinuityStore = wiring.store
    assert store.proof_mode == "require" and store.focus_max_chars == 10


def test_a_scope_dir_outside_the_root_is_refused(tmp_path: Path) -> None:
    layout = layout_for(tmp_path)
    with pytest.raises(TenancyError):
        ContinuityStore(layout, scope_dir=tmp_path / "elsewhere")


def test_tenant_stores_stay_apart(tmp_path: Path) -> None:
    a = build_tenant("acme", tmp_path / "tenants")
    b = build_tenant("globex", tmp_path / "tenants")
    store_a = ContinuityStore(StoreLayout.for_cwd(tmp_path, "demo", a))
    store_b = ContinuityStore(StoreLayout.for_cwd(tmp_path, "demo", b))
    store_a.write_focus("acme secret")
    doc_b = store_b.read_focus()
    assert doc_b is not None and doc_b.body == ""
    assert store_a.focus_path.is_relative_to(a.root)
    with pytest.raises(TenancyError):
        ContinuityStore(StoreLayout.for_cwd(tmp_path, "demo", b), scope_dir=store_a.scope_dir)
