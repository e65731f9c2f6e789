"""``codegen memory doc …``: the owner's verbs on document memory (file backend; the sessions
tests run them on PostgreSQL too): one line and exit 2 for every refusal, nothing changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.owner.command import main

SPEC = "doc-owner"


def run(root: Path, *args: str, spec: bool = True) -> int:
    return main(["--root", str(root), *(["--spec", SPEC] if spec else []), *args])


def out_json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def test_create_list_show_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.md"
    text.write_text("Node 22\n", encoding="utf-8")
    assert (
        run(tmp_path, "doc", "create", "b-notes", "--title", "B", "--text-file", str(text), "--yes")
        == 0
    )
    assert run(tmp_path, "doc", "create", "a-plan", "--title", "A", "--summary", "s", "--yes") == 0
    capsys.readouterr()
    # The spec is found once its documents exist: --spec is not needed any more.
    assert run(tmp_path, "--json", "doc", "list", spec=False) == 0
    listed = out_json(capsys)["documents"]
    assert [d["id"] for d in listed] == ["a-plan", "b-notes"]  # newest first
    assert all("text" not in d for d in listed)
    assert run(tmp_path, "--json", "doc", "show", "b-notes") == 0
    shown = out_json(capsys)
    assert (shown["text"], shown["revision"], shown["writer"]) == (
        "Node 22\n",
        "1",
        {"kind": "owner"},
    )
    out = tmp_path / "export"
    assert run(tmp_path, "doc", "export", "--out", str(out)) == 0
    assert sorted(p.name for p in out.iterdir()) == ["a-plan.json", "b-notes.json"]
    assert json.loads((out / "a-plan.json").read_text("utf-8"))["summary"] == "s"
    capsys.readouterr()
    assert run(tmp_path, "doc", "export") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a-plan", "b-notes"]


def test_changes_are_conditional_on_the_revision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, "doc", "create", "plan", "--title", "Plan", "--yes") == 0
    assert run(tmp_path, "doc", "edit", "plan", "--summary", "one", "--if-match", "1", "--yes") == 0
    capsys.readouterr()
    assert run(tmp_path, "doc", "edit", "plan", "--title", "New", "--if-match", "1", "--yes") == 2
    assert "is at revision 2, not the one given" in capsys.readouterr().err
    assert run(tmp_path, "doc", "freeze", "plan", "--if-match", "1", "--yes") == 2
    assert run(tmp_path, "doc", "remove", "plan", "--if-match", "1", "--yes") == 2
    assert run(tmp_path, "doc", "freeze", "plan", "--yes") == 0  # on the revision it read
    capsys.readouterr()
    assert run(tmp_path, "--json", "doc", "show", "plan") == 0
    shown = out_json(capsys)
    assert (shown["revision"], shown["agentWrites"], shown["summary"], shown["title"]) == (
        "3",
        "disabled",
        "one",
        "Plan",
    )


def test_refusals_are_one_line_and_change_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, "doc", "list", spec=False) == 2
    assert "pass --spec NAME" in capsys.readouterr().err
    assert run(tmp_path, "doc", "create", "plan", "--yes") == 2
    assert "needs --title" in capsys.readouterr().err
    assert run(tmp_path, "doc", "create", "Plan", "--title", "T", "--yes") == 2
    assert "lower-case" in capsys.readouterr().err
    assert run(tmp_path, "doc", "show") == 2
    assert run(tmp_path, "doc", "list", "plan") == 2
    assert not (tmp_path / ".specwire").exists()
    assert run(tmp_path, "doc", "create", "plan", "--title", "T") == 1  # no terminal to ask on
    assert not (tmp_path / ".specwire" / "documents").exists()
    assert run(tmp_path, "doc", "create", "plan", "--title", "T", "--yes") == 0
    assert run(tmp_path, "doc", "create", "plan", "--title", "T", "--yes") == 2
    assert run(tmp_path, "doc", "remove", "plan", "--yes") == 0
    capsys.readouterr()
    assert run(tmp_path, "doc", "create", "plan", "--title", "T", "--yes") == 2
    assert "stays reserved" in capsys.readouterr().err
    assert run(tmp_path, "--backend", "http", "--url", "http://127.0.0.1:9", "doc", "list") == 2
    err = capsys.readouterr().err
    assert "file and postgres backends" in err and len(err.strip().splitlines()) == 1


def test_a_tenants_documents_live_under_its_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECWIRE_TENANTS_ROOT", str(tmp_path / "tenants"))
    assert run(tmp_path, "--tenant", "acme", "doc", "create", "plan", "--title", "T", "--yes") == 0
    assert (tmp_path / "tenants" / "acme" / "documents" / SPEC / "plan.json").is_file()
    assert run(tmp_path, "--tenant", "other", "doc", "show", "plan") == 2
