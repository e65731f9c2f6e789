"""Scheduled sweeps on PostgreSQL (``facts.providers.postgres.sweeping``), on a real server:
of several processes wired at once exactly one sweeps a binding, once an interval; the expired
facts are tombstoned and leave the BM25 statistics in the same transaction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conformance_harness import PostgresTarget

from specwire.runtime.facts.providers.postgres.provider import open_pool
from specwire.runtime.facts.providers.postgres.sweeping import sweep_if_due
from specwire.runtime.facts.providers.protocol import RecallRequest, RetainRequest

TENANT, SPEC = "tenant-a", "sweep-bot"


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[PostgresTarget]:
    target = PostgresTarget(tmp_path)
    try:
        yield target
    finally:
        target.close()


def _docs(dsn: str) -> list[tuple[int]]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT docs FROM lexical_scopes").fetchall()


def test_one_of_several_workers_sweeps_a_binding_once_an_interval(pg: PostgresTarget) -> None:
    # Two "workers": providers of one binding on pools of their own.
    other_pool = open_pool(pg.dsn, max_size=2)
    try:
        first = pg.make(TENANT, SPEC)
        second = pg.make(TENANT, SPEC, pool=other_pool)
        first.retain(RetainRequest("the trial ends soon", ttl_ms=60_000))
        first.retain(RetainRequest("the trial plan is gold"))
        assert _docs(pg.dsn) == [(2,)]
        pg.advance(120)
        logs: list[str] = []
        threads = [sweep_if_due(p, logs.append, interval_s=3600) for p in (first, second)]
        for thread in threads:
            assert thread is not None
            thread.join(30)
        assert logs == ["[memory] swept 1 expired fact(s)\n"]
        assert _docs(pg.dsn) == [(1,)]
        assert [h.text for h in second.recall(RecallRequest("trial", 5)).hits] == [
            "the trial plan is gold"
        ]
        status = first.get_fact(first.export_facts()[0].fact.id)
        assert status is not None and status.status == "expired"
        assert status.tombstone is not None and status.tombstone.kind == "expired"
        # Within the interval nobody sweeps again, even with a new expired fact.
        first.retain(RetainRequest("a short note", ttl_ms=1_000))
        pg.advance(10)
        thread = sweep_if_due(second, logs.append, interval_s=3600)
        assert thread is not None
        thread.join(30)
        assert len(logs) == 1 and _docs(pg.dsn) == [(2,)]
        # Once the interval has passed, the next wiring sweeps it.
        pg.advance(3600)
        thread = sweep_if_due(second, logs.append, interval_s=3600)
        assert thread is not None
        thread.join(30)
        assert logs[1:] == ["[memory] swept 1 expired fact(s)\n"]
        assert _docs(pg.dsn) == [(1,)]
    finally:
        other_pool.close()


def test_a_provider_of_another_backend_is_left_alone() -> None:
    assert sweep_if_due(object(), print) is None
