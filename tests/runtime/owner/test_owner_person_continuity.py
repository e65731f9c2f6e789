"""`codegen memory continuity show|clear --user ID | --conversation ID`: the owner reaches a
managed person's working memory (continuity scope ``audience``), and only theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.owner.command import main

SPEC = "concierge"


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_the_owner_shows_and_clears_one_persons_continuity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tenant = build_tenant("acme", tmp_path / ".specwire" / "tenants")
    layout = StoreLayout(tenant.root, SPEC)
    for key, focus in (
        (ScopeKey("user", "ana"), "ana's sick-leave paperwork"),
        (ScopeKey("conversation", "kiosk-1"), "the refund queue"),
    ):
        ContinuityStore(layout, scope_dir=layout.audience_state_dir(key)).write_focus(focus)
    ContinuityStore(layout).write_focus("the tenant's old shared focus")
    base = ("--root", str(tmp_path), "--tenant", "acme", "--json", "continuity")

    status, out, _ = show(capsys, *base, "show", "--user", "ana")
    assert status == 0 and "sick-leave" in json.loads(out)["focus"]
    status, out, _ = show(capsys, *base, "show", "--conversation", "kiosk-1")
    assert status == 0 and "refund" in json.loads(out)["focus"]
    status, out, _ = show(capsys, *base, "show", "--user", "bob")
    assert status == 0 and not json.loads(out)["focus"]
    status, out, _ = show(capsys, *base, "show")  # the tenant-wide folder, kept as it was
    assert status == 0 and "old shared focus" in json.loads(out)["focus"]

    assert show(capsys, *base, "clear", "focus", "--user", "ana", "--yes")[0] == 0
    assert not json.loads(show(capsys, *base, "show", "--user", "ana")[1])["focus"]
    assert (
        "refund" in json.loads(show(capsys, *base, "show", "--conversation", "kiosk-1")[1])["focus"]
    )


def test_session_and_person_together_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ContinuityStore(StoreLayout(tmp_path / ".specwire", SPEC)).write_focus("a focus")
    argv = ("--root", str(tmp_path), "--session", "sess_00112233445566ff", "continuity", "show")
    status, _, err = show(capsys, *argv, "--user", "ana")
    assert status == 2 and err.count("\n") == 1 and "--session" in err


def test_erasing_a_person_deletes_their_working_memory_and_its_trash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tenant = build_tenant("acme", tmp_path / ".specwire" / "tenants")
    layout = StoreLayout(tenant.root, SPEC)
    hers = ContinuityStore(
        layout, scope_dir=layout.audience_state_dir(ScopeKey("user", "ana.lopez"))
    )
    hers.write_focus("the sick-leave paperwork")
    hers.clear("focus")  # a copy in the trash
    hers.write_focus("the sick-leave appeal")
    hers.create_plan("Lawyer", ["collect", "call"])
    his = layout.audience_state_dir(ScopeKey("user", "bob"))
    ContinuityStore(layout, scope_dir=his).write_focus("bob's own focus")
    argv = ("--root", str(tmp_path), "--tenant", "acme", "--json", "erase")

    status, out, _ = show(capsys, *argv, "--user", "ana.lopez", "--yes")

    assert status == 0, out
    assert json.loads(out)["tiers"]["files"]["personalContinuity"] >= 3
    left = [
        path.read_text(encoding="utf-8")
        for path in tenant.root.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    ]
    assert not any("sick-leave" in text or "Lawyer" in text for text in left)
    assert not layout.audience_state_dir(ScopeKey("user", "ana.lopez")).exists()
    assert "bob's own focus" in (his / "focus.md").read_text(encoding="utf-8")
