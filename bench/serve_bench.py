"""Managed turns per second through the official openai client, against a bare endpoint.

    python bench/serve_bench.py [--requests N] [--concurrency 1,8]

Builds ``examples/managed-concierge.yaml``, starts ``agent.py serve`` (scripted model, memory
wired per turn, fenced per tenant) and, as the floor, a bare Starlette endpoint on uvicorn that
parses the same request and returns a fixed ``chat.completion`` — the same ASGI stack with no
agent behind it. Both run as subprocesses on 127.0.0.1; the same openai client drives both at
each concurrency, one session per client thread, four plain messages to one ``remember:``.

Prints requests/s, p50/p95 latency, the ratio to the floor, and where a managed turn's time
goes, from the ``Server-Timing`` header the service sends: memory wiring (``wire``), the loop
with its recall, model and tools (``turn``), and the rest (HTTP, ASGI, JSON, thread hand-off).
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-bench-0123456789abcdef0123"
MODEL = "managed-concierge"


def bare_app() -> object:
    """The floor: the same stack, parse the request, answer a fixed completion."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from specwire.runtime.hosts.http import openai_wire as wire
    from specwire.runtime.hosts.http.common import parse_model, read_body

    async def completions(request: Request) -> JSONResponse:
        body = parse_model(await read_body(request, 1 << 20), wire.ChatCompletionRequest)
        text = f"Noted: {wire.turn_text(body)}."
        return JSONResponse(wire.completion(wire.completion_id(), MODEL, text, None))

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def serve_bare(port: int) -> None:
    import uvicorn

    uvicorn.run(bare_app(), host="127.0.0.1", port=port, log_level="warning", access_log=False)  # type: ignore[arg-type]


@contextmanager
def started(argv: list[str], cwd: Path, env: dict[str, str]) -> Iterator[str]:
    process = subprocess.Popen(argv, cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    url = None
    for line in process.stderr:
        if "listening on " in line:
            url = line.rsplit("listening on ", 1)[1].strip()
            break
    if url is None:
        process.kill()
        raise SystemExit(f"{argv[1]} did not start")
    drain = threading.Thread(target=process.stderr.read, daemon=True)
    drain.start()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def bare_server(env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "--bare-server", str(port)], cwd=ROOT, env=env
    )
    import httpx

    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            probe = {"model": MODEL, "messages": [{"role": "user", "content": "ping"}]}
            httpx.post(url + "/v1/chat/completions", json=probe, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def drive(url: str, requests: int, concurrency: int, run: str) -> dict[str, object]:
    from openai import OpenAI

    client = OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0, timeout=120)
    latencies: list[float] = []
    phases: dict[str, list[float]] = {"wire": [], "turn": []}
    lock = threading.Lock()

    def one(n: int) -> None:
        session = f"{run}-{n % concurrency}"
        text = f"remember: bench fact {n}" if n % 5 == 4 else f"note number {n} about the lobby"
        start = time.perf_counter()
        raw = client.chat.completions.with_raw_response.create(
            model=MODEL,
            messages=[{"role": "user", "content": text}],
            extra_headers={"X-Session-Id": session},
        )
        raw.parse()
        elapsed = (time.perf_counter() - start) * 1000
        timing = raw.headers.get("server-timing", "")
        with lock:
            latencies.append(elapsed)
            for part in filter(None, (item.strip() for item in timing.split(","))):
                name, _, dur = part.partition(";dur=")
                if name in phases:
                    phases[name].append(float(dur))

    for n in range(min(requests, 5)):  # warm up: imports, first wiring, connections
        one(n)
    latencies.clear()
    phases = {"wire": [], "turn": []}
    started_at = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, range(requests)))
    wall = time.perf_counter() - started_at
    return {"rps": requests / wall, "latencies": latencies, "phases": phases}


def pct(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100)[q - 1] if len(samples) > 1 else samples[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", default="1,8")
    parser.add_argument("--bare-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server is not None:
        serve_bare(args.bare_server)
        return 0
    try:
        levels = [int(level) for level in args.concurrency.split(",")]
    except ValueError:
        parser.error(f"--concurrency {args.concurrency}: a comma-separated list of numbers")
    if args.requests < 10 or any(level < 1 for level in levels):
        parser.error("--requests must be >= 10 and every concurrency >= 1")

    work = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "specwire.emitters.command",
            "build",
            "examples/managed-concierge.yaml",
        ]
        + ["--out", str(work / "out")],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    [agent] = sorted((work / "out").rglob("agent.py"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["SPECWIRE_TENANT_KEY_TENANT_ACME"] = KEY
    env["PYTHONPATH"] = str(ROOT / ".typing")
    print(f"managed turns vs a bare endpoint · {args.requests} requests per run · {work}")
    print(f"{'run':<26}{'req/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'× floor p50':>13}")
    argv = [sys.executable, str(agent), "serve", "--port", "0"]
    with started(argv, work, env) as agent_url, bare_server(env) as bare_url:
        for level in levels:
            floor = drive(bare_url, args.requests, level, f"bare{level}")
            managed = drive(agent_url, args.requests, level, f"c{level}")
            floor_p50 = pct(floor["latencies"], 50)  # type: ignore[arg-type]
            for name, result in (("bare endpoint", floor), ("managed turn", managed)):
                samples: list[float] = result["latencies"]  # type: ignore[assignment]
                p50 = pct(samples, 50)
                print(
                    f"{name + f' (c={level})':<26}{result['rps']:>9.0f}{p50:>9.2f}"
                    f"{pct(samples, 95):>9.2f}{p50 / floor_p50:>12.1f}×"
                )
            phases: dict[str, list[float]] = managed["phases"]  # type: ignore[assignment]
            total = statistics.mean(managed["latencies"])  # type: ignore[arg-type]
            wire_ms = statistics.mean(phases["wire"]) if phases["wire"] else 0.0
            turn_ms = statistics.mean(phases["turn"]) if phases["turn"] else 0.0
            rest = total - wire_ms - turn_ms
            print(
                f"  where a managed turn's time goes (mean {total:.2f} ms): wiring {wire_ms:.2f} · "
                f"loop+recall+tools {turn_ms:.2f} · HTTP/ASGI/queue {rest:.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
