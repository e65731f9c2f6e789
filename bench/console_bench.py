"""The memory console on a store of a million facts: the first page and a search answer, timed
(p50/p95) against the owner's commands on the same store in the same run.

    python bench/console_bench.py [--facts 1000000] [--cache DIR] [--queries 40]

The store is built once in ``--cache`` (default ``~/.cache/specwire-bench/console``) from
recall_bench's deterministic corpus (``build_store``), then reused. Timed, each after one
warm-up request:

- the console's first page (``GET /``: the newest 50 live facts, keyset), a deep page (the
  cursor 200 pages down), a tag-filtered first page, and a search (``GET /search?q=…``, with
  each hit's reasons), every request through Starlette's TestClient, logged in, HTML rendered;
- the baseline: ``codegen memory list --json`` (every live fact) and ``codegen memory search
  Q`` (the owner's commands, in process, stdout discarded), as an owner without the console
  would see them.

Goal (issue 25): first page and a search answer within 300 ms on 1M facts.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_bench import Latency, build_queries, generate_corpus  # noqa: E402

from specwire.runtime.core.ids import new_memory_id  # noqa: E402
from specwire.runtime.core.paths import SPECWIRE_DIRNAME, StoreLayout  # noqa: E402
from specwire.runtime.facts.store import FactStore  # noqa: E402
from specwire.runtime.facts.text import document_terms, normalize_text  # noqa: E402

SPEC = "bench"
SEED = 11
CHUNK = 20_000
TOKEN = "console-bench-owner-token-0123"
BASE = "http://127.0.0.1:8765"
GOAL_MS = 300.0


def build_store(cache: Path, count: int) -> Path:
    """The folder holding ``.specwire`` with ``count`` facts (built once, then reused).

    The store is created and migrated by ``FactStore.open``; the rows go in as hybrid_bench's
    ``bulk_load`` writes them (the columns ``remember`` fills, FTS5 kept by the schema's
    trigger), 20,000 per transaction. ``FactStore.import_facts`` was the first choice; it took
    4.1 s for 2,000 facts here and did not finish 20,000 in 10 minutes (it looks each fact up
    before writing it), so a million would not build in a session."""
    root = cache / f"console-{count}"
    layout = StoreLayout((root / SPECWIRE_DIRNAME).resolve(), SPEC)
    done = root / "built"
    if done.exists() and done.read_text() == str(count):
        return root
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{layout.facts_db}{suffix}")
    layout.facts_db.parent.mkdir(parents=True, exist_ok=True)
    layout.state_dir.mkdir(parents=True, exist_ok=True)
    with FactStore.open(layout.facts_db) as store:
        store.remember("console bench seed fact")  # creates and migrates the file
    corpus = generate_corpus(count, SEED)
    start_ms = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000)
    started = time.perf_counter()
    conn = sqlite3.connect(layout.facts_db)
    try:
        for first in range(0, count, CHUNK):
            rows = [
                (
                    new_memory_id(),
                    corpus[n].text,
                    normalize_text(corpus[n].text),
                    document_terms(corpus[n].text, (f"t{n % 50}",)),
                    json.dumps([f"t{n % 50}"]),
                    start_ms + n * 1000,
                )
                for n in range(first, min(count, first + CHUNK))
            ]
            with conn:
                conn.executemany(
                    "INSERT INTO facts (id, text, norm_text, terms, tags, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
            _progress(f"written {min(count, first + CHUNK):,} / {count:,}")
    finally:
        conn.close()
    _progress(f"built in {time.perf_counter() - started:.0f} s\n")
    done.write_text(str(count))
    return root


def _progress(line: str) -> None:
    sys.stderr.write(f"\r{line}")
    sys.stderr.flush()


def timed(call: Callable[[str], object], inputs: Sequence[str]) -> Latency:
    call(inputs[0])  # warm
    gc.collect()
    gc.disable()
    try:
        samples = []
        for value in inputs:
            began = time.perf_counter_ns()
            call(value)
            samples.append(time.perf_counter_ns() - began)
    finally:
        gc.enable()
    return Latency.of(samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/specwire-bench/console")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--baseline-runs", type=int, default=3)
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="time the console only (the baseline takes minutes)",
    )
    args = parser.parse_args(argv)
    if args.facts < 1000 or args.queries < 2:
        parser.error("--facts at least 1000, --queries at least 2")
    root = build_store(args.cache, args.facts)

    from starlette.testclient import TestClient

    from specwire.runtime.console.app import console_app
    from specwire.runtime.console.auth import ConsoleAuth
    from specwire.runtime.console.data import BackendOptions, ConsoleData
    from specwire.runtime.owner import command as owner_command
    from specwire.runtime.owner.selection import select

    corpus = generate_corpus(args.facts, SEED)
    queries = build_queries(corpus, args.facts, args.queries, 0, SEED).hits
    opened = time.perf_counter()
    data = ConsoleData(select(root, SPEC, None, None), BackendOptions(embedder="none"))
    data.open()
    client = TestClient(console_app(data, ConsoleAuth(TOKEN)), base_url=BASE)
    client.post("/login", data={"token": TOKEN}, headers={"origin": BASE})
    first_search = time.perf_counter()
    client.get("/search", params={"q": queries[0]})
    index_s = time.perf_counter() - first_search
    open_s = first_search - opened

    def get(path: str, **params: str) -> Callable[[str], object]:
        def call(_: str) -> object:
            answer = client.get(path, params=params)
            assert answer.status_code == 200, answer.text[:200]
            return answer

        return call

    deep_cursor = None
    for _ in range(200):
        page = data.page("live", _every(), tag=None, text=None, cursor=deep_cursor)
        deep_cursor = page.next_cursor
    repeat = [""] * args.queries
    first_page = timed(get("/"), repeat)
    deep_page = timed(get("/", after=deep_cursor or ""), repeat)
    tag_page = timed(get("/", tag="t7"), repeat)

    def search(query: str) -> object:
        answer = client.get("/search", params={"q": query})
        assert answer.status_code == 200
        return answer

    console_search = timed(search, queries)
    data.close()

    def owner(*verb: str) -> Callable[[str], object]:
        def call(query: str) -> object:
            argv = ["--root", str(root), "--spec", SPEC, *verb]
            argv = [query if part == "{q}" else part for part in argv]
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                return owner_command.main(argv)

        return call

    runs = max(2, args.baseline_runs)
    skipped = Latency(float("nan"), float("nan"), 0)
    owner_list = skipped if args.no_baseline else timed(owner("list", "--json"), repeat[:runs])
    owner_search = (
        skipped
        if args.no_baseline
        else timed(owner("search", "{q}", "--embedder", "none"), queries[:runs])
    )

    print(f"console bench: {args.facts:,} facts (file store), {args.queries} requests each")
    print(
        f"console start: store opened in {open_s * 1000:.0f} ms; "
        f"first search (builds or loads the BM25 index) {index_s * 1000:.0f} ms"
    )
    rows = [
        ("console first page (GET /)", first_page),
        ("console page 201 (keyset cursor)", deep_page),
        ("console first page, tag filter", tag_page),
        ("console search (GET /search)", console_search),
    ]
    if not args.no_baseline:
        rows += [
            ("baseline: codegen memory list --json", owner_list),
            ("baseline: codegen memory search", owner_search),
        ]
    for name, latency in rows:
        print(
            f"  {name:<40} p50 {latency.p50_ms:9.1f} ms  p95 {latency.p95_ms:9.1f} ms  "
            f"(n={latency.samples})"
        )
    if not args.no_baseline:
        print(
            f"  first page vs list:     {owner_list.p50_ms / first_page.p50_ms:,.0f}x faster (p50)"
        )
        print(
            "  console search vs search command: "
            f"{owner_search.p50_ms / console_search.p50_ms:,.1f}x faster (p50)"
        )
    ok = first_page.p95_ms <= GOAL_MS and console_search.p95_ms <= GOAL_MS
    print(f"  goal (first page and search p95 <= {GOAL_MS:.0f} ms): {'met' if ok else 'NOT met'}")
    return 0


def _every():  # type: ignore[no-untyped-def]
    from specwire.runtime.facts.providers.admin import EVERY_KEY

    return EVERY_KEY


if __name__ == "__main__":
    raise SystemExit(main())
