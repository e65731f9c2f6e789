"""``specwire-memory-server``'s OpenComputer route, spoken to with plain httpx and JSON written
from the contract (never our client): recall and tools, authentication, the partition table,
read-only bindings, deadlines, idempotent replay, limits and the error envelope."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from oc_support import HANG_GUARD_S, UvicornThread

from specwire.runtime.hosts.http.memory_server import LocalStores, memory_app
from specwire.runtime.hosts.http.opencomputer_server import PartitionTable, tools_declaration

TOKEN_A = "token-of-tenant-a-0123456789"
TOKEN_B = "token-of-tenant-b-0123456789"
WRITABLE = "ocmem_v1_writable"
READ_ONLY = "ocmem_v1_readonly"
OTHER_SCOPE = "ocmem_v1_user-u1"
B_PARTITION = "ocmem_v1_tenant-b"
TABLE = {
    "partitions": {
        WRITABLE: {"tenant": "tenant-a", "spec": "bot", "access": "read-write"},
        READ_ONLY: {"tenant": "tenant-a", "spec": "bot", "access": "read"},
        OTHER_SCOPE: {
            "tenant": "tenant-a",
            "spec": "bot",
            "scope": "user:U1",
            "access": "read-write",
        },
        B_PARTITION: {"tenant": "tenant-b", "spec": "bot", "access": "read-write"},
    }
}


class Served:
    def __init__(self, root: Path) -> None:
        self.stores = LocalStores(root, ["tenant-a", "tenant-b"])
        app = memory_app(
            self.stores,
            {TOKEN_A: "tenant-a", TOKEN_B: "tenant-b"},
            opencomputer=PartitionTable.parse(TABLE),
        )
        self.server = UvicornThread(app)
        self.http = httpx.Client(base_url=self.server.url, timeout=HANG_GUARD_S)

    def post(self, body: Any, token: str | None = TOKEN_A) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if isinstance(body, bytes):
            headers["Content-Type"] = "application/json"
            return self.http.post("/memory", content=body, headers=headers)
        return self.http.post("/memory", json=body, headers=headers)

    def close(self) -> None:
        self.http.close()
        self.server.stop()
        self.stores.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    made = Served(tmp_path)
    yield made
    made.close()


def deadline(seconds: float = 10) -> str:
    moment = datetime.now(UTC) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def recall(text: str | None, *, partition: str = WRITABLE, **extra: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "operation": "recall",
        "operationId": f"mrq_{uuid.uuid4().hex}:knowledge",
        "partition": partition,
        "access": "read-write",
        "deadlineAt": deadline(),
        "input": {"text": text},
        "maxBytes": 8192,
        **extra,
    }


def tool(
    name: str, arguments: dict[str, Any], *, partition: str = WRITABLE, **extra: Any
) -> dict[str, Any]:
    return {
        "version": 1,
        "operation": "tool",
        "operationId": f"toolcall_{uuid.uuid4().hex}:knowledge",
        "partition": partition,
        "access": "read-write",
        "deadlineAt": deadline(),
        "tool": name,
        "arguments": arguments,
        **extra,
    }


def envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code and isinstance(body["error"]["message"], str)
    assert set(body["error"]) <= {"code", "message", "details"}
    return dict(body["error"])


def remember(served: Served, text: str, **kw: Any) -> dict[str, Any]:
    response = served.post(tool("remember", {"text": text}, **kw))
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_empty_memory_is_empty_text_and_no_sources(served: Served) -> None:
    response = served.post(recall("anything about hosting?"))
    assert response.status_code == 200
    body = response.json()
    assert body["text"] == "" and body["sources"] == []
    assert set(body) <= {"text", "sources", "cursor"}
    assert served.post(recall(None)).json()["text"] == ""


def test_a_remembered_fact_is_stored_and_recalled_with_its_source(served: Served) -> None:
    answer = remember(served, "The demo must run without paid external services.")
    assert answer["result"]["status"] == "stored"
    fact_id = answer["result"]["id"]
    body = served.post(recall("paid external services for the demo")).json()
    assert "without paid external services" in body["text"]
    assert {"id": fact_id} in body["sources"]
    assert isinstance(body["cursor"], str) and len(body["cursor"].encode()) <= 1024


def test_recalled_text_stays_within_max_bytes(served: Served) -> None:
    for n in range(5):
        remember(served, f"hosting note number {n}: " + "ü" * 300)
    body = served.post(recall("hosting note", maxBytes=700)).json()
    assert 0 < len(body["text"].encode()) <= 700
    assert len(body["sources"]) >= 1


def test_a_missing_or_unknown_credential_is_401(served: Served) -> None:
    envelope(served.post(recall("x"), token=None), 401, "unauthorized")
    envelope(served.post(recall("x"), token="not-a-tenant-token-000000"), 401, "unauthorized")


def test_another_tenants_partition_looks_like_an_unknown_one(served: Served) -> None:
    written = served.post(tool("remember", {"text": "b's plan"}, partition=B_PARTITION), TOKEN_B)
    assert written.status_code == 200
    theirs = envelope(served.post(recall("x", partition=B_PARTITION)), 403, "forbidden")
    unknown = envelope(served.post(recall("x", partition="ocmem_v1_nobody")), 403, "forbidden")
    assert theirs["message"] == unknown["message"]


def test_partitions_are_isolated_and_arguments_cannot_choose_one(served: Served) -> None:
    remember(served, "the agent-wide fact about invoices")
    remember(served, "the user's own fact about invoices", partition=OTHER_SCOPE)
    agent_text = served.post(recall("invoices")).json()["text"]
    user_text = served.post(recall("invoices", partition=OTHER_SCOPE)).json()["text"]
    assert "agent-wide" in agent_text and "user's own" not in agent_text
    assert "user's own" in user_text and "agent-wide" not in user_text
    # Naming another partition in the arguments is refused, never followed.
    response = served.post(tool("remember", {"text": "x", "partition": OTHER_SCOPE}))
    envelope(response, 400, "invalid_request")
    response = served.post(tool("lookup", {"query": "invoices", "partition": OTHER_SCOPE}))
    envelope(response, 400, "invalid_request")


def test_a_read_only_binding_refuses_writes_and_still_reads(served: Served) -> None:
    remember(served, "a fact about the weekly report")
    response = served.post(recall("weekly report", partition=READ_ONLY))
    envelope(response, 403, "forbidden")  # access read-write on a read binding
    read = recall("weekly report", partition=READ_ONLY, access="read")
    assert "weekly report" in served.post(read).json()["text"]
    write = tool("remember", {"text": "sneaky"}, partition=READ_ONLY, access="read")
    envelope(served.post(write), 403, "read_only")
    write = tool("remember", {"text": "sneaky"}, access="read")
    envelope(served.post(write), 403, "read_only")
    lookup = tool("lookup", {"query": "weekly report"}, partition=READ_ONLY, access="read")
    hits = served.post(lookup).json()["result"]["hits"]
    assert [hit["text"] for hit in hits] == ["a fact about the weekly report"]
    assert served.post(lookup | {"tool": "lookup", "arguments": {"query": "sneaky"}}).json() == {
        "result": {"hits": []}
    }


def test_an_expired_deadline_is_refused_and_nothing_is_written(served: Served) -> None:
    late = tool("remember", {"text": "written too late"}, deadlineAt=deadline(-1))
    envelope(served.post(late), 408, "deadline_exceeded")
    envelope(served.post(recall("x", deadlineAt=deadline(-1))), 408, "deadline_exceeded")
    lookup = served.post(tool("lookup", {"query": "written too late"})).json()
    assert lookup == {"result": {"hits": []}}


def test_an_idempotent_write_is_replayed_and_changed_reuse_is_a_conflict(served: Served) -> None:
    body = tool("remember", {"text": "replayed exactly once"}, cursor="c1_abc")
    first = served.post(body)
    second = served.post(body)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    hits = served.post(tool("lookup", {"query": "replayed exactly once"})).json()["result"]["hits"]
    assert len(hits) == 1
    changed = body | {"arguments": {"text": "something else"}}
    error = envelope(served.post(changed), 409, "conflict")
    assert "operationId" in error["message"]
    envelope(served.post(body | {"cursor": "c1_other"}), 409, "conflict")
    envelope(
        served.post(body | {"tool": "forget", "arguments": {"id": first.json()["result"]["id"]}}),
        409,
        "conflict",
    )
    # The same operationId in another partition is another operation.
    other = served.post(body | {"partition": OTHER_SCOPE})
    assert other.status_code == 200 and other.json()["result"]["id"] != first.json()["result"]["id"]


def test_forget_removes_a_fact_from_recall(served: Served) -> None:
    fact_id = remember(served, "the staging password rotates on Mondays")["result"]["id"]
    gone = served.post(tool("forget", {"id": fact_id})).json()
    assert gone == {"result": {"status": "stored", "removed": 1}}
    assert served.post(recall("staging password rotates")).json()["sources"] == []
    again = served.post(tool("forget", {"id": fact_id})).json()
    assert again == {"result": {"status": "stored", "removed": 0}}


@pytest.mark.parametrize(
    ("make_body", "status", "code"),
    [
        (lambda: recall("x", version=2), 400, "invalid_request"),
        (lambda: recall("x", extra="field"), 400, "invalid_request"),
        (lambda: recall("x", maxBytes=16385), 400, "invalid_request"),
        (lambda: recall("x", maxBytes=0), 400, "invalid_request"),
        (lambda: recall("x", access="admin"), 400, "invalid_request"),
        (lambda: recall("x", deadlineAt="tomorrow"), 400, "invalid_request"),
        (lambda: recall("x", input={"text": 5}), 400, "invalid_request"),
        (lambda: recall("x", operationId="o" * 1025), 400, "invalid_request"),
        (lambda: recall("x", operation="delete"), 400, "invalid_request"),
        (lambda: tool("remember", {}), 400, "invalid_request"),
        (lambda: tool("remember", {"text": 7}), 400, "invalid_request"),
        (lambda: tool("Remember", {"text": "x"}), 400, "invalid_request"),
        (lambda: tool("unknown", {"text": "x"}), 404, "not_found"),
        (lambda: tool("forget", {"id": "../../etc"}), 400, "invalid_request"),
        (lambda: tool("remember", {"text": "x"}, cursor=""), 400, "invalid_request"),
        (lambda: b"{not json", 400, "invalid_request"),
        (lambda: b"[1, 2]", 400, "invalid_request"),
    ],
    ids=[
        "version-2", "unknown-field", "maxBytes-over-ceiling", "maxBytes-zero", "bad-access",
        "bad-deadline", "input-text-not-string", "operationId-over-1024-bytes", "bad-operation",
        "missing-argument", "argument-of-wrong-type", "tool-name-case", "unknown-tool",
        "forget-id-pattern", "empty-cursor", "not-json", "not-an-object",
    ],
)  # fmt: skip
def test_a_request_outside_the_contract_gets_the_envelope(
    served: Served, make_body: Callable[[], Any], status: int, code: str
) -> None:
    envelope(served.post(make_body()), status, code)


def test_a_body_over_64_kib_is_413(served: Served) -> None:
    response = served.post(tool("remember", {"text": "x" * 70_000}))
    envelope(response, 413, "payload_too_large")


def test_the_served_tools_are_declarable_in_a_spec() -> None:
    """What ``--opencomputer-tools`` prints passes the spec's own checks (codegen check)."""
    import json

    from specwire.ir import load_spec_text

    tools = json.dumps(tools_declaration())
    text = (
        "name: s\ntarget: cli\nagent: {model: claude-sonnet-4-5, instructions: i}\n"
        "memory:\n  backend: http\n"
        "  protocol: opencomputer\n  url: $MEMORY_URL\n  token: $MEMORY_TOKEN\n"
        f"  tools: {tools}\n"
    )
    memory = load_spec_text(text, "spec.yaml").memory
    assert memory is not None and memory.tools is not None
    assert [t.name for t in memory.tools] == ["remember", "forget", "lookup"]


def test_one_partition_flooding_the_write_log_never_evicts_anothers_record() -> None:
    from datetime import timedelta

    from specwire.runtime.core.clock import utc_now
    from specwire.runtime.hosts.http.opencomputer_server import WriteLog

    async def flood() -> tuple[bool, int]:
        log = WriteLog(max_entries=8, max_per_partition=4)
        later = utc_now() + timedelta(seconds=60)
        kept = log.start(("victim", "op-1"), "f", later)
        kept.outcome.set_result((200, {"status": "stored"}))
        for n in range(50):
            log.start(("flooder", f"op-{n}"), "f", later).outcome.set_result((200, {}))
            log.find(("flooder", f"op-{n}"), utc_now())  # expiry and the global bound run here
        flooder = sum(1 for partition, _ in log._entries if partition == "flooder")
        return log.find(("victim", "op-1"), utc_now()) is kept, flooder

    survived, flooder = asyncio.run(flood())
    assert survived and flooder <= 4


def test_a_write_whose_request_is_cancelled_still_records_its_outcome() -> None:
    """The first request of a write is cancelled mid-write (its client went away): the write
    runs to its end and a replay gets its outcome, never a wait without end."""
    import threading

    from specwire.runtime.core.scopes import AGENT
    from specwire.runtime.facts.providers.http import opencomputer_wire as oc
    from specwire.runtime.facts.providers.protocol import RetainResult
    from specwire.runtime.hosts.http.opencomputer_server import OpenComputerEndpoint, Partition

    release = threading.Event()

    class SlowStore:
        def retain(self, request: Any) -> RetainResult:
            release.wait(30)
            return RetainResult("mem_00000000000000ab", True)

    endpoint = OpenComputerEndpoint(lambda *_: None, None, None)  # type: ignore[arg-type]
    bound = Partition("tenant-a", "bot", AGENT, "write")
    call = oc.ToolCall(
        "op-1",
        "ocmem_v1_test",
        "write",
        datetime.now(UTC) + timedelta(seconds=60),
        "remember",
        {"text": "the gate code is 1357"},
        None,
    )

    async def cancelled_then_replayed() -> Any:
        first = asyncio.ensure_future(endpoint._write(SlowStore(), bound, call))  # type: ignore[arg-type]
        await asyncio.sleep(0.2)
        first.cancel()
        release.set()
        return await asyncio.wait_for(endpoint._write(SlowStore(), bound, call), HANG_GUARD_S)  # type: ignore[arg-type]

    replay = asyncio.run(cancelled_then_replayed())
    assert replay == {"result": {"status": "stored", "id": "mem_00000000000000ab"}}
