"""Scale-out: two processes of one managed bundle serve the same tenants on one PostgreSQL.

The facts and the session logs live in PostgreSQL (every statement fenced by tenant and spec;
``memory.state: postgres``); continuity files live on a folder both processes share
(``SPECWIRE_TENANTS_ROOT``), as they would on a shared volume. Turns for both tenants go to both
processes at once, conversations hop from one process to the other, and afterwards: every fact
is there once, no tenant reads another's, and every session log is whole (its sequence numbers
run 1..n with no gap or repeat).
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import openai
import pytest
from serving_support import ROOT, Served, build_bundle, clean_env, served

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

MODEL = "managed-postgres"
KEYS = {
    "tenant-acme": "sk-acme-0123456789abcdef0123",
    "tenant-globex": "sk-globex-0123456789abcdef01",
}
TURNS_PER_TENANT = 12


def say(server: Served, tenant: str, session: str, text: str) -> str:
    client = openai.OpenAI(
        base_url=f"{server.url}/v1",
        api_key=KEYS[tenant],
        max_retries=0,
        default_headers={"X-Session-Id": session},
    )
    # One person per tenant across every session and process: managed facts are kept per
    # request ``user`` (without one, per session).
    completion = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": text}], user=f"{tenant}-ops"
    )
    return completion.choices[0].message.content or ""


def live_facts(database: str, tenant: str) -> list[str]:
    import psycopg

    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT f.text FROM facts f WHERE f.tenant = %s AND f.spec = %s "
            "AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id)",
            (tenant, MODEL),
        ).fetchall()
    return sorted(row[0] for row in rows)


@pytest.fixture
def database() -> object:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def test_two_processes_on_one_postgres_lose_nothing_and_leak_nothing(
    tmp_path: Path, database: str
) -> None:
    agent = build_bundle(ROOT / "examples" / f"{MODEL}.yaml", tmp_path / "out")
    shared = tmp_path / "shared-volume" / "tenants"
    env = clean_env(
        DATABASE_URL=database,
        SPECWIRE_TENANTS_ROOT=str(shared),
        **{f"SPECWIRE_TENANT_KEY_{t.upper().replace('-', '_')}": k for t, k in KEYS.items()},
    )
    with ExitStack() as stack:
        servers = [stack.enter_context(served(agent, tmp_path / f"host-{n}", env)) for n in (1, 2)]
        jobs = [
            (servers[n % 2], tenant, f"conv-{n % 3}", f"remember: account note {tenant}-{n}")
            for n in range(TURNS_PER_TENANT)
            for tenant in KEYS
        ]
        with ThreadPoolExecutor(max_workers=8) as pool:
            replies = list(pool.map(lambda job: say(*job), jobs))
        assert all(reply.startswith("Done: remembered") for reply in replies), replies

        # Each tenant recalls, through the other process, its own notes and none of the other's.
        for tenant in KEYS:
            assert say(servers[1], tenant, "check", "recall: account note").startswith("Done: 6")

    for server in servers:
        assert "Traceback" not in server.stderr
    for tenant in KEYS:
        expected = sorted(f"account note {tenant}-{n}" for n in range(TURNS_PER_TENANT))
        assert live_facts(database, tenant) == expected
    # Nothing of the facts was written on either host's own disk.
    for n in (1, 2):
        assert not list((tmp_path / f"host-{n}").rglob("*.sqlite3"))
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    pool = open_pool(database)
    try:
        for tenant in KEYS:
            logs = PostgresSessionLogs(pool, tenant=tenant, spec=MODEL)
            sessions = logs.sessions()
            assert sessions
            events = {session: list(logs.events(session)) for session in sessions}
            recalled = [
                e.payload["text"]
                for logged in events.values()
                for e in logged
                if e.type == "tool_result" and e.payload["name"] == "Recall"
            ]
            [text] = recalled
            other = next(t for t in KEYS if t != tenant)
            assert text.count(f"account note {tenant}-") == 6 and other not in text
            # Conversations hopped between the processes; each session log is still whole.
            for logged in events.values():
                assert [e.seq for e in logged] == list(range(1, len(logged) + 1))
                assert other not in json.dumps([e.payload for e in logged])
    finally:
        pool.close()
