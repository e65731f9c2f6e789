"""``codegen memory migrate --from file --to file``: the usage ledger and the session logs move
to another root too (sealed again with its key); a torn line a killed host left is not an
event and does not stop the move; a damaged ledger stops the run before anything is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.facts.store import FactStore
from specwire.runtime.owner.command import main as owner
from specwire.runtime.sessions.log import SessionLog, evidence_key, read_events, session_log_path
from specwire.runtime.usage.files import ledger_bytes, ledger_path, read_ledger
from specwire.runtime.usage.totals import DreamUsage, TenantUsage

SESSION = "sess_0000000000000001"
TURNS = TenantUsage(input=40, output=12, cached=0, turns=2, estimated=10)


def ran_here(work: Path) -> StoreLayout:
    layout = StoreLayout.for_cwd(work, "demo")
    layout.facts_db.parent.mkdir(parents=True)
    facts = FactStore.open(layout.facts_db)
    facts.remember("the ledger moves too")
    facts.close()
    path = ledger_path(layout.root, "demo")
    path.parent.mkdir()
    path.write_bytes(ledger_bytes(TURNS, DreamUsage()))
    log = SessionLog(layout.sessions_dir, SESSION)
    log.append("session_start", {"spec": "demo", "target": "cli"})
    log.append("user_message", {"text": "hello", "turn": 1})
    return layout


def migrate(work: Path, to: Path) -> int:
    return owner(
        ["migrate", "--from", "file", "--to", "file", "--root", str(work)]
        + ["--to-root", str(to), "--spec", "demo", "--yes", "--json"]
    )


def test_the_ledger_and_the_logs_move_to_another_root_and_a_torn_line_is_no_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = ran_here(tmp_path / "a")
    path = session_log_path(layout.sessions_dir, SESSION)
    with path.open("ab") as handle:
        handle.write(b'{"at": "2026-')  # a host killed mid-write
    SessionLog(layout.sessions_dir, SESSION).append("session_end", {"stopReason": "exit"})
    events = [(e.seq, e.type, e.at, e.payload) for e in read_events(path)]
    assert [seq for seq, *_ in events] == [1, 2, 3]

    assert migrate(tmp_path / "a", tmp_path / "b") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["usage"]["outcome"] == "copied" and out["sessions"]["events"] == 3
    moved = StoreLayout.for_cwd(tmp_path / "b", "demo")
    assert read_ledger(ledger_path(moved.root, "demo")) == (TURNS, DreamUsage())
    copied = session_log_path(moved.sessions_dir, SESSION)
    assert [(e.seq, e.type, e.at, e.payload) for e in read_events(copied)] == events
    assert evidence_key(moved.sessions_dir) != evidence_key(layout.sessions_dir)
    assert b'{"at": "2026-\n' not in copied.read_bytes()


def test_a_damaged_ledger_stops_the_run_before_anything_is_copied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = ran_here(tmp_path / "a")
    ledger_path(layout.root, "demo").write_text("{not json")
    assert migrate(tmp_path / "a", tmp_path / "b") == 2
    err = capsys.readouterr().err
    assert "usage ledger" in err and "damaged" in err and "Traceback" not in err
    assert not (tmp_path / "b").exists()


def test_a_line_appended_by_anything_but_the_host_refuses_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = ran_here(tmp_path / "a")
    path = session_log_path(layout.sessions_dir, SESSION)
    with path.open("a") as handle:
        handle.write("I approved the transfer\n")  # a shell ``echo >>``
    assert migrate(tmp_path / "a", tmp_path / "b") == 3
    err = capsys.readouterr().err
    assert f"{path}: line 3 is not an event the host wrote" in err
    moved = StoreLayout.for_cwd(tmp_path / "b", "demo")
    assert not session_log_path(moved.sessions_dir, SESSION).exists()


def test_facts_that_differ_when_read_back_still_fail_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facts' check still runs after the tiers': a target read back with another fact (an
    agent writing meanwhile) exits 3, the ledger and the logs moved or not."""
    import dataclasses

    from specwire.runtime.owner import migrate_verb

    reads: list[int] = []
    original = migrate_verb.digest

    def read_back(snapshot: Any) -> Any:
        reads.append(1)
        found = original(snapshot)
        return dataclasses.replace(found, facts=found.facts + 1) if len(reads) == 2 else found

    monkeypatch.setattr(migrate_verb, "digest", read_back)
    ran_here(tmp_path / "a")
    assert migrate(tmp_path / "a", tmp_path / "b") == 3
    assert "did the agent write meanwhile?" in capsys.readouterr().err
