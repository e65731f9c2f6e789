"""Per-tenant erasure in PostgreSQL (real server): ``erase --user ana --postgres VAR`` over a
database holding two tenants' "ana" is refused without ``--tenant``/``--all-tenants`` (exit 2,
no row touched); ``--tenant acme`` deletes acme's ana (facts, her working memory's documents)
and leaves globex's; ``--all-tenants`` reaches both; the receipt names the tenants."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from state_support import PostgresServerForTests, database_documents, volume_on

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.facts.providers.admin import FactListing
from specwire.runtime.facts.providers.connect import close_shared_pools
from specwire.runtime.facts.providers.postgres.provider import FactScope, PostgresFactProvider
from specwire.runtime.facts.providers.protocol import RetainRequest
from specwire.runtime.owner.command import main
from specwire.runtime.pg.pool import open_pool

pytestmark = pytest.mark.postgres

SPEC = "concierge"
ANA = ScopeKey("user", "ana")
TENANTS = ("acme", "globex")

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def invoke(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def _root(work: Path, tenant: str) -> Path:
    return build_tenant(tenant, work / ".specwire" / "tenants").root


def seed(database: str, work: Path) -> None:
    """Each tenant's own "ana" in the database: her facts and her per-person focus."""
    pool: Any = open_pool(database, max_size=2)
    try:
        for tenant in TENANTS:
            provider = PostgresFactProvider(database, scope=FactScope(tenant, SPEC))
            try:
                provider.retain(RetainRequest(f"{tenant} ana takes her tea green", scope=ANA))
                provider.retain(RetainRequest(f"the {tenant} office opens at nine"))
            finally:
                provider.close()
            root = _root(work, tenant)
            root.mkdir(parents=True)  # the tenant's root exists (its workspace); no state files
            layout = StoreLayout(root, SPEC)
            volume = volume_on(pool, root, tenant=tenant, spec=SPEC)
            store = ContinuityStore(layout, scope_dir=layout.audience_state_dir(ANA), volume=volume)
            store.write_focus(f"{tenant} ana's visa paperwork")
    finally:
        pool.close()


def receipt_of(out: str) -> Any:
    """The JSON receipt: with --json it is all stdout holds (the database tier's line goes to
    stderr)."""
    return json.loads(out)


def holds_ana(database: str, work: Path, tenant: str) -> tuple[bool, bool]:
    """(her fact is in the database, her working memory's documents are) for ``tenant``."""
    provider = PostgresFactProvider(database, scope=FactScope(tenant, SPEC))
    try:
        texts = [status.fact.text for status in provider.list_facts(FactListing())]
    finally:
        provider.close()
    pool: Any = open_pool(database, max_size=2)
    try:
        documents = database_documents(
            volume_on(pool, _root(work, tenant), tenant=tenant, spec=SPEC)
        )
    finally:
        pool.close()
    return (
        any("takes her tea" in text for text in texts),
        any(b"visa paperwork" in body for body in documents.values()),
    )


def test_a_person_is_erased_per_tenant_in_postgres(database: str, tmp_path: Path, run: Run) -> None:
    seed(database, tmp_path)
    base = ("--root", str(tmp_path), "--json")
    pg = ("--postgres", "DATABASE_URL", "--yes")

    status, out, err = run(*base, "erase", "--user", "ana", *pg)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert "acme, globex" in err and "--all-tenants" in err
    assert holds_ana(database, tmp_path, "acme") == holds_ana(database, tmp_path, "globex")
    assert holds_ana(database, tmp_path, "acme") == (True, True)  # nothing touched

    status, out, err = run(*base, "--tenant", "acme", "erase", "--user", "ana", *pg)
    assert status == 0, err
    receipt = receipt_of(out)
    assert receipt["tenants"] == ["acme"]
    assert receipt["tiers"]["postgres"]["facts"] == 1
    assert holds_ana(database, tmp_path, "acme") == (False, False)
    assert holds_ana(database, tmp_path, "globex") == (True, True)  # another person

    status, out, err = run(*base, "erase", "--user", "ana", "--all-tenants", *pg)
    assert status == 0, err
    receipt = receipt_of(out)
    assert receipt["tenants"] == ["acme", "globex"]
    assert holds_ana(database, tmp_path, "globex") == (False, False)
