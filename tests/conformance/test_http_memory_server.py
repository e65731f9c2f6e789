"""The reference memory server, spoken to with raw HTTP: auth, scope, limits, validation,
operationId de-duplication, the error envelope, the OpenAPI file and the command line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from conformance_harness import HANG_GUARD_S, LocalStoresForTest, ManualClock, ThreadedServer

from specwire.runtime.core.errors import TenancyError
from specwire.runtime.facts.providers.errors import ProviderAuthError, ProviderScopeError
from specwire.runtime.facts.providers.http import contract as wire
from specwire.runtime.facts.providers.http.client import HttpFactProvider
from specwire.runtime.facts.providers.protocol import RecallRequest, RetainRequest
from specwire.runtime.hosts.http.memory_server import (
    LocalStores,
    memory_app,
    openapi_json,
    owner_token_variable,
    token_variable,
)

REPO = Path(__file__).resolve().parents[2]
TOKEN_A = "token-of-tenant-a-0123456789"
TOKEN_B = "token-of-tenant-b-0123456789"


class Served:
    def __init__(self, root: Path) -> None:
        self.stores = LocalStoresForTest(root, ManualClock())
        self.server = ThreadedServer(
            memory_app(self.stores, {TOKEN_A: "tenant-a", TOKEN_B: "tenant-b"})
        )
        self.http = httpx.Client(base_url=self.server.url, timeout=HANG_GUARD_S)

    def post(self, op: str, body: Any, token: str | None = TOKEN_A, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers.update(kw.pop("headers", {}))
        if isinstance(body, bytes):
            return self.http.post(f"/v1/{op}", content=body, headers=headers, **kw)
        return self.http.post(f"/v1/{op}", json=body, headers=headers, **kw)

    def close(self) -> None:
        self.http.close()
        self.stores.close()
        self.server.stop()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    made = Served(tmp_path)
    yield made
    made.close()


def retain_body(text: str, **extra: Any) -> dict[str, Any]:
    return {"version": 1, "spec": "bot", "text": text, **extra}


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and isinstance(error["retryable"], bool)
    return dict(error)


def test_missing_or_wrong_token_is_401(served: Served) -> None:
    response = served.post("recall", {"spec": "bot", "query": "x"}, token=None)
    assert_envelope(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"
    wrong = served.post("recall", {"spec": "bot", "query": "x"}, token="not-a-token-at-all")
    assert TOKEN_A not in wrong.text
    assert_envelope(wrong, 401, "unauthorized")
    with pytest.raises(ProviderAuthError):
        HttpFactProvider(served.server.url, "wrong-token-xyz", "bot").recall(RecallRequest("x"))


def test_the_tenant_comes_from_the_token_never_the_body(served: Served) -> None:
    served.post("retain", retain_body("tenant A's roadmap mentions Falcon"))
    leak = served.post("recall", {"spec": "bot", "query": "Falcon"}, token=TOKEN_B)
    assert leak.status_code == 200 and leak.json() == {"hits": []}
    claim = served.post("recall", {"spec": "bot", "query": "Falcon", "tenant": "tenant-a"}, TOKEN_B)
    assert_envelope(claim, 403, "scope_violation")
    assert "Falcon" not in claim.text
    own = served.post("recall", {"spec": "bot", "query": "Falcon", "tenant": "tenant-a"})
    assert [hit["text"] for hit in own.json()["hits"]] == ["tenant A's roadmap mentions Falcon"]


def test_oversized_body_is_413(served: Served) -> None:
    body = json.dumps(retain_body("x" * (wire.MAX_REQUEST_BYTES + 10))).encode()
    assert_envelope(served.post("retain", body), 413, "payload_too_large")


@pytest.mark.parametrize(
    ("body", "code", "param"),
    [
        (b"{not json", "invalid_request", None),
        (b"[1, 2]", "invalid_request", None),
        (json.dumps(retain_body("x" * 2001)).encode(), "invalid_request", "text"),
        (json.dumps(retain_body("x", ttlMs=0)).encode(), "invalid_request", "ttlMs"),
        (json.dumps(retain_body("x", colour="red")).encode(), "invalid_request", "colour"),
        (json.dumps(retain_body("x", version=2)).encode(), "unsupported_version", "version"),
        (json.dumps(retain_body("x", operationId="o" * 129)).encode(), "invalid_request", None),
        (json.dumps({"version": 1, "text": "no spec"}).encode(), "invalid_request", "spec"),
    ],
)
def test_bad_bodies_are_400_naming_the_field(
    served: Served, body: bytes, code: str, param: str | None
) -> None:
    error = assert_envelope(served.post("retain", body), 400, code)
    if param is not None:
        assert error["param"] == param


def test_operation_ids_are_deduplicated(served: Served) -> None:
    body = retain_body("the invoice number is 4711", operationId="op-1")
    first, second = served.post("retain", body), served.post("retain", body)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    hits = served.post("recall", {"spec": "bot", "query": "invoice"}).json()["hits"]
    assert len(hits) == 1
    changed = served.post("retain", retain_body("another text", operationId="op-1"))
    assert_envelope(changed, 409, "conflict")
    # Another tenant's identical operationId is its own operation.
    other = served.post("retain", body, token=TOKEN_B)
    assert other.status_code == 200 and other.json()["id"] != first.json()["id"]


def test_a_refused_write_is_not_remembered(served: Served) -> None:
    body = retain_body("x", supersedes="mem_0000000000000000", operationId="op-2")
    assert_envelope(served.post("retain", body), 422, "refused")
    assert_envelope(served.post("retain", body), 422, "refused")


def test_unknown_routes_and_methods_use_the_envelope(served: Served) -> None:
    assert_envelope(served.post("nope", {}), 404, "not_found")
    response = served.http.get("/v1/retain")
    assert_envelope(response, 405, "method_not_allowed")
    health = served.http.get("/healthz")
    assert health.json() == {"status": "ok", "version": 1}


def test_the_committed_openapi_document_is_up_to_date() -> None:
    committed = (REPO / "docs" / "memory-http-api.openapi.json").read_text(encoding="utf-8")
    assert committed == openapi_json(), (
        "regenerate: python -m specwire.runtime.hosts.http.memory_server --openapi "
        "> docs/memory-http-api.openapi.json"
    )
    document = json.loads(committed)
    assert set(document["paths"]) == {
        "/v1/retain",
        "/v1/recall",
        "/v1/forget",
        "/v1/read",
        "/v1/health",
        "/v1/capabilities",
        "/v1/export",
        "/v1/restore",
        "/healthz",
    }
    assert "operationId" in document["components"]["schemas"]["RetainBody"]["properties"]
    for owner_path in ("/v1/export", "/v1/restore"):
        assert document["paths"][owner_path]["post"]["security"] == [{"owner": []}]


# -- the command line --------------------------------------------------------------------------


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "specwire.runtime.hosts.http.memory_server", *args],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


def test_start_up_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_MEMORY_TOKEN_")}
    cases = [
        ((), "--root DIR is required"),
        (("--root", str(tmp_path / "missing")), "is not a folder"),
        (("--root", str(tmp_path)), "no tenant to serve"),
        (("--root", str(tmp_path), "--tenant", "acme"), "SPECWIRE_MEMORY_TOKEN_ACME"),
        (("--root", str(tmp_path), "--tenant", "bad/id"), "invalid tenant id"),
    ]
    for args, expected in cases:
        done = subprocess.run(
            [sys.executable, "-m", "specwire.runtime.hosts.http.memory_server", *args],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=REPO,
            env=clean,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr
    short = run_cli("--root", str(tmp_path), "--tenant", "acme", env={token_variable("acme"): "x"})
    assert short.returncode == 2 and "too short" in short.stderr
    owner_args = ("--root", str(tmp_path), "--tenant", "acme", "--port", "0", "--owner-tokens")
    no_owner = run_cli(*owner_args, env={token_variable("acme"): TOKEN_A})
    assert no_owner.returncode == 2 and no_owner.stderr.count("\n") == 1
    assert owner_token_variable("acme") in no_owner.stderr
    shared = run_cli(
        *owner_args, env={token_variable("acme"): TOKEN_A, owner_token_variable("acme"): TOKEN_A}
    )
    assert shared.returncode == 2 and "also an agent token" in shared.stderr
    assert shared.stderr.count("\n") == 1 and TOKEN_A not in shared.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        taken = run_cli(
            "--root",
            str(tmp_path),
            "--tenant",
            "acme",
            "--port",
            port,
            env={token_variable("acme"): TOKEN_A},
        )
    assert taken.returncode == 2 and "cannot listen" in taken.stderr


def test_the_server_serves_tenant_stores_under_the_root(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, token_variable("acme"): TOKEN_A, token_variable("globex"): TOKEN_B}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "specwire.runtime.hosts.http.memory_server",
            "--root",
            str(tmp_path),
            "--tenant",
            "acme",
            "--tenant",
            "globex",
            "--port",
            str(port),
        ],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)
        with HttpFactProvider(url, TOKEN_A, "support bot") as acme:
            fact = acme.retain(RetainRequest("acme renews in March"))
            assert [hit.id for hit in acme.recall(RecallRequest("renews")).hits] == [fact.id]
            assert acme.health().ok
        with HttpFactProvider(url, TOKEN_B, "support bot") as globex:
            assert globex.recall(RecallRequest("renews")).hits == ()
        facts = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.sqlite3"))
        assert len(facts) == 1
        assert facts[0].parts[:4] == ("tenants", "acme", "facts", facts[0].name)
        assert facts[0].name.endswith(".sqlite3")
    finally:
        process.terminate()
        process.wait(10)
        assert process.stderr is not None
        process.stderr.close()


def test_local_stores_layout_and_fences(tmp_path: Path) -> None:
    stores = LocalStores(tmp_path, ["acme"])
    try:
        root = (tmp_path / "tenants" / "acme").resolve()
        assert stores.path_for("acme", "bot", None) == root / "facts" / "bot.sqlite3"
        assert stores.path_for("acme", "bot", "s-1") == (
            root / "session-facts" / "s-1" / "facts" / "bot.sqlite3"
        )
        with pytest.raises(ProviderScopeError):
            stores("globex", "bot", None)
        with pytest.raises(TenancyError):
            stores.path_for("../acme", "bot", None)
    finally:
        stores.close()


def test_concurrent_duplicates_of_one_operation_run_it_once(served: Served) -> None:
    from concurrent.futures import ThreadPoolExecutor

    body = retain_body("the wifi password changes on Sundays", operationId="op-race")
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: served.post("retain", body), range(6)))
    assert {response.status_code for response in answers} == {200}
    assert len({response.json()["id"] for response in answers}) == 1
    hits = served.post("recall", {"spec": "bot", "query": "wifi password"}).json()["hits"]
    assert len(hits) == 1


class SlowToOpen:
    """``provider_for`` that takes ``delay_s`` to open a scope (a cold store, a busy pool)."""

    def __init__(self, stores: LocalStoresForTest, delay_s: float) -> None:
        self.stores = stores
        self.delay_s = delay_s

    def __call__(self, tenant: str, spec: str, session: str | None) -> Any:
        time.sleep(self.delay_s)
        return self.stores(tenant, spec, session)


def test_a_write_whose_deadline_passed_before_it_ran_is_refused_and_not_applied(
    tmp_path: Path,
) -> None:
    stores = LocalStoresForTest(tmp_path, ManualClock())
    server = ThreadedServer(memory_app(SlowToOpen(stores, 0.3), {TOKEN_A: "tenant-a"}))
    try:
        headers = {"Authorization": f"Bearer {TOKEN_A}", wire.DEADLINE_HEADER: "100"}
        late = httpx.post(
            f"{server.url}/v1/retain", json=retain_body("the gate code is 1234"), headers=headers
        )
        assert_envelope(late, 504, "deadline_exceeded")
        assert late.json()["error"]["retryable"] is True
        headers[wire.DEADLINE_HEADER] = "5000"
        found = httpx.post(
            f"{server.url}/v1/recall", json={"spec": "bot", "query": "gate code"}, headers=headers
        )
        assert found.status_code == 200 and found.json()["hits"] == []  # never written
    finally:
        stores.close()
        server.stop()


def test_a_read_past_its_deadline_is_abandoned_with_504(served: Served) -> None:
    headers = {wire.DEADLINE_HEADER: "200"}
    response = served.post(
        "recall", {"spec": LocalStoresForTest.STALLED, "query": "x"}, headers=headers
    )
    assert_envelope(response, 504, "deadline_exceeded")
    assert served.stores.stalls_ended == []  # answered while the backend still hung


@pytest.mark.parametrize("value", ["0", "-5", "soon", "1e3", str(wire.MAX_DEADLINE_MS + 1)])
def test_a_malformed_deadline_is_400(served: Served, value: str) -> None:
    response = served.post(
        "recall", {"spec": "bot", "query": "x"}, headers={wire.DEADLINE_HEADER: value}
    )
    error = assert_envelope(response, 400, "invalid_request")
    assert error["param"] == wire.DEADLINE_HEADER


def test_the_client_sends_its_remaining_budget(served: Served) -> None:
    seen: list[str] = []

    def record(request: httpx.Request) -> None:
        seen.append(request.headers[wire.DEADLINE_HEADER])

    client = HttpFactProvider(served.server.url, TOKEN_A, "bot", timeout_s=2.0)
    client._client.event_hooks["request"] = [record]
    client.recall(RecallRequest("anything"))
    client.close()
    assert len(seen) == 1 and 0 < int(seen[0]) <= 2000  # what is left of its 2 s, in ms


# -- bounded open stores, and no server path in any answer -------------------------------------


def open_files(under: Path) -> int:
    """Descriptors this process has open on files under ``under`` (not all of them: threads
    other tests left behind open and close their own sockets meanwhile)."""
    found = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # closed since the listing
            continue
        found += target.startswith(f"{under}{os.sep}")
    return found


@contextmanager
def no_free_descriptors() -> Iterator[None]:
    """No new file descriptor can be opened inside. RLIMIT_NOFILE bounds descriptor NUMBERS,
    and a new descriptor takes the lowest free number: the holes below the highest open one are
    filled first (with /dev/null), else a lower-numbered hole would still be handed out."""
    import resource

    highest = max(int(name) for name in os.listdir("/proc/self/fd"))
    fillers: list[int] = []
    while (fd := os.open(os.devnull, os.O_RDONLY)) <= highest:
        fillers.append(fd)
    os.close(fd)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        for fd in fillers:
            os.close(fd)


def test_one_tenant_s_300_specs_keep_open_files_bounded_and_another_tenant_writing(
    tmp_path: Path,
) -> None:
    from starlette.testclient import TestClient

    from specwire.runtime.hosts.http.memory_server import (
        MAX_OPEN_STORES,
        MAX_OPEN_STORES_PER_TENANT,
    )

    stores = LocalStores(tmp_path, ["tenant-a", "tenant-b"])
    app = memory_app(stores, {TOKEN_A: "tenant-a", TOKEN_B: "tenant-b"})
    a = {"Authorization": f"Bearer {TOKEN_A}"}
    b = {"Authorization": f"Bearer {TOKEN_B}"}
    try:
        with TestClient(app) as client:
            assert client.post("/v1/retain", json=retain_body("b's first"), headers=b).is_success
            before = open_files(tmp_path)
            for n in range(300):
                body = {"spec": f"spec-{n}", "text": f"fact number {n}", "tags": []}
                answer = client.post("/v1/retain", json=body, headers=a)
                assert answer.status_code == 200, answer.text
                # Three files per open store (db, WAL, shm): the pool's bound, not 300 specs'.
                # Evicted stores are closed by the pool's reaper thread, which a loaded machine
                # runs late: wait for it (bounded), then hold the bound.
                bound = 3 * MAX_OPEN_STORES_PER_TENANT + 3
                settle = time.monotonic() + 30
                while open_files(tmp_path) - before > bound and time.monotonic() < settle:
                    time.sleep(0.05)
                assert open_files(tmp_path) - before <= bound
            by_tenant = [path.parts[-4] for path in stores.open_paths()]
            assert by_tenant.count("tenant-a") <= MAX_OPEN_STORES_PER_TENANT
            assert len(by_tenant) <= MAX_OPEN_STORES
            # The other tenant's store still writes and reads.
            wrote = client.post("/v1/retain", json=retain_body("b's second fact"), headers=b)
            assert wrote.status_code == 200, wrote.text
            hits = client.post("/v1/recall", json={"spec": "bot", "query": "fact"}, headers=b)
            assert [hit["text"] for hit in hits.json()["hits"]] == ["b's second fact"]
            # A spec whose store was closed by the bound reopens with its facts.
            again = client.post("/v1/recall", json={"spec": "spec-0", "query": "fact"}, headers=a)
            assert [hit["text"] for hit in again.json()["hits"]] == ["fact number 0"]
    finally:
        stores.close()


def test_the_process_bound_holds_across_tenants(tmp_path: Path) -> None:
    tenants = [f"tenant-{n}" for n in range(6)]
    stores = LocalStores(tmp_path, tenants, max_open=8, max_open_per_tenant=3)
    try:
        for tenant in tenants:
            for spec in range(5):
                stores(tenant, f"spec-{spec}", None).retain(RetainRequest(f"{tenant} {spec}"))
                assert len(stores.open_paths()) <= 8
        per_tenant = [path.parts[-4] for path in stores.open_paths()]
        assert max(per_tenant.count(tenant) for tenant in tenants) <= 3
    finally:
        stores.close()


def test_errors_and_health_never_quote_a_server_path(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    stores = LocalStores(tmp_path, ["tenant-a"])
    facts = tmp_path / "tenants" / "tenant-a" / "facts"
    facts.mkdir(parents=True)
    (facts / "damaged.sqlite3").write_bytes(b"this is not a SQLite database " * 100)
    (facts / "folder.sqlite3").mkdir()
    # A session's folder that is a file: its store cannot be created under it.
    (tmp_path / "tenants" / "tenant-a" / "session-facts").mkdir()
    (tmp_path / "tenants" / "tenant-a" / "session-facts" / "s-1").write_text("x")
    a = {"Authorization": f"Bearer {TOKEN_A}"}
    answers: list[httpx.Response] = []
    try:
        with TestClient(memory_app(stores, {TOKEN_A: "tenant-a"})) as client:
            for spec in ("damaged", "folder"):
                for op, body in (
                    ("retain", {"spec": spec, "text": "x", "tags": []}),
                    ("recall", {"spec": spec, "query": "x"}),
                    ("health", {"spec": spec}),
                ):
                    answers.append(client.post(f"/v1/{op}", json=body, headers=a))
            for op, body in (
                ("retain", {"spec": "bot", "text": "x", "tags": [], "session": "s-1"}),
                ("recall", {"spec": "bot", "query": "x", "session": "s-1"}),
                ("health", {"spec": "bot", "session": "s-1"}),
                ("recall", {"spec": "bot", "query": "x", "session": ".."}),
            ):
                answers.append(client.post(f"/v1/{op}", json=body, headers=a))
    finally:
        stores.close()
    assert any(answer.status_code == 503 for answer in answers)
    for answer in answers:
        assert str(tmp_path) not in answer.text, answer.text
        assert "/tenants/" not in answer.text, answer.text


def test_public_messages_hide_absolute_paths_only() -> None:
    from specwire.runtime.hosts.http.memory_server import public_message

    assert public_message("[Errno 13] Permission denied: '/srv/a b/x.db'") == (
        "[Errno 13] Permission denied: '<path>'"
    )
    assert public_message("the store /srv/m/facts/x.sqlite3 is damaged") == (
        "the store <path> is damaged"
    )
    kept = "see http://host:1/a/b, ttl / 2, a/b relative, it's fine"
    assert public_message(kept) == kept


def test_running_out_of_files_mid_operation_never_quotes_a_server_path(tmp_path: Path) -> None:
    """The attack's error: a store open in the pool (its file not yet created) fails to create
    its file when the process is out of descriptors; the answer said where."""
    from starlette.testclient import TestClient

    stores = LocalStores(tmp_path, ["tenant-a"])
    a = {"Authorization": f"Bearer {TOKEN_A}"}
    try:
        with TestClient(memory_app(stores, {TOKEN_A: "tenant-a"})) as client:
            empty = client.post("/v1/recall", json={"spec": "fresh", "query": "x"}, headers=a)
            assert empty.status_code == 200 and empty.json()["hits"] == []
            with no_free_descriptors():
                answer = client.post("/v1/retain", json=retain_body("x", spec="fresh"), headers=a)
    finally:
        stores.close()
    assert answer.status_code >= 400 and answer.status_code != 500, answer.text
    assert str(tmp_path) not in answer.text, answer.text
    assert "<path>" in answer.text or "cannot be opened" in answer.text
