"""Built bundles served over HTTP on 127.0.0.1, and a fake Slack Web API to answer them."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]


def build_bundle(spec: Path, out: Path) -> Path:
    """``codegen build SPEC --out OUT``; the built ``agent.py``."""
    built = subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", "build", str(spec), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert built.returncode == 0, built.stderr
    [agent] = sorted(out.rglob("agent.py"))
    return agent


def clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SPECWIRE_")}
    env.update(extra)
    return env


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    workdir: Path
    stderr: str = ""

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, **kwargs)


@contextmanager
def served(agent: Path, workdir: Path, env: dict[str, str]) -> Iterator[Served]:
    """``agent.py serve --port 0`` in ``workdir``; the URL is read from its banner."""
    workdir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, str(agent), "serve", "--host", "127.0.0.1", "--port", "0"],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines: list[str] = []
    url = None
    deadline = time.monotonic() + 60
    while url is None and time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "listening on " in line:
            url = line.rsplit("listening on ", 1)[1].strip()
    if url is None:
        process.kill()
        raise AssertionError("the bundle did not start:\n" + "".join(lines) + process.stderr.read())
    collected: list[str] = list(lines)
    reader = threading.Thread(target=lambda: collected.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    handle = Served(url, process, workdir)
    try:
        yield handle
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=10)
        handle.stderr = "".join(collected)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class FakeSlack:
    """The two Web API methods the bot uses, on 127.0.0.1; every post is recorded."""

    url: str
    posts: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)

    def wait_for_posts(self, count: int, timeout_s: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while len(self.posts) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return list(self.posts)


@contextmanager
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode("utf-8")
            if "json" in (self.headers.get("content-type") or ""):
                args = json.loads(raw or "{}")
            else:
                args = {key: values[0] for key, values in urllib.parse.parse_qs(raw).items()}
            method = self.path.rstrip("/").rsplit("/", 1)[-1]
            with lock:
                fake.tokens.append(self.headers.get("authorization", ""))
                if method == "chat.postMessage":
                    fake.posts.append({"method": method, **args})
            body = json.dumps(
                {"ok": True, "ts": f"{time.time():.6f}", "channel": args.get("channel")}
            )
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/api/"
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def slack_headers(secret: str, body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256)
    return {
        "content-type": "application/json",
        "x-slack-request-timestamp": ts,
        "x-slack-signature": "v0=" + digest.hexdigest(),
    }


def message_event(
    event_id: str,
    text: str,
    *,
    channel: str = "C100",
    user: str = "U200",
    ts: str,
    thread_ts: str | None = None,
    bot_id: str | None = None,
    bot_user: str = "UBOT",
    channel_type: str | None = None,
) -> bytes:
    event: dict[str, Any] = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": ts,
    }
    if channel_type is not None:
        event["channel_type"] = channel_type
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    if bot_id is not None:
        event["bot_id"] = bot_id
    envelope = {
        "type": "event_callback",
        "team_id": "T1",
        "event_id": event_id,
        "event": event,
        "authorizations": [{"user_id": bot_user, "is_bot": True}],
    }
    return json.dumps(envelope).encode()
