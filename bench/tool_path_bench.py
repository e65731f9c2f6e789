"""What routing the memory tools through the provider protocol costs on the embedded store.

A benchmark, not a test. Since issue 11 the ``Recall`` / ``Remember`` tools and auto-recall
speak ``FactProvider`` (``LocalFactProvider`` over ``FactStore`` for ``backend: file``). This
times the same recalls and writes, interleaved query by query in one process, through:

- ``store``:    ``FactStore.recall(q, 5)`` / ``FactStore.remember_if_new(text)`` (the old path);
- ``provider``: ``LocalFactProvider.recall`` / ``.retain(if_absent=True)`` (what the tools call);
- ``tool``:     the ``Recall`` / ``Remember`` tools' ``invoke`` (input validation, provider call,
  rendering the text the model reads).

Run from the repository root:

    .venv/bin/python bench/tool_path_bench.py                  # 100,000 facts
    .venv/bin/python bench/tool_path_bench.py --size 10000 --rounds 20
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_bench import build_queries, generate_corpus  # noqa: E402

from specwire.runtime.core.tool_types import ToolContext  # noqa: E402
from specwire.runtime.facts.model import NewFactItem  # noqa: E402
from specwire.runtime.facts.providers.protocol import (  # noqa: E402
    LocalFactProvider,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.store import FactStore  # noqa: E402
from specwire.runtime.facts.tools import fact_tools  # noqa: E402

SEED = 7
CTX = ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_bench")


def timed(call: Callable[[], object]) -> int:
    begin = time.perf_counter_ns()
    call()
    return time.perf_counter_ns() - begin


def percentiles(samples: list[int]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) / 1e6, p95 / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=10, help="passes over the 40 queries")
    parser.add_argument("--writes", type=int, default=300, help="durable writes per path")
    args = parser.parse_args()

    corpus = generate_corpus(args.size + 3 * args.writes, SEED)
    facts, fresh = corpus[: args.size], corpus[args.size :]
    queries = build_queries(facts, args.size, 30, 10, SEED)
    with tempfile.TemporaryDirectory() as folder:
        store = FactStore.open(Path(folder) / "facts.sqlite3")
        for start in range(0, len(facts), 10_000):
            block = facts[start : start + 10_000]
            store.retain_many([NewFactItem(f.text, f.tags) for f in block])
        provider = LocalFactProvider(store)
        remember, recall, _ = fact_tools(provider, ttl_ms=None, recall_k=5)
        recall_paths: dict[str, Callable[[str], object]] = {
            "store": lambda q: store.recall(q, 5),
            "provider": lambda q: provider.recall(RecallRequest(q, 5)),
            "tool": lambda q: recall.invoke({"query": q}, CTX),
        }
        all_queries = [*queries.hits, *queries.misses]
        for path in recall_paths.values():  # warm-up: the index loads, caches fill
            for query in all_queries:
                path(query)
        recall_samples: dict[str, list[int]] = {name: [] for name in recall_paths}
        gc.disable()
        for _ in range(args.rounds):
            for query in all_queries:
                for name, path in recall_paths.items():
                    recall_samples[name].append(timed(lambda p=path, q=query: p(q)))
        gc.enable()

        texts = iter(f.text for f in fresh)
        write_paths: dict[str, Callable[[], object]] = {
            "store": lambda: store.remember_if_new(next(texts)),
            "provider": lambda: provider.retain(RetainRequest(next(texts), if_absent=True)),
            "tool": lambda: remember.invoke({"text": next(texts)}, CTX),
        }
        write_samples: dict[str, list[int]] = {name: [] for name in write_paths}
        for _ in range(args.writes):
            for name, path in write_paths.items():
                write_samples[name].append(timed(path))
        store.close()

    print(f"# tool path: {args.size:,} facts, {len(all_queries)} queries x {args.rounds} rounds")
    print()
    print("| path | recall p50 ms | recall p95 ms | vs store (p50) | write p50 ms | vs store |")
    print("|---|---|---|---|---|---|")
    base_recall = percentiles(recall_samples["store"])[0]
    base_write = percentiles(write_samples["store"])[0]
    for name in recall_paths:
        p50, p95 = percentiles(recall_samples[name])
        w50, _ = percentiles(write_samples[name])
        print(
            f"| {name} | {p50:.3f} | {p95:.3f} | {p50 / base_recall:.3f}x "
            f"| {w50:.3f} | {w50 / base_write:.3f}x |"
        )


if __name__ == "__main__":
    main()
