"""End to end: a built cli bundle with a read-write document binding. Before the owner creates
the document the bundle refuses to answer (in one line naming the command that creates it); then
a run saves it through ``memory_save`` with the document in its prompt, and after the owner's
freeze the agent's next save is a rejection that changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from test_support_bot_remembers import codegen, run_bundle, session_events

from specwire.runtime.owner.command import main as owner

SPEC = """\
name: doc-bundle
target: cli
agent:
  model: scripted
  instructions: You keep the workshop notes in the notes document.
memory:
  autoRecall: false
  documents:
    notes: {scope: document, id: workshop, access: read-write}
continuity: false
"""


def saves(events: list[dict[str, object]]) -> list[object]:
    return [
        json.loads(str(e["payload"]["text"]))  # type: ignore[index]
        for e in events
        if e["type"] == "tool_result" and e["payload"]["name"] == "memory_save"  # type: ignore[index]
    ]


def test_a_cli_bundle_saves_its_bound_document_and_respects_the_freeze(tmp_path: Path) -> None:
    spec = tmp_path / "doc-bundle.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"
    built = codegen("build", str(spec), "--out", str(out), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    [agent] = sorted(out.rglob("agent.py"))
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    def doc(*args: str) -> int:
        return owner(["--root", str(workdir), "--spec", "doc-bundle", "doc", *args, "--yes"])

    first = run_bundle(agent, workdir, "hello")
    assert first.returncode != 0 and "codegen memory doc create workshop" in first.stderr

    assert doc("create", "workshop", "--title", "Workshop", "--summary", "empty") == 0
    save = {"text": "Exercises run on Node.js 22.", "summary": "runtime"}
    second = run_bundle(agent, workdir, f"call memory_save {json.dumps(save)}")
    assert second.returncode == 0, second.stderr
    assert "[memory] document memory wired: notes (document workshop, read-write)" in second.stderr
    runs = session_events(workdir)
    assert saves(runs[-1]) == [{"status": "saved", "revision": "2", "bytes": 28}]
    [context] = [e["payload"] for e in runs[-1] if e["type"] == "context"]
    kinds = [block["kind"] for block in context["blocks"]]
    assert "document_memory" in kinds

    assert doc("freeze", "workshop") == 0
    third = run_bundle(agent, workdir, f"call memory_save {json.dumps(save)}")
    assert third.returncode == 0, third.stderr
    assert saves(session_events(workdir)[-1]) == [
        {"status": "rejected", "reason": "agent_writes_disabled"}
    ]
    stored = workdir / ".specwire" / "documents" / "doc-bundle" / "workshop.json"
    data = json.loads(stored.read_text(encoding="utf-8"))
    assert (data["text"], data["agentWrites"], data["revision"]) == (save["text"], "disabled", "3")
