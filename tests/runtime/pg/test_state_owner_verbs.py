"""The owner's commands on a PostgreSQL-state bundle: ``continuity show|clear|restore
--backend postgres`` work on the database, and ``state export --to DIR`` writes the file
layout a file-backed bundle continues from, byte for byte."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "continuity"))
from continuity_support import Clock, Logs  # noqa: E402
from state_support import (  # noqa: E402
    PostgresServerForTests,
    database_documents,
    file_documents,
    volume_on,
)

from specwire.runtime.continuity.store import ContinuityStore  # noqa: E402
from specwire.runtime.core.paths import StoreLayout  # noqa: E402
from specwire.runtime.facts.providers.connect import (  # noqa: E402
    DEFAULT_TENANT,
    close_shared_pools,
)
from specwire.runtime.owner.command import main as owner  # noqa: E402
from specwire.runtime.pg.pool import shared_pool  # noqa: E402
from specwire.runtime.wiki.store import ArticleDraft, WikiStore  # noqa: E402

pytestmark = pytest.mark.postgres


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("STATE_DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


def remote(*args: str, root: Path) -> list[str]:
    return [
        *args,
        "--root",
        str(root),
        "--spec",
        "demo",
        "--backend",
        "postgres",
        "--dsn",
        "$STATE_DATABASE_URL",
    ]


def test_continuity_verbs_and_export_work_on_the_database(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    layout = StoreLayout.for_cwd(work, "demo")
    volume = volume_on(shared_pool(database), layout.root, tenant=DEFAULT_TENANT)
    store = ContinuityStore(layout, proof_mode="off", now=Clock(), log=Logs(), volume=volume)
    store.write_focus("migrate the billing jobs")
    plan, _ = store.create_plan("Billing", ["copy", "verify"])
    WikiStore(layout, now=Clock(), volume=volume).write(
        ArticleDraft("billing", "Billing", "Runs nightly."), expected_version=None
    )

    assert owner(remote("continuity", "show", "--json", root=work)) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["activePlan"]["title"] == "Billing" and "billing" in shown["focus"]
    assert owner(remote("continuity", "clear", "focus", "--yes", root=work)) == 0
    assert "moved 1 file(s)" in capsys.readouterr().out
    assert store.read_focus() is not None and store.read_focus().body == ""  # type: ignore[union-attr]
    assert owner(remote("continuity", "restore", "--yes", root=work)) == 0
    assert "restored 1 file(s)" in capsys.readouterr().out
    assert "billing" in store.read_focus().body  # type: ignore[union-attr]

    out = tmp_path / "exported" / ".specwire"
    assert owner(remote("state", "export", "--to", str(out), root=work)) == 0
    # focus, the plan, ACTIVE, the article
    assert "exported 4 file(s)" in capsys.readouterr().out
    assert file_documents(out) == database_documents(volume)
    # A file-backed bundle continues from the export.
    on_files = ContinuityStore(StoreLayout(out, "demo"), proof_mode="off", now=Clock())
    assert on_files.active_plan_id() == plan.id
    assert WikiStore(StoreLayout(out, "demo")).get("billing") is not None
    # Again: the same texts are there, nothing to write; a changed file is never overwritten.
    assert owner(remote("state", "export", "--to", str(out), root=work)) == 0
    assert "exported 0 file(s)" in capsys.readouterr().out
    (out / "state" / "demo" / "focus.md").write_text("edited by hand\n", encoding="utf-8")
    assert owner(remote("state", "export", "--to", str(out), root=work)) == 2
    assert "exists with other content" in capsys.readouterr().err
    assert not work.exists()  # the owner's commands wrote nothing under --root


@pytest.mark.parametrize(
    "key", ["state/demo/../../../escaped.md", "/tmp/absolute.md", "state//demo/x.md", "./x.md"]
)
def test_state_export_refuses_a_row_whose_path_leaves_the_folder_and_writes_nothing(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """A row the runtime never writes (someone with the database's credentials put it there)
    must not steer the export outside ``--to``, nor leave a half-written export behind."""
    work = tmp_path / "work"
    layout = StoreLayout.for_cwd(work, "demo")
    volume = volume_on(shared_pool(database), layout.root, tenant=DEFAULT_TENANT)
    ContinuityStore(layout, proof_mode="off", now=Clock(), log=Logs(), volume=volume).write_focus(
        "a focus"
    )
    hostile = key.replace("/tmp/", f"{tmp_path}/")
    with shared_pool(database).connection() as conn:
        conn.execute(
            "INSERT INTO state_documents (tenant, spec, path, body) VALUES (%s, 'demo', %s, 'x')",
            (DEFAULT_TENANT, hostile),
        )
    out = tmp_path / "exported" / ".specwire"
    assert owner(remote("state", "export", "--to", str(out), root=work)) == 2
    err = capsys.readouterr().err
    assert hostile in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "exported").exists()
    assert not (tmp_path / "escaped.md").exists() and not (tmp_path / "absolute.md").exists()


def test_state_export_without_the_database_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".specwire" / "state" / "demo").mkdir(parents=True)
    code = owner(["state", "export", "--to", str(tmp_path / "x"), "--root", str(tmp_path)])
    assert code == 2
    assert "pass --backend postgres" in capsys.readouterr().err


def test_migrate_moves_the_state_documents_both_ways_and_a_second_run_copies_nothing(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from specwire.runtime.facts.store import FactStore

    source = tmp_path / "files"
    layout = StoreLayout.for_cwd(source, "demo")
    clock = Clock()
    store = ContinuityStore(layout, proof_mode="off", now=clock, log=Logs())
    store.write_focus("move to the database")
    plan, _ = store.create_plan("Move", ["copy", "check"])
    store.write_goal("Every document moved", target=1)
    store.clear("goals")
    WikiStore(layout, now=clock).write(
        ArticleDraft("moving", "Moving", "Both ways."), expected_version=None
    )
    layout.facts_db.parent.mkdir(parents=True, exist_ok=True)
    facts = FactStore.open(layout.facts_db)
    facts.remember("the state moves with the facts")
    facts.close()
    # A session summary ``memory.sessionRecall`` recalls from (one document on both backends).
    summary = layout.root / "sessions-index" / "demo" / "sess_0123456789abcdef.json"
    summary.parent.mkdir(parents=True)
    summary.write_text('{"outcome": "moved", "sessionId": "sess_0123456789abcdef"}\n')
    before = {k: v for k, v in file_documents(layout.root).items() if not k.startswith("facts/")}

    def migrate(*argv: str) -> tuple[int, dict[str, Any]]:
        code = owner(
            [
                "migrate",
                *argv,
                "--root",
                str(source),
                "--spec",
                "demo",
                "--yes",
                "--dsn",
                "$STATE_DATABASE_URL",
                "--json",
            ]
        )
        out, err = capsys.readouterr()
        return code, json.loads(out) if out.strip() else {"error": err}

    code, first = migrate("--from", "file", "--to", "postgres")
    assert code == 0, first
    assert first["state"]["copied"] == len(before) == 6
    volume = volume_on(shared_pool(database), layout.root, tenant=DEFAULT_TENANT)
    assert database_documents(volume) == before
    code, again = migrate("--from", "file", "--to", "postgres")
    assert code == 0 and again["state"] == {**first["state"], "copied": 0, "alreadyThere": 6}

    back = tmp_path / "back"
    code, returned = migrate("--from", "postgres", "--to", "file", "--to-root", str(back))
    assert code == 0 and returned["state"]["copied"] == 6
    restored = file_documents(back / ".specwire")
    assert {k: v for k, v in restored.items() if not k.startswith("facts/")} == before
    assert ContinuityStore(StoreLayout.for_cwd(back, "demo")).active_plan_id() == plan.id


def test_erase_redacts_the_state_documents_in_the_database(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    layout = StoreLayout.for_cwd(work, "demo")
    layout.root.mkdir(parents=True)  # the agent ran here (its session logs live here)
    volume = volume_on(shared_pool(database), layout.root, tenant=DEFAULT_TENANT)
    store = ContinuityStore(layout, proof_mode="off", now=Clock(), log=Logs(), volume=volume)
    store.write_focus("call Orvald Bremer about the invoices")
    store.create_plan("Orvald Bremer invoices", ["ask Orvald Bremer for the ledger"])
    store.write_goal("Orvald Bremer signs off", target=1)
    WikiStore(layout, now=Clock(), volume=volume).write(
        ArticleDraft("orvald-bremer", "Orvald Bremer", "Our contact at Bremer & Co."),
        expected_version=None,
    )
    kept = store.create_plan("Unrelated", ["stays"])[0]

    code = owner(
        [
            "--root",
            str(work),
            "erase",
            "--subject",
            "Orvald Bremer",
            "--postgres",
            "STATE_DATABASE_URL",
            "--yes",
            "--json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, out
    assert "4 state document(s)" in err  # stdout holds the JSON receipt alone
    assert json.loads(out)["tiers"]["postgres"]["stateDocumentsRedacted"] == 4
    texts = database_documents(volume)
    assert not any(b"Orvald" in text or "orvald" in key.lower() for key, text in texts.items())
    # The plan's file was renamed (its slug held the subject) and still reads as plan-0001.
    assert any(key.startswith("state/demo/plans/plan-0001-") for key in texts)
    assert store.get_plan(kept.id).title == "Unrelated"
    assert store.get_plan("plan-0001").steps[0].text != "ask Orvald Bremer for the ledger"
