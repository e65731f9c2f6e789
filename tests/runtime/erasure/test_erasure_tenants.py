"""Erasing a managed person is per tenant: "ana" of tenant acme and "ana" of tenant globex are
two people. ``erase --user``/``--conversation`` over a store of several tenants is refused
without ``--tenant ID`` or ``--all-tenants`` (one line, exit 2, nothing touched); ``--tenant``
erases that tenant's person only; a subject given as text is still erased everywhere; the
receipt names the tenants covered. The console's Erase action refuses the same way."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from specwire.runtime.console.data import BackendOptions, ConsoleData, Refused
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.erasure.subject import Subject
from specwire.runtime.erasure.tenants import tenant_problem, tenants_under
from specwire.runtime.facts.providers.protocol import LocalFactProvider, RetainRequest
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.command import main
from specwire.runtime.owner.selection import select

SPEC = "concierge"
ANA = ScopeKey("user", "ana")
TENANTS = ("acme", "globex")

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def invoke(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def _layout(root: Path, tenant: str) -> StoreLayout:
    return StoreLayout(build_tenant(tenant, root / ".specwire" / "tenants").root, SPEC)


def seed(root: Path, tenants: tuple[str, ...] = TENANTS) -> None:
    """Each tenant has its own "ana": her facts and her per-person working memory."""
    for tenant in tenants:
        layout = _layout(root, tenant)
        with FactStore.open(layout.facts_db) as store:
            provider = LocalFactProvider(store)
            provider.retain(RetainRequest(f"{tenant} ana takes her tea green", scope=ANA))
            provider.retain(RetainRequest(f"the {tenant} office opens at nine"))
        audience = layout.audience_state_dir(ANA)
        ContinuityStore(layout, scope_dir=audience).write_focus(f"{tenant} ana's visa paperwork")


def files_of(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def holds_ana(root: Path, tenant: str) -> tuple[bool, bool]:
    """(her fact is there, her working memory is there) in ``tenant``."""
    layout = _layout(root, tenant)
    with FactStore.open(layout.facts_db) as store:
        texts = [status.fact.text for status in store.list_facts()]
    return (
        any("takes her tea" in text for text in texts),
        (layout.audience_state_dir(ANA) / "focus.md").is_file(),
    )


def test_a_person_over_several_tenants_is_refused_without_a_tenant_and_nothing_changes(
    tmp_path: Path, run: Run
) -> None:
    seed(tmp_path)
    before = files_of(tmp_path)
    for scope in ("--user", "--conversation"):
        status, out, err = run("--root", str(tmp_path), "erase", scope, "ana", "--yes")
        assert status == 2 and out == "", err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert "--tenant" in err and "--all-tenants" in err and "acme, globex" in err
    assert files_of(tmp_path) == before
    assert not (tmp_path / ".specwire" / "erasures").exists()


def test_tenant_erases_that_tenants_person_and_leaves_the_namesake_in_another(
    tmp_path: Path, run: Run
) -> None:
    seed(tmp_path)
    status, out, err = run(
        "--root", str(tmp_path), "--tenant", "acme", "--json", "erase", "--user", "ana", "--yes"
    )
    assert status == 0, err
    receipt = json.loads(out)
    assert receipt["tenants"] == ["acme"] and receipt["scope"] == "user"
    assert receipt["tiers"]["files"]["personalContinuity"] >= 1
    assert holds_ana(tmp_path, "acme") == (False, False)
    assert holds_ana(tmp_path, "globex") == (True, True)  # another person: untouched


def test_all_tenants_erases_the_id_in_every_tenant_and_names_them(tmp_path: Path, run: Run) -> None:
    seed(tmp_path)
    status, out, err = run(
        "--root", str(tmp_path), "--json", "erase", "--user", "ana", "--all-tenants", "--yes"
    )
    assert status == 0, err
    assert json.loads(out)["tenants"] == ["acme", "globex"]
    assert holds_ana(tmp_path, "acme") == holds_ana(tmp_path, "globex") == (False, False)


def test_a_text_subject_is_still_erased_in_every_tenant_by_default(
    tmp_path: Path, run: Run
) -> None:
    seed(tmp_path)
    status, out, err = run(
        "--root", str(tmp_path), "--json", "erase", "--subject", "visa paperwork", "--yes"
    )
    assert status == 0, err
    assert json.loads(out)["tenants"] == ["acme", "globex"]
    for tenant in TENANTS:
        focus = _layout(tmp_path, tenant).audience_state_dir(ANA) / "focus.md"
        assert "visa" not in focus.read_text(encoding="utf-8")


def test_one_tenant_needs_no_flag_and_both_flags_together_are_refused(
    tmp_path: Path, run: Run
) -> None:
    seed(tmp_path, ("acme",))
    status, out, err = run("--root", str(tmp_path), "--json", "erase", "--user", "ana", "--yes")
    assert status == 0, err
    assert json.loads(out)["tenants"] == ["acme"]
    status, _, err = run(
        "--root", str(tmp_path), "--tenant", "acme", "erase", "--user", "ana", "--all-tenants"
    )
    assert status == 2 and err.count("\n") == 1 and "--all-tenants" in err


def test_only_a_user_or_conversation_id_without_a_named_tenant_needs_one() -> None:
    assert tenant_problem(ANA, ["acme", "globex"], tenant="acme", all_tenants=False) is None
    assert (
        tenant_problem(ScopeKey("role", "writer"), ["a", "b"], tenant=None, all_tenants=False)
        is None
    )
    assert tenant_problem(None, ["a", "b"], tenant=None, all_tenants=False) is None


def test_tenants_under_counts_the_plain_root_beside_the_tenant_folders(tmp_path: Path) -> None:
    seed(tmp_path, ("acme",))
    root = (tmp_path / ".specwire").resolve()
    assert tenants_under(root) == ["acme"]
    with FactStore.open(StoreLayout(root, SPEC).facts_db) as store:
        store.remember("a plain cli agent's fact")
    assert tenants_under(root) == ["acme", "single.tenant"]


def test_the_consoles_erase_refuses_a_person_over_several_tenants(tmp_path: Path) -> None:
    seed(tmp_path)
    with FactStore.open(StoreLayout(tmp_path / ".specwire", SPEC).facts_db) as store:
        store.remember("the plain root's own fact")  # the console opens on the plain root
    before = files_of(tmp_path)
    data = ConsoleData(select(tmp_path, SPEC, None, None), BackendOptions())
    subject = Subject.identifier("ana", ANA.label())
    try:
        with pytest.raises(Refused, match="--tenant"):
            data.erase_preview(subject, ANA)
        with pytest.raises(Refused, match="--tenant"):
            data.erase(subject, ANA)
    finally:
        data.close()
    assert files_of(tmp_path) == before
    acme = ConsoleData(select(tmp_path, None, "acme", None), BackendOptions(tenant="acme"))
    try:
        receipt = acme.erase(subject, ANA)
    finally:
        acme.close()
    assert receipt.tenants == ("acme",)
    assert holds_ana(tmp_path, "acme") == (False, False)
    assert holds_ana(tmp_path, "globex") == (True, True)


def test_tenants_kept_outside_the_state_root_are_erased_one_tenant_at_a_time(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$SPECWIRE_TENANTS_ROOT`` elsewhere: a walk of ``.specwire`` never reaches them, so
    ``--all-tenants`` refuses rather than claim them; ``--tenant`` finds one there."""
    elsewhere = tmp_path / "tenants-elsewhere"
    monkeypatch.setenv("SPECWIRE_TENANTS_ROOT", str(elsewhere))
    layout = StoreLayout(build_tenant("acme", elsewhere).root, SPEC)
    with FactStore.open(layout.facts_db) as store:
        LocalFactProvider(store).retain(RetainRequest("acme ana takes her tea green", scope=ANA))
    (tmp_path / ".specwire").mkdir()
    status, _, err = run("--root", str(tmp_path), "erase", "--user", "ana", "--all-tenants")
    assert status == 2 and err.count("\n") == 1 and "one --tenant" in err
    status, out, err = run(
        "--root", str(tmp_path), "--tenant", "acme", "--json", "erase", "--user", "ana", "--yes"
    )
    assert status == 0, err
    assert json.loads(out)["tenants"] == ["acme"]
    with FactStore.open(layout.facts_db) as store:
        assert not [s for s in store.list_facts() if "tea" in s.fact.text]
