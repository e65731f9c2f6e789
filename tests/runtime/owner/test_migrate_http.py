"""`codegen memory migrate --to http` / `--from http`: a file store moved into the reference
memory server (uvicorn, 127.0.0.1) through the owner transfer and back gives the same sorted
export; a second run copies 0; the agent's token cannot export; a conflicting record is
refused with nothing written."""

from __future__ import annotations

import json
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from specwire.runtime.facts.providers.http import contract as wire
from specwire.runtime.hosts.http.memory_server import LocalStores, memory_app
from specwire.runtime.owner.command import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_seed import SPEC, seed_store  # noqa: E402

Run = Callable[..., tuple[int, str, str]]
TENANT = "acme"


class Service:
    """The reference memory server with one tenant, its agent token and its owner token."""

    def __init__(self, root: Path) -> None:
        self.agent = secrets.token_urlsafe(24)
        self.owner = secrets.token_urlsafe(24)
        self.stores = LocalStores(root, [TENANT])
        app = memory_app(self.stores, {self.agent: TENANT}, owner_tokens={self.owner: TENANT})
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline and self._thread.is_alive(), "no server"
            time.sleep(0.01)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()
        self.stores.close()


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    served = tmp_path / "served"
    served.mkdir()
    running = Service(served)
    monkeypatch.setenv("MEMORY_OWNER_TOKEN", running.owner)
    monkeypatch.setenv("AGENT_TOKEN", running.agent)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def invoke(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def exported(run: Run, root: Path) -> list[str]:
    status, out, err = run("--root", str(root), "--spec", SPEC, "export")
    assert status == 0, err
    return sorted(out.splitlines())


def to_service(run: Run, source: Path, url: str, *more: str) -> tuple[int, str, str]:
    return run(
        "--root", str(source), "--json", "migrate", "--from", "file", "--to", "http",
        "--to-url", url, "--yes", *more,
    )  # fmt: skip


def from_service(run: Run, target: Path, url: str, *more: str) -> tuple[int, str, str]:
    return run(
        "--root", str(target), "--spec", SPEC, "--json", "migrate", "--from", "http",
        "--from-url", url, "--to", "file", "--to-root", str(target), "--yes", *more,
    )  # fmt: skip


def test_file_to_service_to_file_gives_the_same_export(
    tmp_path: Path, run: Run, service: Service
) -> None:
    source, back = tmp_path / "a", tmp_path / "b"
    seed_store(source, 150)
    status, out, err = to_service(run, source, service.url, "--batch", "64")
    assert status == 0, err
    there = json.loads(out)
    assert there["verified"] is True and there["copied"]["facts"] > 150
    assert there["copied"]["held"] >= 2

    again, out, err = to_service(run, source, service.url)
    assert again == 0, err
    assert json.loads(out)["copied"] == {"facts": 0, "held": 0}

    # Pages of 500 by default: the facts span several pages only with more; page through
    # a small page size on the wire as well.
    status, out, err = from_service(run, back, service.url)
    assert status == 0, err
    home = json.loads(out)
    assert home["copied"] == there["copied"]
    assert home["target"] == there["source"]
    assert exported(run, back) == exported(run, source)
    assert not (back / ".specwire" / "tenants").exists()

    again, out, err = from_service(run, back, service.url)
    assert again == 0 and json.loads(out)["copied"] == {"facts": 0, "held": 0}, err


def test_export_pages_by_id_until_the_last(tmp_path: Path, service: Service) -> None:
    from specwire.runtime.facts.providers.http.transfer_client import HttpMemoryTransfer

    seed_store(tmp_path / "a", 40)
    status = main(
        ["--root", str(tmp_path / "a"), "migrate", "--from", "file", "--to", "http",
         "--to-url", service.url, "--yes"]
    )  # fmt: skip
    assert status == 0
    with (
        HttpMemoryTransfer(service.url, service.owner, SPEC, page=7) as paged,
        HttpMemoryTransfer(service.url, service.owner, SPEC, page=1000) as whole,
    ):
        small = paged.export_facts()
        assert [s.fact.id for s in small] == sorted(s.fact.id for s in small)
        assert small == whole.export_facts() and len(small) > 40
        assert paged.quarantined() == whole.quarantined()


def owner_call(service: Service, token: str, path: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(
        f"{service.url}/v1/{path}",
        json={"version": 1, "spec": SPEC, **body},
        headers={
            "Authorization": f"Bearer {token}",
            wire.FEATURES_HEADER: f"{wire.FEATURE_SCOPES}, {wire.FEATURE_OWNER}",
        },
        timeout=30,
    )


def test_the_agent_token_cannot_export_or_restore(
    tmp_path: Path, run: Run, service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_store(tmp_path / "a", 10)
    for path, body in (("export", {}), ("restore", {"facts": []})):
        answer = owner_call(service, service.agent, path, body)
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"]["code"] == "scope_violation"
        assert owner_call(service, "not-a-token-at-all", path, body).status_code == 401
    # The owner token opens only the transfer, never the agent's endpoints.
    recall = httpx.post(
        f"{service.url}/v1/recall",
        json={"version": 1, "spec": SPEC, "query": "deploy"},
        headers={"Authorization": f"Bearer {service.owner}"},
        timeout=30,
    )
    assert recall.status_code == 401
    monkeypatch.setenv("MEMORY_OWNER_TOKEN", service.agent)
    status, out, err = to_service(run, tmp_path / "a", service.url)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "owner token" in err and service.agent not in err


def test_the_transfer_needs_the_owner_feature_and_a_server_that_serves_it(
    service: Service, tmp_path: Path
) -> None:
    answer = httpx.post(
        f"{service.url}/v1/export",
        json={"version": 1, "spec": SPEC},
        headers={"Authorization": f"Bearer {service.owner}"},
        timeout=30,
    )
    assert answer.status_code == 400 and answer.json()["error"]["param"] == wire.FEATURES_HEADER
    caps = httpx.post(
        f"{service.url}/v1/capabilities",
        json={"version": 1, "spec": SPEC},
        headers={"Authorization": f"Bearer {service.agent}", wire.FEATURES_HEADER: "owner"},
        timeout=30,
    )
    assert caps.json()["ownerTransfer"] is True
    plain = httpx.post(
        f"{service.url}/v1/capabilities",
        json={"version": 1, "spec": SPEC},
        headers={"Authorization": f"Bearer {service.agent}"},
        timeout=30,
    )
    assert "ownerTransfer" not in plain.json()
    with pytest.raises(Exception, match="owner token is also an agent token"):
        memory_app(service.stores, {service.agent: TENANT}, owner_tokens={service.agent: TENANT})


def test_a_conflicting_record_is_refused_with_nothing_written(
    tmp_path: Path, run: Run, service: Service
) -> None:
    seed_store(tmp_path / "a", 20)
    assert to_service(run, tmp_path / "a", service.url)[0] == 0
    page = owner_call(service, service.owner, "export", {"limit": 2}).json()
    first, second = page["facts"]
    changed = {**first, "text": first["text"] + " (edited)"}
    fresh = {**second, "id": "mem_" + "f" * 16}
    answer = owner_call(service, service.owner, "restore", {"facts": [fresh, changed]})
    assert answer.status_code == 409, answer.text
    assert first["id"] in answer.json()["error"]["message"]
    again = owner_call(service, service.owner, "export", {"limit": 1000}).json()
    assert fresh["id"] not in {fact["id"] for fact in again["facts"]}
    same = owner_call(service, service.owner, "restore", {"facts": [first, second]})
    assert same.json() == {
        "factsWritten": 0,
        "heldWritten": 0,
        "factsPresent": 2,
        "heldPresent": 0,
    }


def test_a_restore_refuses_records_no_store_would_hold(
    tmp_path: Path, run: Run, service: Service
) -> None:
    seed_store(tmp_path / "a", 10)
    assert to_service(run, tmp_path / "a", service.url)[0] == 0
    before = owner_call(service, service.owner, "export", {"limit": 1000}).json()
    fact = {key: value for key, value in before["facts"][0].items() if key != "tombstone"}
    dangling = {**fact, "id": "mem_" + "a" * 16, "supersededBy": "mem_" + "b" * 16}
    no_subject = {**fact, "id": "mem_" + "c" * 16, "scope": "user", "subject": None}
    twice = {**fact, "id": "mem_" + "d" * 16}
    cases = [
        ([dangling], 422, "refused"),
        ([no_subject], 400, "invalid_request"),
        ([twice, {**twice, "text": "another text"}], 400, "invalid_request"),
    ]
    for facts, status, code in cases:
        answer = owner_call(service, service.owner, "restore", {"facts": facts})
        assert answer.status_code == status and answer.json()["error"]["code"] == code, answer.text
    assert owner_call(service, service.owner, "export", {"limit": 1000}).json() == before
