"""`codegen memory migrate` between file stores: every fact, tombstone, link and held write
kept as it was; a second run copies 0; a copy cut short finishes; a target that is not a copy
of the source is refused with nothing written. (PostgreSQL: tests/e2e/test_migrate_on_postgres.)"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.facts.model import FactStatus
from specwire.runtime.facts.restoring import RestoreError, restore_order
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.command import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_seed import SPEC, seed_store  # noqa: E402

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def invoke(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def exported(run: Run, root: Path) -> list[str]:
    status, out, err = run("--root", str(root), "--spec", SPEC, "export")
    assert status == 0, err
    return sorted(out.splitlines())


def held(run: Run, root: Path) -> list[dict[str, object]]:
    status, out, err = run("--root", str(root), "--spec", SPEC, "--json", "list", "--quarantined")
    assert status == 0, err
    return sorted(json.loads(out), key=lambda record: str(record["id"]))


def migrate(run: Run, source: Path, target: Path, *more: str) -> tuple[int, str, str]:
    return run(
        "--root",
        str(source),
        "--json",
        "migrate",
        "--from",
        "file",
        "--to",
        "file",
        "--to-root",
        str(target),
        "--yes",
        *more,
    )


def test_a_file_store_moves_whole_into_a_folder_where_the_agent_never_ran(
    tmp_path: Path, run: Run
) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    seed_store(source, 120)
    assert not target.exists()
    status, out, err = migrate(run, source, target, "--batch", "37")
    assert status == 0, err
    outcome = json.loads(out)
    before = exported(run, source)
    assert outcome["copied"]["facts"] == len(before) > 120
    assert outcome["copied"]["held"] == len(held(run, source)) >= 2
    assert outcome["source"] == outcome["target"] and outcome["verified"] is True
    assert exported(run, target) == before
    assert held(run, target) == held(run, source)
    statuses = {json.loads(line)["status"] for line in before}
    assert statuses == {"live", "superseded", "forgotten", "expired"}
    found_on = {record["foundOn"] for record in held(run, target)}
    assert found_on == {"write", "read"}

    again, out, _ = run(
        "--root", str(source), "migrate", "--from", "file", "--to", "file", "--to-root",
        str(target),
    )  # fmt: skip
    assert again == 0 and out.startswith("copied 0 fact(s) and 0 held write(s)")
    assert "verified" in out


def test_the_checksum_is_the_sorted_exports_sha256(tmp_path: Path, run: Run) -> None:
    import hashlib

    seed_store(tmp_path / "a", 40)
    status, out, _ = migrate(run, tmp_path / "a", tmp_path / "b")
    assert status == 0
    lines = exported(run, tmp_path / "b")
    digest = hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()
    assert json.loads(out)["target"]["factsSha256"] == digest


def test_a_copy_cut_short_finishes_on_the_next_run(tmp_path: Path, run: Run) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    seed_store(source, 120)
    src = FactStore.open(StoreLayout(source / ".specwire", SPEC).facts_db)
    ordered = restore_order(src.list_facts())
    src.close()
    # What a run killed after its second batch of 50 leaves behind: two whole transactions.
    dst = FactStore.open(StoreLayout(target / ".specwire", SPEC).facts_db)
    for start in range(0, 100, 50):
        assert dst.restore_facts(ordered[start : start + 50]) == 50
    dst.close()
    status, out, err = migrate(run, source, target, "--batch", "50")
    assert status == 0, err
    outcome = json.loads(out)
    assert outcome["alreadyThere"]["facts"] == 100
    assert outcome["copied"]["facts"] == len(ordered) - 100
    assert exported(run, target) == exported(run, source)


def test_a_target_that_is_not_a_copy_of_the_source_is_refused(tmp_path: Path, run: Run) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    seed_store(source, 20)
    other = FactStore.open(StoreLayout(target / ".specwire", SPEC).facts_db)
    other.remember("a fact only the target has")
    other.close()
    status, out, err = migrate(run, source, target)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "already holds 1 fact(s) the source does not" in err
    assert len(exported(run, target)) == 1


def test_a_target_whose_copy_changed_since_is_refused(tmp_path: Path, run: Run) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    seed_store(source, 20)
    assert migrate(run, source, target)[0] == 0
    store = FactStore.open(StoreLayout(target / ".specwire", SPEC).facts_db)
    live = next(s for s in store.list_facts() if s.status == "live")
    store.forget_id(live.fact.id, reason="the agent forgot it in the new home")
    store.close()
    status, _, err = migrate(run, source, target)
    assert status == 2 and f"fact {live.fact.id} differs" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("--from", "http", "--to", "file", "--to-root", "x"), "--from http needs --from-url"),
        (("--from", "file", "--to", "http"), "--to http needs --to-url"),
        (
            (
                "--from",
                "file",
                "--to",
                "http",
                "--to-url",
                "http://127.0.0.1:9",
                "--to-token",
                "literal-token",
            ),
            "must be a $VAR reference",
        ),
        (("--from", "file", "--to", "file"), "name the target with --to-root"),
        (("--from", "file", "--to", "file", "--to-root", "."), "the same store"),
        (("--from", "file", "--to", "file", "--to-root", "x", "--batch", "0"), "--batch 0"),
    ],
)
def test_bad_migrations_are_one_line_and_exit_2(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], says: str
) -> None:
    seed_store(tmp_path, 5)
    monkeypatch.chdir(tmp_path)
    status, out, err = run("--root", str(tmp_path), "migrate", *argv, "--yes")
    assert status == 2 and out == "" and says in err and err.count("\n") == 1, err


def test_migrate_refuses_backend_and_asks_first_without_yes(tmp_path: Path, run: Run) -> None:
    seed_store(tmp_path / "a", 5)
    status, _, err = run(
        "--root", str(tmp_path / "a"), "--backend", "postgres", "migrate", "--from", "file",
        "--to", "file", "--to-root", str(tmp_path / "b"),
    )  # fmt: skip
    assert status == 2 and "not --backend" in err
    status, _, err = run(
        "--root", str(tmp_path / "a"), "migrate", "--from", "file", "--to", "file",
        "--to-root", str(tmp_path / "b"),
    )  # fmt: skip
    assert status == 1 and "pass --yes" in err
    assert not (tmp_path / "b" / ".specwire" / "facts" / f"{SPEC}.sqlite3").exists()


def _statuses(store_root: Path) -> list[FactStatus]:
    store = FactStore.open(StoreLayout(store_root / ".specwire", SPEC).facts_db)
    try:
        return store.list_facts()
    finally:
        store.close()


def test_restore_order_puts_each_fact_after_its_replacement(tmp_path: Path) -> None:
    seed_store(tmp_path, 60)
    statuses = _statuses(tmp_path)
    ordered = restore_order(list(reversed(statuses)))
    position = {status.fact.id: n for n, status in enumerate(ordered)}
    linked = [s for s in statuses if s.fact.superseded_by is not None]
    assert linked
    for status in linked:
        assert position[status.fact.superseded_by or ""] < position[status.fact.id]


def test_restore_order_refuses_a_dangling_link(tmp_path: Path) -> None:
    seed_store(tmp_path, 10)
    statuses = _statuses(tmp_path)
    linked = next(s for s in statuses if s.fact.superseded_by is not None)
    without_head = [s for s in statuses if s.fact.id != linked.fact.superseded_by]
    with pytest.raises(RestoreError, match="not among the facts"):
        restore_order(without_head)
