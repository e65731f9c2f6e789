"""Six secrets in the environment; a cli, a channel and a managed bundle run with a ``$MODEL_ID``
model, a person typing the values, and ``bash`` echoing them: no value is written to any file.

Every file under the test's folder (the built bundles, the working directories with their
``.specwire/`` state, the home folder) is read back byte for byte and searched for each value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DB_PASSWORD = "s3cr3t-pa55word"
SECRETS = {
    "MODEL_ID": "scripted/model-9c1e77aa",
    "SLACK_BOT_TOKEN": "xoxb-2222-3333-aaaabbbbcccc",
    "SLACK_SIGNING_SECRET": "8f14e45fceea167a5a36dedd4bea2543",
    "OPENAI_API_KEY": "sk-proj-Zq8L0ExampleValue77",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "DATABASE_URL": f"postgres://app:{DB_PASSWORD}@db.internal:5432/app",
}

SPECS = {
    "cli": """\
name: secrets-cli
target: cli
agent:
  model: $MODEL_ID
  instructions: Help the operator.
tools: [read, write, ls, bash]
memory:
  autoCapture: true
""",
    "channel": """\
name: secrets-channel
target: channel
agent:
  model: $MODEL_ID
  instructions: Help the team.
tools: [read, write, bash]
channels:
  slack:
    botToken: $SLACK_BOT_TOKEN
    signingSecret: $SLACK_SIGNING_SECRET
routing:
  sessionKey: thread
memory:
  autoCapture: true
""",
    "managed": """\
name: secrets-managed
target: managed
agent:
  model: $MODEL_ID
  instructions: Help each tenant.
tools: [read, write, ls]
tenants:
  - id: acme
memory:
  autoCapture: true
continuity:
  proof: require
""",
}


def hostile_messages(with_bash: bool) -> list[str]:
    values = list(SECRETS.values()) + [DB_PASSWORD]
    messages = [f"remember: the slack token is {SECRETS['SLACK_BOT_TOKEN']}"]
    messages += [f"focus: rotate {SECRETS['OPENAI_API_KEY']} and {DB_PASSWORD}"]
    messages += [f"plan: Rotate {SECRETS['AWS_SECRET_ACCESS_KEY']}: revoke it; issue a new one"]
    messages += ["call write " + json.dumps({"path": "notes.txt", "content": "\n".join(values)})]
    if with_bash:
        echo = " ".join(f'"${name}"' for name in SECRETS)
        messages += [
            "call bash " + json.dumps({"command": f"echo {echo}; env"}),
            "call bash " + json.dumps({"command": f"echo {SECRETS['OPENAI_API_KEY']}"}),
        ]
    messages += [f"recall: {SECRETS['SLACK_BOT_TOKEN']}", "what did I ask you to remember?"]
    return messages


def build(tmp_path: Path, target: str) -> Path:
    spec = tmp_path / f"{target}.yaml"
    spec.write_text(SPECS[target], encoding="utf-8")
    out = tmp_path / "bundles"
    built = subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", "build", str(spec), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    return out / f"secrets-{target}" / "agent.py"


def run(agent: Path, work: Path, home: Path, messages: list[str]) -> None:
    argv = [sys.executable, str(agent)]
    for message in messages:
        argv += ["--message", message]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env.update(SECRETS, HOME=str(home))
    done = subprocess.run(
        argv,
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    for value in [*SECRETS.values(), DB_PASSWORD]:
        assert value not in done.stderr


def test_no_secret_value_reaches_any_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for target in SPECS:
        agent = build(tmp_path, target)
        work = tmp_path / f"work-{target}"
        work.mkdir()
        messages = hostile_messages(with_bash=target != "managed")
        if target == "channel":
            messages = [f"t1: {m}" for m in messages]
        elif target == "managed":
            messages = [f"acme/s1: {m}" for m in messages]
        run(agent, work, home, messages)
        # Twice: the second run recalls the facts and resumes from the handoff.
        run(agent, work, home, messages[-1:])

    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    logs = [p for p in files if p.suffix == ".jsonl"]
    assert {p.relative_to(tmp_path).parts[0] for p in logs} == {f"work-{t}" for t in SPECS}
    assert any(p.suffix == ".sqlite3" for p in files)
    assert any(p.name == "handoff.md" for p in files)
    for path in files:
        data = path.read_bytes()
        for name, value in [*SECRETS.items(), ("DATABASE_URL password", DB_PASSWORD)]:
            assert value.encode() not in data, f"{name} written to {path.relative_to(tmp_path)}"
    everything = b"".join(p.read_bytes() for p in logs)
    assert b"$SLACK_BOT_TOKEN" in everything and b"$MODEL_ID" in everything
