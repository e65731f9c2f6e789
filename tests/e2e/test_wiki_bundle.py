"""End to end: build the wiki example, write an article in one run, recall it in the next.

Offline with the scripted model: run 1 calls ``wiki_write`` (refused without sources, then
written with them) and logs a knowledge gap; run 2 is a fresh process whose session-start recall
block holds the article — found by meaning (``memory.embedder: hash/256``), as no word of the
question is in it — visible in its session log.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_support_bot_remembers import codegen, run_bundle, session_events

ROOT = Path(__file__).resolve().parents[2]

UNSOURCED = {
    "slug": "deploy-target",
    "title": "Deploy target",
    "body": "Production deploys go to the Kubernetes cluster prod-eu-1 through Argo CD.",
    "justification": "the user told us where production runs",
}
SOURCED = {**UNSOURCED, "body": UNSOURCED["body"] + "\n\n## Sources\n\n- the user, in chat\n"}


def test_the_wiki_bundle_writes_then_recalls_in_a_later_session(tmp_path: Path) -> None:
    out = tmp_path / "out"
    built = codegen("build", str(ROOT / "examples" / "cli-wiki.yaml"), "--out", str(out), cwd=ROOT)
    assert built.returncode == 0, built.stderr
    [agent] = sorted(out.rglob("agent.py"))
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    first = run_bundle(
        agent,
        workdir,
        f"call wiki_write {json.dumps(UNSOURCED)}",
        f"call wiki_write {json.dumps(SOURCED)}",
        'call log_knowledge_gap {"topic": "on-call rotation"}',
    )
    assert first.returncode == 0, first.stderr
    assert "[memory] wiki on — " in first.stderr
    [run1] = session_events(workdir)
    results = [e["payload"] for e in run1 if e["type"] == "tool_result"]
    assert [(r["name"], r["isError"]) for r in results] == [
        ("wiki_write", True),
        ("wiki_write", False),
        ("log_knowledge_gap", False),
    ]
    writes = [e["payload"] for e in run1 if e["type"] == "wiki_write"]
    assert writes == [{"slug": "deploy-target", "version": 1, "action": "write"}]
    article = workdir / ".specwire" / "wiki" / "cli-wiki" / "articles" / "deploy-target.md"
    assert "## Sources" in article.read_text(encoding="utf-8")
    goals = (workdir / ".specwire" / "state" / "cli-wiki" / "goals.yaml").read_text("utf-8")
    assert "[gap] on-call rotation" in goals

    # No word of the question is a word of the article ("deployment" is not "deploy", no
    # stemming): BM25 alone recalls nothing; the hash embedder relates the word fragments.
    second = run_bundle(agent, workdir, "any deployment targets?")
    assert second.returncode == 0, second.stderr
    _, run2 = session_events(workdir)
    [recall] = [e["payload"] for e in run2 if e["type"] == "recall"]
    assert recall["lines"][:1] == [
        "[wiki:deploy-target] Deploy target — Production deploys go to the Kubernetes cluster "
        "prod-eu-1 through Argo CD. ## Sources - the user, in chat"
    ]
    [context] = [e["payload"] for e in run2 if e["type"] == "context"]
    blocks = {block["kind"]: block["text"] for block in context["blocks"]}
    assert "[wiki:deploy-target]" in blocks["recalled_memory"]
