"""A cli bundle streams: the first words are on stdout before the model has sent its last token,
and a Ctrl-C mid-answer stops that answer, keeps the session and its log whole.

The model is a local fake of each provider's streaming wire format (``tests.support.
fake_streams``) driven through the official SDKs; the bundle is built and run by ``codegen run``
in its own process, read through a pipe.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from tests.support.fake_streams import StreamReply, WireFormat, serve_stream, words

pytestmark = pytest.mark.e2e
pytest.importorskip("anthropic")
pytest.importorskip("openai")

# The fake providers' model ids are not real models: the escape hatch lets `check` pass them.
SPEC = """\
name: stream-demo
target: cli
allowUnlistedModels: true
agent:
  model: {model}
  instructions: You answer questions.
tools: [read, ls]
memory:
  recallK: 3
  autoCapture: true
  autoCaptureThreshold: 1
continuity: false
"""
LONG = " ".join(f"word{n}" for n in range(60)) + "."
PROVIDER_ENV = ("ANTHROPIC_", "OPENAI_", "SPECWIRE_")
WAIT_S = 60.0  # a generous bound on each step; nothing here is timed


def start_bundle(
    tmp_path: Path, wire: WireFormat, url: str, *messages: str
) -> subprocess.Popen[str]:
    model = "anthropic/claude-fake" if wire == "anthropic" else "openai/gpt-fake"
    spec = tmp_path / "agent.yaml"
    spec.write_text(SPEC.format(model=model), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith(PROVIDER_ENV)}
    environ.update(HOME=str(tmp_path), SPECWIRE_MODEL_MAX_RETRIES="0")
    if wire == "anthropic":
        environ.update(ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=url)
    else:
        environ.update(OPENAI_API_KEY="k", OPENAI_BASE_URL=url + "/v1")
    argv = [sys.executable, "-m", "specwire.emitters.command", "run", str(spec)]
    for message in messages:
        argv += ["--message", message]
    return subprocess.Popen(
        argv,
        cwd=work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    )


class Reader:
    """Everything a pipe delivers, collected by a thread; ``wait_for`` blocks until it shows."""

    def __init__(self, pipe: IO[str]) -> None:
        self.text = ""
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        while True:
            piece = pipe.read(1)
            if not piece:
                break
            with self._changed:
                self.text += piece
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, wanted: str) -> bool:
        with self._changed:
            return self._changed.wait_for(
                lambda: wanted in self.text or not self._thread.is_alive(), timeout=WAIT_S
            ) and (wanted in self.text)

    def finish(self) -> str:
        self._thread.join(timeout=WAIT_S)
        return self.text


def session_events(tmp_path: Path) -> list[dict[str, Any]]:
    [log] = sorted((tmp_path / "work" / ".specwire" / "sessions").glob("sess_*.jsonl"))
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_the_first_words_show_before_the_last_token_is_sent(
    tmp_path: Path, wire: WireFormat
) -> None:
    held = threading.Event()
    with serve_stream(wire, [StreamReply(text=LONG, hold_last=held)]) as fake:
        bundle = start_bundle(tmp_path, wire, fake.url, "tell me a long story")
        out, err = Reader(bundle.stdout), Reader(bundle.stderr)  # type: ignore[arg-type]
        try:
            assert out.wait_for("word0 word1 word2"), err.text
            record = fake.records[0]
            # the last token is held back: the words shown came while the answer was written
            assert record.deltas_sent < len(words(LONG)) and not record.finished
        finally:
            held.set()
        assert bundle.wait(timeout=WAIT_S) == 0, err.finish()
        stdout = out.finish()
    assert stdout == LONG + "\n"  # printed once, as an unstreamed reply is
    replies = [
        e["payload"]["text"] for e in session_events(tmp_path) if e["type"] == "assistant_message"
    ]
    assert replies == [LONG]


def _facts(tmp_path: Path) -> list[str]:
    found = sorted((tmp_path / "work" / ".specwire").rglob("facts.db"))
    texts: list[str] = []
    for db in found:
        with sqlite3.connect(db) as conn:
            texts += [row[0] for row in conn.execute("SELECT text FROM facts")]
    return texts


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_ctrl_c_mid_answer_stops_it_and_the_session_goes_on(
    tmp_path: Path, wire: WireFormat
) -> None:
    held = threading.Event()
    replies = [
        StreamReply(text=LONG, hold_last=held),
        StreamReply(text="The customer pays in EUR."),
    ]
    with serve_stream(wire, replies) as fake:
        bundle = start_bundle(
            tmp_path, wire, fake.url, "tell me a long story", "the customer pays in EUR"
        )
        out, err = Reader(bundle.stdout), Reader(bundle.stderr)  # type: ignore[arg-type]
        try:
            assert out.wait_for("word0 word1"), err.text
            bundle.send_signal(signal.SIGINT)  # Ctrl-C while the answer is being written
        finally:
            held.set()  # the next token reaches the sink, which stops the answer
        code = bundle.wait(timeout=WAIT_S)
        stderr = err.finish()
        stdout = out.finish()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert "[stopped: Ctrl-C]" in stderr
    assert stdout.endswith("The customer pays in EUR.\n")
    assert LONG not in stdout  # the first answer was cut off, not finished
    events = session_events(tmp_path)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "session_start" and kinds[-1] == "session_end"
    assert events[-1]["payload"]["stopReason"] == "exit"
    answers = [e["payload"] for e in events if e["type"] == "assistant_message"]
    assert [a["turn"] for a in answers] == [1, 2]  # each turn recorded once
    assert answers[0].get("cancelled") is True
    assert answers[1]["text"] == "The customer pays in EUR."
    facts = _facts(tmp_path)
    assert len(facts) == len(set(facts))  # nothing captured twice
    assert not any("word59" in fact for fact in facts)  # nothing from the unfinished answer
