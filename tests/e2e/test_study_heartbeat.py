"""End to end: ``learning.study.on_heartbeat: true`` on a channel or managed bundle ticks a
heartbeat in the running host (``$SPECWIRE_HEARTBEAT_S``, here 1 s) that runs a study pass of
the spec's sources into its wiki, off the turn path, while turns are answered; the host stops it
when it stops (stdin closed: exit 0, promptly). On managed the tick studies for each tenant the
process has served, in that tenant's workspace and wiki."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from serving_support import build_bundle, clean_env

LEARNING = """\
memory:
  embedder: mock/deterministic
  wiki: {recallK: 4}
learning:
  domain: Acme billing
  sources: [docs/invoices.md]
  study: {on_heartbeat: true}
"""
CHANNEL = (
    """\
name: beat-channel
target: channel
agent: {model: scripted, instructions: You help the team.}
channels:
  webhook: {token: $BEAT_WEBHOOK_TOKEN}
routing: {sessionKey: thread}
"""
    + LEARNING
)
MANAGED = (
    """\
name: beat-managed
target: managed
agent: {model: scripted, instructions: You help the guests.}
tenants:
  - id: acme
  - id: globex
"""
    + LEARNING
)
INVOICES = "# Invoices\n\nInvoices are issued on the first and due within 30 days.\n"


class Host:
    """A bundle's console adapter, fed lines on stdin, its stderr read as it comes."""

    def __init__(self, agent: Path, workdir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(agent), "console"],
            cwd=workdir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(HOME=str(workdir / "home"), SPECWIRE_HEARTBEAT_S="1"),
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def say(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def wait_for(self, text: str, timeout_s: float = 120.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = next((line for line in list(self.lines) if text in line), None)
            if found is not None:
                return found
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} on stderr:\n{''.join(self.lines)}")

    def close(self) -> tuple[int, str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=120)
        self._reader.join(timeout=10)
        return code, self.process.stdout.read()


def _bundle(tmp_path: Path, text: str) -> tuple[Path, Path]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    return agent, workdir


def test_a_channel_bot_s_heartbeat_studies_its_sources_while_it_serves(tmp_path: Path) -> None:
    agent, workdir = _bundle(tmp_path, CHANNEL)
    assert "a study pass on each heartbeat tick" in (agent.parent / "README.md").read_text("utf-8")
    (workdir / "docs").mkdir()
    (workdir / "docs" / "invoices.md").write_text(INVOICES, encoding="utf-8")
    host = Host(agent, workdir)
    try:
        host.wait_for("[heartbeat] beat-channel: a study pass every 1 s (SPECWIRE_HEARTBEAT_S)")
        created = host.wait_for("[heartbeat] beat-channel: study pass over 1 source(s)")
        assert "1 article(s) created" in created
        # The next ticks find nothing new; turns are answered meanwhile.
        host.wait_for("1 unchanged")
        host.say("t1: hello")
    finally:
        code, stdout = host.close()
    assert code == 0, "".join(host.lines)
    assert "t1: Noted: hello." in stdout
    articles = list((workdir / ".specwire" / "wiki" / "beat-channel").rglob("*.md"))
    assert any("Invoices are issued on the first" in a.read_text("utf-8") for a in articles)


def test_a_managed_host_s_heartbeat_studies_for_each_tenant_it_served(tmp_path: Path) -> None:
    agent, workdir = _bundle(tmp_path, MANAGED)
    tenants = workdir / ".specwire" / "tenants"
    docs = tenants / "acme" / "workspace" / "docs"
    docs.mkdir(parents=True)
    (docs / "invoices.md").write_text(INVOICES, encoding="utf-8")
    host = Host(agent, workdir)
    try:
        host.say("acme/s1: hello")
        created = host.wait_for("[heartbeat] beat-managed (tenant acme): study pass over 1 source")
        assert "1 article(s) created" in created
    finally:
        code, stdout = host.close()
    assert code == 0, "".join(host.lines)
    assert "acme/s1: Noted: hello." in stdout
    assert list((tenants / "acme" / "wiki" / "beat-managed").rglob("*.md"))
    # A tenant never served this run is not studied for.
    assert not any("(tenant globex)" in line for line in host.lines)
    assert not (tenants / "globex").exists()
