"""Issue 24: graceful shutdown loses no turn.

Two ``agent.py serve`` workers of one managed spec with ``memory.state: postgres``. Worker A gets
SIGTERM while turns are in flight on it: streamed turns still being written (the scripted model
streams one word every ``SPECWIRE_SCRIPTED_WORD_DELAY`` seconds) and non-streamed turns queued
behind them in the same conversations. Each in-flight turn completes and its client gets the
whole answer; requests sent to A after the signal are refused at the socket (the client sends
them to B, which answers); B goes on serving throughout; A exits 0 with nothing unfinished.
Afterwards every session log's seq runs 1..n with every seal valid, every remembered note is
there once, no reservation of the budgeted tenant is left behind and A's connections are gone.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import openai
import pytest
from serving_support import Served, build_bundle, clean_env, rows, served

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

SPEC = "drained"
TENANTS = ("tenant-a", "tenant-b")
KEYS = {tenant: f"sk-{tenant}-0123456789abcdef0123" for tenant in TENANTS}
BUDGETED = "tenant-b"  # both are (a turn admitted holds a reservation); this one is checked
IN_FLIGHT = 4  # conversations with a streamed turn in flight on worker A at the signal
WORD_DELAY_S = "0.08"
LONG = " ".join(f"w{n}" for n in range(30))  # echoed up to 200 chars: ~2.4 s to stream
SPEC_YAML = f"""\
name: {SPEC}
target: managed
agent:
  model: scripted
  instructions: You keep notes for each tenant's staff.
tools: [read]
tenants:
  - id: tenant-a
    budget:
      maxInputTokens: 10000000
  - id: {BUDGETED}
    budget:
      maxInputTokens: 10000000
memory:
  backend: postgres
  dsn: $DATABASE_URL
  embedder: hash/256
"""


def client(server: Served, tenant: str, conversation: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{server.url}/v1",
        api_key=KEYS[tenant],
        max_retries=0,
        timeout=120,
        default_headers={"X-Session-Id": conversation},
    )


def say(server: Served, tenant: str, conversation: str, text: str) -> str:
    completion = client(server, tenant, conversation).chat.completions.create(
        model=SPEC, messages=[{"role": "user", "content": text}]
    )
    return completion.choices[0].message.content or ""


def stream(
    server: Served, tenant: str, conversation: str, text: str, started: Callable[[], None]
) -> tuple[str, str | None]:
    """The streamed answer and its finish reason; ``started`` is called on its first word."""
    pieces: list[str] = []
    finish = None
    chunks = client(server, tenant, conversation).chat.completions.create(
        model=SPEC, messages=[{"role": "user", "content": text}], stream=True
    )
    for chunk in chunks:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        if choice.delta.content:
            if not pieces:
                started()
            pieces.append(choice.delta.content)
        finish = choice.finish_reason or finish
    return "".join(pieces), finish


def wait_for(count: Callable[[], int], wanted: int) -> None:
    deadline = time.monotonic() + 60
    while count() != wanted:
        assert time.monotonic() < deadline, f"timed out waiting for {wanted}"
        time.sleep(0.05)


@pytest.fixture
def database() -> Any:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def test_sigterm_finishes_the_turns_in_flight_and_refuses_new_ones(
    tmp_path: Path, database: str
) -> None:
    spec = tmp_path / "drained.yaml"
    spec.write_text(SPEC_YAML, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    env = clean_env(
        DATABASE_URL=database,
        SPECWIRE_SCRIPTED_WORD_DELAY=WORD_DELAY_S,
        **{f"SPECWIRE_TENANT_KEY_{t.upper().replace('-', '_')}": k for t, k in KEYS.items()},
    )
    remembered: list[tuple[str, str]] = []
    with ExitStack() as stack:
        a = stack.enter_context(served(agent, tmp_path / "worker-a", env))
        b = stack.enter_context(served(agent, tmp_path / "worker-b", env))
        # Every conversation has history on both workers before the signal.
        for n in range(IN_FLIGHT):
            tenant = TENANTS[n % 2]
            for server in (a, b):
                note = f"note conv-{n} before on {server is a and 'a' or 'b'}"
                assert say(server, tenant, f"conv-{n}", f"remember: {note}").startswith("Done: ")
                remembered.append((tenant, note))

        started = threading.Semaphore(0)
        with ThreadPoolExecutor(max_workers=2 * IN_FLIGHT + 2) as pool:
            streamed = [
                pool.submit(stream, a, TENANTS[n % 2], f"conv-{n}", LONG, started.release)
                for n in range(IN_FLIGHT)
            ]
            for _ in range(IN_FLIGHT):
                assert started.acquire(timeout=60)
            # Non-streamed turns queued behind the streamed ones, in the same conversations.
            queued = [
                pool.submit(
                    say, a, TENANTS[n % 2], f"conv-{n}", f"remember: note conv-{n} queued on a"
                )
                for n in range(IN_FLIGHT)
            ]
            # Both tenants are budgeted, so a turn A admitted holds a reservation: the signal
            # goes once every streamed and queued turn is in A's hands.
            wait_for(
                lambda: len(rows(database, "SELECT ticket FROM usage_reservations")), 2 * IN_FLIGHT
            )
            a.process.send_signal(signal.SIGTERM)
            # The other worker goes on while A drains.
            during = say(b, TENANTS[0], "conv-b", "remember: note conv-b during the drain")
            assert during.startswith("Done: "), during
            remembered.append((TENANTS[0], "note conv-b during the drain"))

            # Every in-flight turn completes: the whole streamed answer, the queued reply.
            for future in streamed:
                text, finish = future.result(timeout=120)
                assert finish == "stop"
                assert text.startswith("Noted: w0 w1") and text.rstrip().endswith("."), text
            for n, future in enumerate(queued):
                reply = future.result(timeout=120)
                assert reply.startswith("Done: "), reply
                remembered.append((TENANTS[n % 2], f"note conv-{n} queued on a"))

        # A new request to the stopping worker is refused at its socket (never half-run): the
        # client sends it to B instead.
        deadline = time.monotonic() + 60
        refused_at_a = False
        while time.monotonic() < deadline:
            try:
                say(a, TENANTS[1], "conv-late", "hello")
            except openai.APIConnectionError:
                refused_at_a = True
                break
            time.sleep(0.05)
        assert refused_at_a
        late = say(b, TENANTS[1], "conv-late", "remember: note conv-late after the signal")
        assert late.startswith("Done: "), late
        remembered.append((TENANTS[1], "note conv-late after the signal"))

        assert a.process.wait(timeout=120) == 0
        for n in range(IN_FLIGHT):  # the conversations go on on B
            assert say(b, TENANTS[n % 2], f"conv-{n}", "hello again").startswith("Noted: ")

    assert "Traceback" not in a.stderr, a.stderr
    assert "unfinished" not in a.stderr, a.stderr
    assert "Traceback" not in b.stderr, b.stderr

    # Both workers stopped: none of their connections (pools, the worker lease) is left.
    assert (
        rows(
            database,
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()",
        )
        == []
    )

    # Every remembered note is there once.
    facts = sorted(
        rows(
            database,
            "SELECT f.tenant, f.text FROM facts f WHERE f.spec = %s AND NOT EXISTS "
            "(SELECT 1 FROM tombstones t WHERE t.target = f.id)",
            SPEC,
        )
    )
    assert facts == sorted(remembered)

    # Nothing of the turns is still reserved; the ledger counted all of one tenant's.
    assert rows(database, "SELECT ticket FROM usage_reservations") == []
    [(ledger_turns,)] = rows(
        database, "SELECT turns FROM usage_ledgers WHERE tenant = %s AND spec = %s", BUDGETED, SPEC
    )

    # Every session log: seq 1..n, every seal valid, every turn whole (a user message, then
    # the assistant's answer to it).
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    budgeted_turns = 0
    pool = open_pool(database)
    try:
        sessions = rows(
            database,
            "SELECT tenant, session, array_agg(seq ORDER BY seq) FROM session_log_events "
            "WHERE spec = %s GROUP BY tenant, session",
            SPEC,
        )
        assert len(sessions) == IN_FLIGHT + 2
        for tenant, session, seqs in sessions:
            assert list(seqs) == list(range(1, len(seqs) + 1)), (tenant, session)
            events = list(PostgresSessionLogs(pool, tenant=tenant, spec=SPEC).events(session))
            assert [event.seq for event in events] == list(seqs)
            asked = [e.payload["turn"] for e in events if e.type == "user_message"]
            answered = [e.payload for e in events if e.type == "assistant_message"]
            assert [a["turn"] for a in answered] == asked, (tenant, session)
            assert not any(a.get("cancelled") for a in answered), (tenant, session)
            if tenant == BUDGETED:
                budgeted_turns += len(asked)
    finally:
        pool.close()
    assert ledger_turns == budgeted_turns
