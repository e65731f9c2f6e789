"""Two channel hosts serving the same conversation take turns: one consistent session log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_two_hosts_on_one_conversation_keep_the_log_consistent(tmp_path: Path) -> None:
    out = tmp_path / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "specwire.emitters.command",
            "build",
            str(ROOT / "examples" / "channel-plain.yaml"),
        ]
        + ["--out", str(out)],
        check=True,
        capture_output=True,
    )
    [agent] = sorted(out.rglob("agent.py"))
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    hosts = []
    for host in ("a", "b"):
        argv = [sys.executable, str(agent)]
        for n in range(12):
            argv += ["--message", f"t1: message {host}{n}"]
        hosts.append(
            subprocess.Popen(
                argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    for process in hosts:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()

    [log] = sorted((workdir / ".specwire" / "sessions").glob("sess_*.jsonl"))
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    seqs = [event["seq"] for event in events]
    assert seqs == list(range(1, len(events) + 1))
    turns = [e["payload"]["turn"] for e in events if e["type"] == "user_message"]
    assert turns == list(range(1, 25))
    texts = {e["payload"]["text"] for e in events if e["type"] == "user_message"}
    assert len(texts) == 24
