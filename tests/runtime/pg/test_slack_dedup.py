"""Slack's retry de-duplication in PostgreSQL (``memory.state: postgres``) on a real server
(pgserver): a retry is recognised by any worker, after a restart too, and only once."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.hosts.http.slack_dedup_postgres import PostgresSeenEvents  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402

pytestmark = pytest.mark.postgres


@pytest.fixture
def pools() -> Iterator[list[Any]]:
    uri = PostgresServerForTests.fresh_database()
    opened = [open_pool(uri, max_size=4) for _ in range(2)]  # two workers
    yield opened
    for pool in opened:
        pool.close()
    PostgresServerForTests.drop_database(uri)


def test_a_retry_reaching_another_worker_or_a_restarted_one_is_not_answered_again(
    pools: list[Any],
) -> None:
    one, other = (PostgresSeenEvents(pool, tenant="t", spec="bot") for pool in pools)
    assert one.first_time("Ev1", "C1:1.0")
    assert not other.first_time("Ev1", "C1:1.0")  # the retry, on the other worker
    assert not other.first_time("Ev9", "C1:1.0")  # the same message under another event id
    restarted = PostgresSeenEvents(pools[0], tenant="t", spec="bot")
    assert not restarted.first_time("Ev1", "C1:1.0")
    # Another spec in the same database keeps its own record.
    assert PostgresSeenEvents(pools[1], tenant="t", spec="other").first_time("Ev1", "C1:1.0")


def test_workers_racing_on_one_event_answer_it_once(pools: list[Any]) -> None:
    seen = [PostgresSeenEvents(pool, tenant="t", spec="bot") for pool in pools * 3]
    fresh: list[bool] = []
    lock = threading.Lock()

    def deliver(events: PostgresSeenEvents) -> None:
        answer = events.first_time("Ev2", "C2:2.0")
        with lock:
            fresh.append(answer)

    threads = [threading.Thread(target=deliver, args=(events,)) for events in seen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(fresh) == [False] * 5 + [True]


def test_keys_older_than_the_window_are_forgotten(pools: list[Any]) -> None:
    events = PostgresSeenEvents(pools[0], tenant="t", spec="bot", window_s=0.0)
    assert events.first_time("Ev3")
    assert events.first_time("Ev3")  # a window of zero remembers nothing past its moment
