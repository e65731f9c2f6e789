"""End to end, over the wire: no malicious memory ever reaches a model request.

An agent (an OpenAI-compatible model: a fake server on 127.0.0.1 that records every request)
is asked to remember the whole injection corpus. Every malicious case is quarantined, and the
tool result says so without echoing it; benign look-alikes are remembered (false positives at
most 5%). Some malicious facts are also planted in the store as an older runtime without the
scanner would have left them. The next run recalls with auto-recall and the Recall tool, on
words from every case: no malicious text is in any request of that run, nor in any tool result
of the first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.facts.store import FactStore
from tests.runtime.models.fake_provider import Reply, openai_completion, serve
from tests.runtime.safety.injection_corpus import BENIGN, MALICIOUS

SPEC = """\
name: quarantine-demo
target: cli
agent:
  model: openai-compatible/test-model
  instructions: You keep the team's notes.
memory:
  recallK: 10
continuity: false
"""
PLANTED = MALICIOUS[::7]  # written by an "older runtime" that had no scanner


def run(tmp_path: Path, url: str, message: str) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "agent.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPECWIRE_"))}
    env.update(
        HOME=str(tmp_path),
        OPENAI_BASE_URL=url + "/v1",
        SPECWIRE_MODEL_MAX_RETRIES="0",
    )
    argv = [
        sys.executable,
        "-m",
        "specwire.emitters.command",
        "run",
        str(spec),
        "--message",
        message,
    ]
    return subprocess.run(
        argv,
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )


def calls(name: str, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    return openai_completion(
        None, [(f"call_{index}", name, tool_input) for index, tool_input in enumerate(inputs)]
    )


def encoded(text: str) -> str:
    """How ``text`` appears inside a JSON request body (as the SDK sends it)."""
    return json.dumps(text)[1:-1]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "tool"]


def without_own_words(body: dict[str, Any]) -> dict[str, Any]:
    """The request without what the model itself wrote: its tool calls (the Recall queries are
    words of every case) and the first line of a Recall result, which echoes the query."""
    messages = []
    for message in body["messages"]:
        message = {k: v for k, v in message.items() if k != "tool_calls"}
        if message.get("role") == "tool":
            message["content"] = str(message.get("content")).partition("\n")[2]
        messages.append(message)
    return {**body, "messages": messages}


def test_no_malicious_memory_reaches_a_model_request(tmp_path: Path) -> None:
    cases = [*MALICIOUS, *BENIGN]
    remember = calls("Remember", [{"text": text} for text in cases])
    with serve([Reply(remember), Reply(openai_completion("Noted."))]) as fake:
        first = run(tmp_path, fake.url, "Please remember these notes.")
        first_bodies = fake.bodies()
    assert first.returncode == 0, first.stderr
    results = tool_results(first_bodies[-1])
    assert len(results) == len(cases)
    verdicts = dict(zip(cases, results, strict=True))
    for text in MALICIOUS:
        assert "not remembered: quarantined (mem_" in verdicts[text], text
    false_positives = [text for text in BENIGN if "quarantined" in verdicts[text]]
    assert len(false_positives) / len(BENIGN) <= 0.05, false_positives
    for result in results:
        assert not any(encoded(text) in json.dumps(result)[1:-1] for text in MALICIOUS)

    layout = StoreLayout(tmp_path / "work" / ".specwire", "quarantine-demo")
    with FactStore.open(layout.facts_db, screen=None) as older_runtime:
        for text in PLANTED:
            older_runtime.remember(text)

    # Recall on words of every case: auto-recall (the first message) and the Recall tool.
    queries = [" ".join(text.split()[:6]) for text in cases]
    recall = calls("Recall", [{"query": query, "k": 10} for query in queries])
    with serve([Reply(recall), Reply(openai_completion("Here is what I know."))]) as fake:
        second = run(
            tmp_path, fake.url, "What do you know about instructions, prompts, keys and ssh?"
        )
        second_bodies = fake.bodies()
    assert second.returncode == 0, second.stderr
    wire = json.dumps([without_own_words(body) for body in second_bodies])
    leaked = [text for text in MALICIOUS if encoded(text) in wire]
    assert leaked == []
    recalled = "\n".join(tool_results(second_bodies[-1]))
    assert "The customer's billing plan is Enterprise." in recalled  # recall still works
    with FactStore.open(layout.facts_db) as store:
        held = store.quarantined()
    assert {item.text for item in held} >= set(MALICIOUS)
    assert {item.text for item in held if item.found_on == "read"} == set(PLANTED)
