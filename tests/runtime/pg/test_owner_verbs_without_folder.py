"""The owner's fact verbs on a PostgreSQL-only fleet, run from an empty folder (real server):
the database names the tenant's spec (``--spec`` only to choose among several, and checked),
``show``/``search``/``export``/``forget``/``import`` work there, ``erase --id`` looks the fact
up in the database, and a tenant or spec the database does not hold is one line, exit 2,
nothing created (``runtime.owner.database_tenancy``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from state_support import PostgresServerForTests

from specwire.runtime.facts.providers.connect import close_shared_pools
from specwire.runtime.facts.providers.postgres.provider import FactScope, PostgresFactProvider
from specwire.runtime.facts.providers.protocol import RetainRequest
from specwire.runtime.owner.command import main

pytestmark = pytest.mark.postgres

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Run:
    work = tmp_path / "owner"
    work.mkdir()

    def invoke(*argv: str) -> tuple[int, str, str]:
        status = main(["--root", str(work), *argv])
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def retain(database: str, tenant: str, spec: str, text: str) -> str:
    provider = PostgresFactProvider(database, scope=FactScope(tenant, spec))
    try:
        return provider.retain(RetainRequest(text)).id
    finally:
        provider.close()


def test_the_console_refuses_a_tenant_the_database_does_not_hold(
    database: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("starlette")
    from specwire.runtime.console.command import main as console_main

    retain(database, "acme", "concierge", "the acme office opens at nine")
    code = console_main(
        ["--root", str(tmp_path), "--backend", "postgres", "--tenant", "initech", "console"]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "--tenant 'initech': no such tenant in the database" in err
    assert list(tmp_path.iterdir()) == []


def test_fact_verbs_find_the_spec_in_the_database(database: str, run: Run, tmp_path: Path) -> None:
    office = retain(database, "acme", "concierge", "the acme office opens at nine")
    retain(database, "acme", "concierge", "the acme printer is on floor two")
    retain(database, "globex", "concierge", "the globex office opens at ten")
    pg = ("--backend", "postgres", "--tenant", "acme")

    code, out, err = run(*pg, "--json", "show", office)
    assert code == 0, err
    assert json.loads(out)["text"] == "the acme office opens at nine"
    code, out, _ = run(*pg, "--json", "search", "office")
    assert [hit["id"] for hit in json.loads(out)] == [office]  # globex's is not acme's
    exported = tmp_path / "acme.jsonl"
    code, _, err = run(*pg, "export", "--out", str(exported))
    assert code == 0 and len(exported.read_text().splitlines()) == 2, err
    code, out, err = run(*pg, "--yes", "forget", "--query", "printer")
    assert code == 0 and "forgot 1 fact(s)" in out, err
    # import may be a spec's first memory: --spec names it, the database need not hold it.
    code, out, err = run(*pg, "--spec", "copy", "--yes", "import", str(exported))
    assert code == 0 and "imported 2 fact(s)" in out, err

    # Two specs now: --spec chooses, and a spec the tenant does not keep is refused.
    code, _, err = run(*pg, "list")
    assert code == 2 and err.count("\n") == 1
    assert "several specs in the database: pass --spec (concierge, copy)" in err
    code, _, err = run(*pg, "--spec", "conceirge", "list")
    assert code == 2 and err.count("\n") == 1
    assert "--spec 'conceirge': tenant 'acme' keeps no memory of it" in err
    # An unknown tenant, whatever the verb.
    for argv in (("list",), ("show", office), ("search", "office"), ("export",), ("sweep",)):
        code, out, err = run("--backend", "postgres", "--tenant", "initech", *argv)
        assert (code, out) == (2, "") and err.count("\n") == 1, (argv, err)
        assert "--tenant 'initech': no such tenant in the database" in err

    # erase --id: the fact's text, looked up in the database (no fact store here).
    code, out, err = run(
        "--tenant", "acme", "--yes", "--json", "erase", "--id", office, "--postgres", "DATABASE_URL"
    )
    assert code == 0, err
    receipt = json.loads(out)
    assert receipt["tenants"] == ["acme"] and receipt["tiers"]["postgres"]["facts"] == 2
    code, out, _ = run(*pg, "--spec", "concierge", "--json", "list", "--status", "all")
    assert office not in out
    code, out, _ = run("--backend", "postgres", "--tenant", "globex", "--json", "list")
    assert [f["text"] for f in json.loads(out)] == ["the globex office opens at ten"]
    code, _, err = run(
        "--tenant", "acme", "--yes", "erase", "--id", "mem_0000000000000000",
        "--postgres", "DATABASE_URL",
    )  # fmt: skip
    assert code == 2 and "no fact 'mem_0000000000000000' in the PostgreSQL database" in err

    # A subject that names a spec would damage the keys, not remove a person: refused.
    code, _, err = run("--yes", "erase", "--subject", "concierge", "--postgres", "DATABASE_URL")
    assert code == 2 and "the stores' own structure" in err

    # globex keeps one spec: doc and migrate take it from the database too.
    code, out, err = run("--backend", "postgres", "--tenant", "globex", "--json", "doc", "list")
    assert (code, json.loads(out)) == (0, {"documents": []}), err
    copy = tmp_path / "copy"
    code, out, err = run(
        "--tenant", "globex", "--yes", "migrate", "--from", "postgres", "--to", "file",
        "--to-root", str(copy),
    )  # fmt: skip
    assert code == 0, err
    assert [p.name for p in copy.rglob("*.sqlite3")] == ["concierge.sqlite3"]

    # Only the receipts' folder was made; no tenant folder, no state root.
    work = tmp_path / "owner"
    assert sorted(p.name for p in work.iterdir()) == ["erasures"]
