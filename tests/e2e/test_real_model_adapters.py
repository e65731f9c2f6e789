"""``codegen run`` with real model ids: an OpenAI-compatible server (a fake on 127.0.0.1) drives
a tool call end to end, and a missing key stops the agent in one line with exit 2.

A smoke test against the real APIs runs only when a real key is in the environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.models.fake_provider import Reply, openai_completion, serve

SPEC = """\
name: adapter-demo
target: cli
agent:
  model: {model}
  instructions: You answer questions about the files in this directory.
tools: [read, ls]
continuity: false
"""
PROVIDER_ENV = ("ANTHROPIC_", "OPENAI_", "SPECWIRE_")


def run_spec(
    tmp_path: Path, model: str, env: dict[str, str], *messages: str
) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "agent.yaml"
    spec.write_text(SPEC.format(model=model), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "notes.txt").write_text("hello\n", encoding="utf-8")
    argv = [sys.executable, "-m", "specwire.emitters.command", "run", str(spec)]
    for message in messages:
        argv += ["--message", message]
    environ = {k: v for k, v in os.environ.items() if not k.startswith(PROVIDER_ENV)}
    environ.update(HOME=str(tmp_path), **env)
    return subprocess.run(
        argv,
        cwd=work,
        capture_output=True,
        text=True,
        env=environ,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def events(work: Path) -> list[dict[str, Any]]:
    [log] = sorted((work / ".specwire" / "sessions").glob("sess_*.jsonl"))
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_an_openai_compatible_server_drives_a_tool_call_end_to_end(tmp_path: Path) -> None:
    def call_ls(body: dict[str, Any]) -> dict[str, Any]:
        [name] = [t["function"]["name"] for t in body["tools"] if t["function"]["name"] == "ls"]
        return openai_completion(None, [("call_abc", name, {})])

    final = openai_completion(
        "There is one file: notes.txt.",
        usage={"prompt_tokens": 200, "completion_tokens": 9, "total_tokens": 209},
    )
    with serve([Reply(call_ls), Reply(final)]) as fake:
        done = run_spec(
            tmp_path,
            "openai-compatible/test-model",
            {"OPENAI_BASE_URL": fake.url + "/v1", "SPECWIRE_MODEL_MAX_RETRIES": "0"},
            "what files are here?",
        )
    assert done.returncode == 0, done.stderr
    assert "There is one file: notes.txt." in done.stdout
    first, second = fake.bodies()
    assert first["model"] == "test-model"
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][-1] == {"role": "user", "content": "what files are here?"}
    log = events(tmp_path / "work")
    [use] = [e["payload"] for e in log if e["type"] == "tool_use"]
    [result] = [e["payload"] for e in log if e["type"] == "tool_result"]
    assert use["name"] == "ls" and use["id"].startswith("tu_")  # the loop's id, not call_abc
    assert result["toolUseId"] == use["id"]
    # The next request carries the loop's id in both the call and its result.
    assistant, tool = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == use["id"]
    assert tool["role"] == "tool" and tool["tool_call_id"] == use["id"]
    assert "notes.txt" in tool["content"]
    [answer] = [e["payload"] for e in log if e["type"] == "assistant_message"]
    assert answer["text"] == "There is one file: notes.txt."
    # Both model calls of the turn, summed (the fake reports 12+3 then 200+9, 4 cached).
    assert answer["usage"] == {"input": 212, "output": 12, "cached": 4}


@pytest.mark.parametrize(
    ("model", "env", "needle"),
    [
        ("claude-sonnet-4-6", {}, "ANTHROPIC_API_KEY"),
        ("openai/gpt-4o", {}, "OPENAI_API_KEY"),
        ("openai-compatible/test-model", {}, "OPENAI_BASE_URL"),
    ],
)
def test_a_missing_key_stops_the_agent_in_one_line(
    tmp_path: Path, model: str, env: dict[str, str], needle: str
) -> None:
    done = run_spec(tmp_path, model, env, "hello")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{needle} (the model {model})" in lines[0]
    assert done.stdout == ""


REAL = [
    ("claude-haiku-4-5", "ANTHROPIC_API_KEY"),
    ("gpt-4o-mini", "OPENAI_API_KEY"),
]


@pytest.mark.parametrize(("model", "key"), REAL)
def test_smoke_against_the_real_api(tmp_path: Path, model: str, key: str) -> None:
    if not os.environ.get(key):
        pytest.skip(f"{key} is not set")
    model = os.environ.get(f"SPECWIRE_SMOKE_{key.split('_')[0]}_MODEL", model)
    done = run_spec(
        tmp_path, model, {key: os.environ[key]}, "Use the ls tool, then name one file here."
    )
    assert done.returncode == 0, done.stderr
    log = events(tmp_path / "work")
    [answer] = [e["payload"] for e in log if e["type"] == "assistant_message"]
    assert answer["text"] and answer["usage"]["input"] > 0


def test_a_failing_provider_ends_the_session_in_one_line(tmp_path: Path) -> None:
    failure = {"error": {"message": "overloaded", "type": "server_error", "code": None}}
    with serve([Reply(failure, status=503)]) as fake:
        done = run_spec(
            tmp_path,
            "openai-compatible/test-model",
            {"OPENAI_BASE_URL": fake.url + "/v1", "SPECWIRE_MODEL_MAX_RETRIES": "1"},
            "hello",
        )
    assert len(fake.requests) == 2  # one retry, then give up
    assert done.returncode == 1, (done.stdout, done.stderr)  # the session failed mid-way
    assert "Traceback" not in done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith("adapter-demo: ")]
    assert "503" in line and "overloaded" in line and "try again later" in line
    log = events(tmp_path / "work")
    assert log[-1]["type"] == "session_end" and log[-1]["payload"]["stopReason"] == "abort"
