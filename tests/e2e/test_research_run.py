"""End to end: a built research bundle fans out, fetches within its origins, and reports.

Three branches run at once (their session logs overlap in time) against real local HTTP
servers: one creates a plan, fetches a page and proves the step with that fetch; one remembers a
fact (which the synthesis recalls) and fetches; one tries a disallowed origin and a redirect to
one, both refused. ``report.md`` names every branch, the fetched sources, the fact and the proof.
A deadline that passes mid-run (a slow page) gives a partial report and exit status 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from serving_support import build_bundle

FACT = "the self-hosted agent memory market is 3B USD"
PAGE = "<html><head><title>Market</title></head><body><p>Vendors: 12.</p></body></html>"


@contextmanager
def site(delay_s: float = 0.0, redirect_to: str = "") -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            hits.append(self.path)
            if self.path == "/out":
                self.send_response(302)
                self.send_header("location", redirect_to + "/stolen")
                self.end_headers()
                return
            time.sleep(3.0 if self.path == "/slow" else delay_s)
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def fetch(url: str) -> str:
    return "call fetch " + json.dumps({"url": url})


def spec_text(origin: str, goal_parts: list[str], max_ms: int) -> str:
    goal = "\n\n".join(goal_parts)
    indented = "\n".join(f"  {line}" if line else "" for line in goal.splitlines())
    return (
        "name: market\ntarget: research\n"
        "agent:\n  model: scripted\n  instructions: You research markets.\n"
        f"goal: |\n{indented}\n"
        f"branchingFactor: {len(goal_parts)}\nmaxDurationMs: {max_ms}\n"
        f"retrieve:\n  allowedOrigins: [{origin}]\n"
        "memory:\n  recallK: 5\ncontinuity: true\n"
    )


def run(tmp_path: Path, spec: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    path = tmp_path / "market.yaml"
    path.write_text(spec, encoding="utf-8")
    agent = build_bundle(path, tmp_path / "out")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, str(agent)],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    return done, work


def session_events(work: Path) -> dict[str, list[dict[str, Any]]]:
    found = {}
    for path in sorted((work / ".specwire" / "sessions").glob("sess_*.jsonl")):
        found[path.stem] = [json.loads(line) for line in path.read_text().splitlines()]
    return found


def report_of(done: subprocess.CompletedProcess[str]) -> str:
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("report: ")]
    return Path(line.removeprefix("report: ")).read_text(encoding="utf-8")


def test_branches_run_concurrently_fetch_prove_and_report(tmp_path: Path) -> None:
    with site() as (elsewhere, stolen), site(delay_s=0.4, redirect_to=elsewhere) as (origin, hits):
        parts = [
            f"steps:\nplan: Sources: read the market page\n{fetch(origin + '/page')}\nprove 1",
            f"steps:\nremember: {FACT}\n{fetch(origin + '/about')}",
            f"steps:\n{fetch(elsewhere + '/x')}\n{fetch(origin + '/out')}",
        ]
        done, work = run(tmp_path, spec_text(origin, parts, 60_000))
    assert done.returncode == 0, done.stderr
    assert stolen == [] and sorted(hits) == ["/about", "/out", "/page"]
    found = session_events(work)
    branches = {sid: events for sid, events in found.items() if "branch" in events[0]["payload"]}
    assert len(branches) == 3
    spans = [
        (datetime.fromisoformat(e[0]["at"]), datetime.fromisoformat(e[-1]["at"]))
        for e in branches.values()
    ]
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # all overlap
    results = [
        e["payload"]["text"]
        for events in branches.values()
        for e in events
        if e["type"] == "tool_result"
    ]
    assert any("is not an allowed origin" in text for text in results)
    assert any("redirected to" in text and "not" in text for text in results)

    report = report_of(done)
    assert "- status: **complete**" in report
    for sid in branches:
        assert f"session `{sid}`" in report
    assert f"- {origin}/page (HTTP 200" in report and f"- {origin}/about (HTTP 200" in report
    assert (
        "/out (HTTP" not in report and elsewhere not in report.split("## Sources")[1].split("##")[0]
    )
    assert "read the market page — proven by fetch `tu_" in report
    assert FACT in report  # the fact the branch remembered, in the facts used
    [synthesis] = [
        events for events in found.values() if events[0]["payload"].get("phase") == "synthesis"
    ]
    recalled = [e["payload"]["lines"] for e in synthesis if e["type"] == "recall"]
    assert any(FACT in line for lines in recalled for line in lines)


def test_a_deadline_that_passes_mid_run_gives_a_partial_report_and_status_3(
    tmp_path: Path,
) -> None:
    with site() as (origin, _):
        parts = [f"steps:\n{fetch(origin + '/slow')}\nprove 1", "remember: quick note"]
        done, _ = run(tmp_path, spec_text(origin, parts, 1_500))
    assert done.returncode == 3, done.stderr
    report = report_of(done)
    assert "- status: **partial**" in report
    assert "not written: the deadline passed" in report
    assert "research: partial" in done.stdout


def test_the_facts_used_show_their_text(tmp_path: Path) -> None:
    """The report's "Facts used" lists each fact's text (it listed a remembered fact's id with
    the tool's whole reply, and left recalled facts out)."""
    with site() as (origin, _):
        first, _work = run(
            tmp_path, spec_text(origin, [f"remember: {FACT}", "list vendors"], 60_000)
        )
        second, _work = run(tmp_path, spec_text(origin, ["recall: market", "list vendors"], 60_000))
    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    used = report_of(first).split("## Facts used\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    [remembered] = used
    assert remembered.startswith(f"- {FACT} (branch 1/2: remembered as `mem_")
    used = report_of(second).split("## Facts used\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert used == [f"- {FACT} (branch 1/2: recalled)"]
