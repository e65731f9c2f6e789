"""End to end: the owner of a managed fleet whose workers share nothing but PostgreSQL runs
`codegen memory …` and `codegen dream …` from an EMPTY folder (no tenant folder exists on the
owner's machine): the database names the tenant's spec, continuity and usage are read there, a
dream run with the bundle records its model phase in the tenant's usage ledger (the dream's
kind, outside the turn budget), and `erase --tenant T --postgres VAR` erases the tenant's rows
and keeps its receipt in ROOT/erasures. A tenant the database does not hold is one line, exit
2, for every verb. Nothing else is written under the folder, not even an empty directory."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving_support import build_bundle, clean_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.core.scopes import ScopeKey  # noqa: E402
from specwire.runtime.facts.providers.protocol import RetainRequest  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

SPEC_NAME = "fleet-concierge"
CODEGEN = str(Path(sys.executable).with_name("codegen"))
SPEC_TEXT = """\
name: fleet-concierge
target: managed
agent:
  model: scripted
  instructions: You help the guests.
tenants:
  - id: acme
  - id: globex
memory:
  backend: postgres
  dsn: $DATABASE_URL
  dream:
    every: 1h
    mode: full
    budget_usd: 5
    instructions: |
      steps:
      remember: deploys go out on fridays
    prices:
      scripted: {input: 3, output: 15, cached_input: 0.3}
continuity: {}
"""


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def seed(database: str, root: Path) -> None:
    """What acme's workers left in the database: facts (one of them ana's) and a focus."""
    from specwire.runtime.continuity.store import ContinuityStore
    from specwire.runtime.core.paths import StoreLayout
    from specwire.runtime.facts.providers.postgres.provider import (
        FactScope,
        PostgresFactProvider,
    )
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.pg.volume import PostgresVolume

    provider = PostgresFactProvider(database, scope=FactScope("acme", SPEC_NAME))
    try:
        provider.retain(RetainRequest("ana takes her tea green", scope=ScopeKey("user", "ana")))
        provider.retain(RetainRequest("the acme office opens at nine"))
    finally:
        provider.close()
    pool = open_pool(database, max_size=2)
    try:
        layout = StoreLayout(root, SPEC_NAME)  # a worker's root: only the database is written
        volume = PostgresVolume(pool, root, tenant="acme", spec=SPEC_NAME)
        ContinuityStore(layout, volume=volume).write_focus("the spring price list")
    finally:
        pool.close()


def test_the_owner_works_on_a_postgres_only_fleet_from_an_empty_folder(
    tmp_path: Path, database: str
) -> None:
    spec = tmp_path / "fleet.yaml"
    spec.write_text(SPEC_TEXT, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    seed(database, tmp_path / "worker" / ".specwire" / "tenants" / "acme")
    work = tmp_path / "owner"
    work.mkdir()
    home = tmp_path / "home"
    home.mkdir()

    def codegen(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CODEGEN, *argv],
            cwd=work,
            capture_output=True,
            text=True,
            env=clean_env(HOME=str(home), DATABASE_URL=database),
            check=False,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )

    pg = ("--backend", "postgres")
    # No --spec: the database says acme keeps one spec.
    listed = codegen("memory", *pg, "--tenant", "acme", "--json", "list")
    assert listed.returncode == 0, listed.stderr
    assert sorted(f["text"] for f in json.loads(listed.stdout)) == [
        "ana takes her tea green",
        "the acme office opens at nine",
    ]
    shown = codegen("memory", *pg, "--tenant", "acme", "continuity", "show")
    assert shown.returncode == 0 and "focus: the spring price list" in shown.stdout, shown.stderr

    # A dream the owner runs with the bundle: its model phase is in acme's usage ledger, as
    # the scheduled dream's is (the dream's kind; no turn counted).
    dreamt = codegen("dream", "--tenant", "acme", "run", "--bundle", str(agent))
    assert dreamt.returncode == 0, dreamt.stderr
    assert "model phase: ran" in dreamt.stdout, dreamt.stdout
    status = codegen("dream", *pg, "--tenant", "acme", "--json", "status")
    assert status.returncode == 0, status.stderr
    model = json.loads(status.stdout)["lastOutcome"]["model"]
    assert model["calls"] >= 1
    usage = codegen("memory", *pg, "--tenant", "acme", "--json", "usage")
    assert usage.returncode == 0, usage.stderr
    [ledger] = json.loads(usage.stdout)
    assert ledger["spec"] == SPEC_NAME and ledger["turns"]["turns"] == 0
    assert ledger["dream"] == {
        "runs": 1,
        "calls": model["calls"],
        "input": model["input_tokens"],
        "output": model["output_tokens"],
        "cached": model["cached_tokens"],
        "costUsd": model["spent_usd"],
    }

    # Erasure per tenant: the database's rows; the receipt is the one thing written here.
    erased = codegen(
        "memory", "--tenant", "acme", "--yes", "--json", "erase", "--user", "ana",
        "--postgres", "DATABASE_URL",
    )  # fmt: skip
    assert erased.returncode == 0, erased.stderr
    receipt = json.loads(erased.stdout)  # the database's counts line goes to stderr
    assert receipt["tenants"] == ["acme"] and receipt["scope"] == "user"
    assert receipt["tiers"]["postgres"]["facts"] == 1
    assert receipt["tiers"]["postgres"]["remaining"] == 0
    assert Path(receipt["receipt"]).parent == work / "erasures"
    assert "ana" not in Path(receipt["receipt"]).read_text(encoding="utf-8")
    left = json.loads(codegen("memory", *pg, "--tenant", "acme", "--json", "list").stdout)
    assert sorted(f["text"] for f in left) == [
        "deploys go out on fridays",  # the dream's model phase remembered it
        "the acme office opens at nine",
    ]

    # globex is in the spec but never served: the database holds nothing of it.
    for argv in (
        ("memory", *pg, "--tenant", "globex", "list"),
        ("memory", *pg, "--tenant", "globex", "continuity", "show"),
        ("memory", *pg, "--tenant", "globex", "usage"),
        ("dream", *pg, "--tenant", "globex", "status"),
        ("dream", "--tenant", "globex", "run", "--bundle", str(agent)),
        ("memory", "--tenant", "globex", "--yes", "erase", "--user", "ana", "--postgres",
         "DATABASE_URL"),
    ):  # fmt: skip
        refused = codegen(*argv)
        assert refused.returncode == 2, (argv, refused.stdout, refused.stderr)
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        assert "--tenant 'globex': no such tenant in the database" in refused.stderr

    # Nothing under the owner's folder but the receipt and its key: no tenant folder.
    written = sorted(str(p.relative_to(work)) for p in work.rglob("*"))
    receipt_name = Path(receipt["receipt"]).name
    assert written == ["erasures", "erasures/.erasure.key", f"erasures/{receipt_name}"]
