"""Built bundles served over HTTP on 127.0.0.1, and a fake Slack Web API to answer them."""

from __future__ import annotations

import hashlib
import hmac
import itertools
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


def run_bundle(agent: Path, workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python agent.py ARGS`` in ``workdir`` (``run_in``)."""
    return run_in([sys.executable, str(agent), *args], workdir)


def run_in(argv: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` run in ``workdir`` with a private HOME, no input, output captured."""
    return subprocess.run(
        argv,
        cwd=workdir,
        capture_output=True,
        text=True,
        env=clean_env(HOME=str(workdir / "home")),
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=300,  # a start or a call that hangs fails here; nothing below is timed
    )


def memory_server_entry(store_agent: Path, store_root: Path) -> str:
    """An ``mcp_servers`` entry's body (4-space lines) serving ``store_agent``'s memory through
    ``codegen memory mcp --allow-writes``: the stand-in for Thredz. It serves another agent's
    memory (its .specwire/, outside the client's workspace) from a virtual environment the
    sandbox does not grant, so it runs unconfined."""
    args = ["-m", "specwire.runtime.owner", "--root", str(store_root), "mcp"]
    args += ["--bundle", str(store_agent), "--allow-writes"]
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    return (
        "    transport: stdio\n"
        f"    command: {json.dumps(sys.executable)}\n"
        f"    args: {json.dumps(args)}\n"
        f"    env: {json.dumps(env)}\n"
        "    sandbox: false\n"
    )


def messages(*texts: str) -> list[str]:
    """``--message`` arguments, one per text."""
    return [argument for text in texts for argument in ("--message", text)]


def tool_results(folder: Path) -> list[dict[str, object]]:
    """Every ``tool_result`` payload of the session logs under ``folder``, log by log."""
    results = []
    for log in sorted(folder.rglob("*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("type") == "tool_result":
                results.append(event["payload"])
    return results


def processes_running(marker: str) -> list[str]:
    """The command lines of this machine's processes that hold ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(cmdline)
    return found


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


def rows(database: str, query: str, *args: Any) -> list[tuple[Any, ...]]:
    """The rows ``query`` returns from the PostgreSQL database at ``database`` (a URI)."""
    import psycopg

    with psycopg.connect(database) as conn:
        return [tuple(row) for row in conn.execute(query, args).fetchall()]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# A streamed Slack reply ends with a status line in italics until its final text
# (runtime.hosts.http.slack_stream): "_writing…_", "_running Recall…_".
STILL_WRITING = "…_"


@dataclass
class FakeSlack:
    """The Web API methods the bot uses, on 127.0.0.1. Every ``chat.postMessage`` is recorded
    in ``posts``; a ``chat.update`` replaces its post's ``text`` (``shown`` keeps every text the
    message had, in order) and a ``chat.delete`` marks it ``deleted``. ``calls`` records each
    request as (method, monotonic time, status); ``rate_limit(method, retry_after_s)`` answers
    the next call of ``method`` with HTTP 429; ``drop(method, stored=True)`` carries out the
    next call of ``method`` and then closes the connection unanswered (a post Slack stored whose
    answer was lost; ``stored=False``: lost before Slack carried it out).
    ``conversations.replies`` reads a thread back, ``auth.test`` names the bot ``UBOT``."""

    url: str
    posts: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    calls: list[tuple[str, float, int]] = field(default_factory=list)
    limited: dict[str, list[int]] = field(default_factory=dict)
    dropped: dict[str, list[bool]] = field(default_factory=dict)

    def drop(self, method: str, *, stored: bool) -> None:
        self.dropped.setdefault(method, []).append(stored)

    def rate_limit(self, method: str, retry_after_s: int) -> None:
        self.limited.setdefault(method, []).append(retry_after_s)

    def wait_for_posts(self, count: int, timeout_s: float = 60.0) -> list[dict[str, Any]]:
        """The posts once there are ``count`` and none is still being written."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not (
            len(self.posts) >= count
            and not any(str(post["text"]).endswith(STILL_WRITING) for post in self.posts)
        ):
            time.sleep(0.05)
        return list(self.posts)


@contextmanager
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack(url="")
    lock = threading.Lock()
    stamps = itertools.count(1)

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
                waits = fake.limited.get(method)
                if waits:
                    retry_after = waits.pop(0)
                    fake.calls.append((method, time.monotonic(), 429))
                    self._answer(429, {"ok": False, "error": "ratelimited"}, retry_after)
                    return
                drops = fake.dropped.get(method)
                dropped = bool(drops)
                if not drops or drops.pop(0):
                    answer = self._apply(method, args)
                fake.calls.append((method, time.monotonic(), 0 if dropped else 200))
            if dropped:
                self.close_connection = True
                return  # no answer: the client sees the connection end
            self._answer(200, answer)

        def _apply(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
            if method == "chat.postMessage":
                ts = f"9000.{next(stamps):06d}"
                fake.posts.append({"method": method, "ts": ts, "shown": [args.get("text")], **args})
                return {"ok": True, "ts": ts, "channel": args.get("channel")}
            if method == "chat.update":
                found = [post for post in fake.posts if post["ts"] == args.get("ts")]
                if not found:
                    return {"ok": False, "error": "message_not_found"}
                found[0]["text"] = args.get("text")
                found[0]["shown"].append(args.get("text"))
                return {"ok": True, "ts": args.get("ts"), "channel": args.get("channel")}
            if method == "chat.delete":
                found = [post for post in fake.posts if post["ts"] == args.get("ts")]
                if not found:
                    return {"ok": False, "error": "message_not_found"}
                found[0]["deleted"] = True
                return {"ok": True, "ts": args.get("ts"), "channel": args.get("channel")}
            if method == "auth.test":
                return {"ok": True, "user_id": "UBOT", "bot_id": "BFAKE"}
            if method == "conversations.replies":
                thread = str(args.get("ts"))
                messages = [
                    {"type": "message", "user": "UBOT", "bot_id": "BFAKE", **post}
                    for post in fake.posts
                    if post.get("channel") == args.get("channel")
                    and thread in (post.get("thread_ts"), post["ts"])
                    and not post.get("deleted")
                ]
                return {"ok": True, "messages": messages, "has_more": False}
            return {"ok": True}

        def _answer(self, status: int, answer: dict[str, Any], retry_after: int = 0) -> None:
            body = json.dumps(answer)
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            if retry_after:
                self.send_header("retry-after", str(retry_after))
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


class MemoryServer:
    """``specwire-memory-server`` for one tenant, in its own process on 127.0.0.1 (``args``:
    more of its flags, e.g. ``--opencomputer TABLE``)."""

    def __init__(self, root: Path, tenant: str, args: tuple[str, ...] = ()) -> None:
        import secrets

        self.token = secrets.token_urlsafe(24)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        root.mkdir(parents=True, exist_ok=True)
        variable = "SPECWIRE_MEMORY_TOKEN_" + tenant.upper().replace("-", "_")
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "specwire.runtime.hosts.http.memory_server"),
                *("--root", str(root), "--tenant", tenant, "--port", str(self.port)),
                *args,
            ],
            env=clean_env(**{variable: self.token}),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                assert self.process.stderr is not None
                raise AssertionError(
                    f"the memory server did not start: {self.process.stderr.read()}"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
