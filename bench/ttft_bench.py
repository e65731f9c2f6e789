"""Time to first token through the whole stack, beside the model's own first token.

    python bench/ttft_bench.py [--runs N] [--first-delay S] [--interval S] [--words N]

A fake OpenAI-compatible provider (``tests/support/fake_streams.py``: a real HTTP server on
127.0.0.1 streaming chat-completion chunks word by word, ``--interval`` seconds apart, after
``--first-delay``) stands in for the model; the bundles reach it through the official SDK
(``SPECWIRE_MODEL=openai-compatible/fake``, ``OPENAI_BASE_URL``). Every instant is
``time.monotonic()``, which is one clock for every process on the machine.

- **managed**: ``examples/managed-concierge.yaml`` built and served (``agent.py serve``); each
  run sends one ``stream: true`` request (a new session) over raw HTTP and notes when the first
  content delta arrives.
- **cli**: ``examples/cli-plain.yaml`` built and run as a person runs it: a REPL on
  pseudo-terminals (stdin and stdout on one, echo off; stderr, where the ``> `` prompt goes, on
  another). Each run starts a fresh bundle, waits for its prompt, writes a message and Enter and
  notes when the reply's first byte reaches the terminal; then the same for a second message
  (``cli 1st message``: a session's first, which pays the SDK's first request; ``cli next``).
- **cli --message**: the one-shot ``agent.py --message …``, timed from the process's start, so
  its ``stack`` and ``added`` include the interpreter's start and the imports (a different
  figure from the REPL's: what a script calling the bundle waits for).

- **sdk**, the floor: the official ``openai`` client streaming from the fake in this process.

Per target, medians and p95 over ``--runs`` (after one warm-up run):

- ``model``: the fake's own first token: its request's arrival → its first token sent;
- ``stack``: the client's request (or the process start) → the first token the client sees;
- ``added``: ``stack`` − ``model``: everything the bundle adds before the first token (wiring,
  recall, the session log, the SDK's connection, the SSE hop);
- ``before``: the client's start → the fake's request arrival (``added`` − ``relay``): the
  bundle's work before the model call, and the hops to it;
- ``relay``: the fake's first token sent → the client sees it (the streaming path alone).

Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.fake_streams import FakeStreamProvider, StreamReply  # noqa: E402

KEY = "sk-bench-0123456789abcdef0123"
MANAGED = "managed-concierge"
MESSAGE = "tell me a story"
PROMPT = b"> "


@dataclass(frozen=True)
class Run:
    model: float  # the fake's arrival → first token
    stack: float  # the client's start → first token seen
    relay: float  # the fake's first token → first token seen

    @property
    def added(self) -> float:
        return self.stack - self.model

    @property
    def before(self) -> float:
        """The client's start → the fake's request arrival: the bundle's work before the
        model call (and the hops to it)."""
        return self.added - self.relay


class TimedProvider(FakeStreamProvider):
    """The fake, noting when each request arrived."""

    def __init__(self, replies: list[StreamReply]) -> None:
        super().__init__("openai", replies)
        self.arrivals: list[float] = []

    def _take(self, record):  # type: ignore[no-untyped-def]
        self.arrivals.append(time.monotonic())
        return super()._take(record)


@contextmanager
def fake_provider(reply: StreamReply) -> Iterator[TimedProvider]:
    provider = TimedProvider([reply])
    thread = threading.Thread(target=provider.server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        provider.server.shutdown()
        provider.server.server_close()


def build(spec: str, out: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "specwire.emitters.command",
            "build",
            str(ROOT / "examples" / spec),
            "--out",
            str(out),
        ],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    [agent] = sorted(out.rglob("agent.py"))
    return agent


def bundle_env(fake: TimedProvider) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SPECWIRE_")}
    env.update(
        SPECWIRE_MODEL="openai-compatible/fake",
        OPENAI_BASE_URL=f"{fake.url}/v1",
        OPENAI_API_KEY="sk-fake-provider",
        SPECWIRE_TENANT_KEY_TENANT_ACME=KEY,
    )
    return env


class NotStreamed(Exception):
    """The bundle asked the fake for a whole completion, not a stream."""


def measured(fake: TimedProvider, before: int, started: float, seen: float) -> Run:
    record = fake.records[before]
    arrived = fake.arrivals[before]
    # The fake notes a token's time once it has written it: a fast client can read the token
    # before the note is taken.
    deadline = time.monotonic() + 2
    while record.first_token_at is None and time.monotonic() < deadline:
        time.sleep(0.001)
    if record.first_token_at is None:
        raise NotStreamed
    return Run(
        model=record.first_token_at - arrived,
        stack=seen - started,
        relay=seen - record.first_token_at,
    )


def managed_runs(fake: TimedProvider, workdir: Path, runs: int) -> list[Run]:
    import httpx

    agent = build(f"{MANAGED}.yaml", workdir / "managed-out")
    process = subprocess.Popen(
        [sys.executable, str(agent), "serve", "--host", "127.0.0.1", "--port", "0"],
        cwd=workdir,
        env=bundle_env(fake),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    url = None
    for line in process.stderr:
        if "listening on " in line:
            url = line.rsplit("listening on ", 1)[1].strip()
            break
    if url is None:
        process.kill()
        raise SystemExit("the managed bundle did not start")
    threading.Thread(target=lambda: process.stderr.read(), daemon=True).start()  # type: ignore[union-attr]
    results: list[Run] = []
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            for index in range(runs + 1):
                before = len(fake.records)
                body = {
                    "model": MANAGED,
                    "messages": [{"role": "user", "content": MESSAGE}],
                    "stream": True,
                }
                headers = {"authorization": f"Bearer {KEY}", "x-session-id": f"bench-{index}"}
                started = time.monotonic()
                seen = None
                with http.stream(
                    "POST", "/v1/chat/completions", json=body, headers=headers
                ) as response:
                    for line in response.iter_lines():
                        if seen is None and line.startswith("data: {"):
                            delta = json.loads(line[6:])["choices"]
                            if delta and delta[0]["delta"].get("content"):
                                seen = time.monotonic()
                if seen is None:
                    raise SystemExit("the managed bundle streamed no content")
                if index:  # the first run warms up
                    results.append(measured(fake, before, started, seen))
    finally:
        process.terminate()
        process.wait(timeout=60)
    return results


def cli_oneshot_runs(fake: TimedProvider, agent: Path, workdir: Path, runs: int) -> list[Run]:
    """``agent.py --message``, timed from the process's start (interpreter and imports included)."""
    results: list[Run] = []
    for index in range(runs + 1):
        before = len(fake.records)
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, str(agent), "--message", MESSAGE],
            cwd=workdir,
            env=bundle_env(fake),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        first = process.stdout.read(1)
        seen = time.monotonic()
        process.stdout.read()
        process.wait(timeout=60)
        if not first:
            raise SystemExit("the cli bundle printed nothing")
        if index:
            results.append(measured(fake, before, started, seen))
    return results


class Terminal:
    """A cli bundle on terminals, as a person runs it: stdin and stdout on one pseudo-terminal
    (echo off, so what it shows after a message is the reply), stderr on another (where the
    ``> `` prompt and the banner go)."""

    def __init__(self, agent: Path, workdir: Path, env: dict[str, str]) -> None:
        self.io, io_child = pty.openpty()
        self.err, err_child = pty.openpty()
        attrs = termios.tcgetattr(io_child)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(io_child, termios.TCSANOW, attrs)
        self.process = subprocess.Popen(
            [sys.executable, str(agent)],
            cwd=workdir,
            env=env,
            stdin=io_child,
            stdout=io_child,
            stderr=err_child,
            start_new_session=True,
        )
        os.close(io_child)
        os.close(err_child)
        self.shown = {self.io: b"", self.err: b""}

    def _read(self, timeout: float) -> list[int]:
        """Read what is ready on either terminal within ``timeout``; the ones that had bytes."""
        ready, _, _ = select.select([self.io, self.err], [], [], timeout)
        for fd in ready:
            try:
                self.shown[fd] += os.read(fd, 65536)
            except OSError:  # the bundle exited and closed its side
                raise SystemExit("the cli bundle exited before answering") from None
        return ready

    def wait_for_prompt(self) -> None:
        deadline = time.monotonic() + 60
        while not self.shown[self.err].endswith(PROMPT):
            if time.monotonic() > deadline:
                raise SystemExit(f"the cli bundle showed no prompt: {self.shown!r}")
            self._read(1.0)
        while self._read(0):  # the last reply's tail, if any
            pass
        self.shown = {self.io: b"", self.err: b""}

    def send(self, message: str) -> tuple[float, float]:
        """Write ``message`` and Enter; when it was written and when the reply's first byte
        reached the terminal."""
        started = time.monotonic()
        os.write(self.io, message.encode() + b"\n")
        deadline = started + 60
        while not self.shown[self.io]:
            if time.monotonic() > deadline:
                raise SystemExit("the cli bundle printed nothing")
            self._read(1.0)
        return started, time.monotonic()

    def close(self) -> None:
        with suppress(OSError):
            os.write(self.io, b"/exit\n")
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.io)
        os.close(self.err)


def cli_repl_runs(
    fake: TimedProvider, agent: Path, workdir: Path, runs: int
) -> tuple[list[Run], list[Run]]:
    """A fresh REPL per run: the first message of its session, then a second one; each timed
    from writing it (the prompt was showing) to the reply's first byte on the terminal."""
    first: list[Run] = []
    later: list[Run] = []
    for index in range(runs + 1):
        terminal = Terminal(agent, workdir, bundle_env(fake))
        try:
            for results in (first, later):
                terminal.wait_for_prompt()
                before = len(fake.records)
                started, seen = terminal.send(MESSAGE)
                if index:  # the first run warms up
                    results.append(measured(fake, before, started, seen))
            terminal.wait_for_prompt()
        finally:
            terminal.close()
    return first, later


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered) * 1000:8.1f} {p95 * 1000:8.1f}"


def direct_runs(fake: TimedProvider, runs: int) -> list[Run]:
    """The floor: the official openai client streaming from the fake itself, in this process."""
    import openai

    client = openai.OpenAI(base_url=f"{fake.url}/v1", api_key="sk-fake-provider", max_retries=0)
    results: list[Run] = []
    for index in range(runs + 1):
        before = len(fake.records)
        started = time.monotonic()
        seen = None
        stream = client.chat.completions.create(
            model="fake", messages=[{"role": "user", "content": MESSAGE}], stream=True
        )
        for chunk in stream:
            if seen is None and chunk.choices and chunk.choices[0].delta.content:
                seen = time.monotonic()
        if seen is not None and index:
            results.append(measured(fake, before, started, seen))
    return results


def report(target: str, results: list[Run]) -> None:
    model, stack = ms([r.model for r in results]), ms([r.stack for r in results])
    added, relay = ms([r.added for r in results]), ms([r.relay for r in results])
    before = ms([r.before for r in results])
    print(
        f"{target:15} model {model}   stack {stack}   added {added}   "
        f"before {before}   relay {relay}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--first-delay", type=float, default=0.2, help="the fake's first token (s)")
    parser.add_argument("--interval", type=float, default=0.02, help="between tokens (s)")
    parser.add_argument("--words", type=int, default=40, help="words in the answer")
    parser.add_argument("--targets", default="managed,cli")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.first_delay < 0 or args.interval < 0 or args.words < 1:
        parser.error("--runs and --words must be >= 1, delays >= 0")
    targets = [name.strip() for name in args.targets.split(",") if name.strip()]
    unknown = sorted(set(targets) - {"managed", "cli"})
    if unknown:
        parser.error(f"--targets: unknown {', '.join(unknown)} (managed, cli)")
    text = " ".join(f"word{n}" for n in range(args.words))
    reply = StreamReply(text=text, interval=args.interval, first_delay=args.first_delay)
    print(
        f"fake provider: first token after {args.first_delay * 1000:.0f} ms, then a word every "
        f"{args.interval * 1000:.0f} ms ({args.words} words); {args.runs} runs per target "
        "after a warm-up\n"
        f"{'':15} {'':5} {'median':>8} {'p95':>8}   (ms)"
    )
    with tempfile.TemporaryDirectory() as tmp, fake_provider(reply) as fake:
        workdir = Path(tmp)
        report("sdk", direct_runs(fake, args.runs))
        if "managed" in targets:
            report("managed", managed_runs(fake, workdir, args.runs))
        if "cli" in targets:
            agent = build("cli-plain.yaml", workdir / "cli-out")
            try:
                first, later = cli_repl_runs(fake, agent, workdir, args.runs)
                report("cli 1st message", first)
                report("cli next", later)
                report("cli --message", cli_oneshot_runs(fake, agent, workdir, args.runs))
            except NotStreamed:
                print("cli      not streamed: this cli host asks the model for whole answers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
