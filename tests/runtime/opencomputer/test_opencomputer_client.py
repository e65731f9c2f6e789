"""Our OpenComputer client against a minimal endpoint written from the contract in these tests
(``oc_support.ContractEndpoint``): the request shape, the deadline, the retry schedule (read
from the endpoint's own arrival records), idempotent and non-idempotent writes, ``uncertain``
and the reply limits."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from oc_support import HANG_GUARD_S, Answer, ContractEndpoint, Script, Seen, empty_memory

from specwire.runtime.facts.providers.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderInvalidRequest,
    ProviderProtocolError,
    ProviderTimeout,
    ProviderUnavailable,
)
from specwire.runtime.facts.providers.http import opencomputer_wire as oc
from specwire.runtime.facts.providers.http.opencomputer_client import OpenComputerClient

TOKEN = "endpoint-token-0123456789"
PARTITION = "ocmem_v1_test-partition"


@pytest.fixture
def make() -> Iterator[object]:
    made: list[tuple[ContractEndpoint, OpenComputerClient]] = []

    def build(
        script: Script = empty_memory, **client_kw: object
    ) -> tuple[ContractEndpoint, OpenComputerClient]:
        endpoint = ContractEndpoint(script)
        client = OpenComputerClient(endpoint.url, TOKEN, PARTITION, **client_kw)  # type: ignore[arg-type]
        made.append((endpoint, client))
        return endpoint, client

    yield build
    for endpoint, client in made:
        client.close()
        endpoint.stop()


def _iso(text: str) -> datetime:
    parsed = oc.parse_instant(text)
    assert parsed is not None
    return parsed


def test_a_recall_request_is_the_contracts_shape(make) -> None:
    def script(seen: Seen, number: int) -> Answer:
        return Answer(
            payload={
                "text": "The demo must run without paid services.",
                "sources": [
                    {"id": "fact:hosting", "title": "Hosting", "updatedAt": "2026-01-02T03:04:05Z"}
                ],
                "cursor": "snapshot-42",
            }
        )

    endpoint, client = make(script)
    before = datetime.now(UTC)
    recalled = client.recall("What did we decide about hosting?")
    (seen,) = endpoint.seen
    body = seen.body
    assert set(body) == {
        "version", "operation", "operationId", "partition", "access", "deadlineAt", "input",
        "maxBytes",
    }  # fmt: skip
    assert body["version"] == 1 and body["operation"] == "recall"
    assert body["partition"] == PARTITION and body["access"] == "read-write"
    assert body["input"] == {"text": "What did we decide about hosting?"}
    assert body["maxBytes"] == 8192
    assert body["deadlineAt"].endswith("Z")
    deadline = _iso(body["deadlineAt"])
    # The call's deadline is 10 s from its start.
    assert before.timestamp() + 9 <= deadline.timestamp() <= datetime.now(UTC).timestamp() + 10
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert seen.headers["content-type"] == "application/json"
    assert recalled.text == "The demo must run without paid services."
    assert recalled.sources[0].id == "fact:hosting" and recalled.cursor == "snapshot-42"


def test_no_text_is_sent_as_null(make) -> None:
    endpoint, client = make()
    assert client.recall(None).text == ""
    assert endpoint.seen[0].body["input"] == {"text": None}


def test_retries_follow_the_schedule_with_the_same_body(make) -> None:
    """503, 503, then 200: three attempts, identical bytes (same operationId), the pauses at
    least 250 ms and 1 s as the endpoint's own arrival records show."""

    def script(seen: Seen, number: int) -> Answer:
        if number < 2:
            return Answer(503, {"error": {"code": "unavailable", "message": "busy"}})
        return Answer(payload={"text": "ok", "sources": []})

    endpoint, client = make(script)
    assert client.recall("q").text == "ok"
    assert len(endpoint.seen) == 3
    assert len({seen.raw for seen in endpoint.seen}) == 1
    first, second, third = (seen.at for seen in endpoint.seen)
    assert second - first >= 0.25
    assert third - second >= 1.0


def test_at_most_two_retries_then_the_recall_fails(make) -> None:
    endpoint, client = make(lambda seen, n: Answer(500, {"error": {"code": "x", "message": "m"}}))
    with pytest.raises(ProviderUnavailable):
        client.recall("q")
    assert len(endpoint.seen) == 3


@pytest.mark.parametrize("status", [400, 404, 409, 422])
def test_other_4xx_are_not_retried(make, status: int) -> None:
    endpoint, client = make(
        lambda seen, n: Answer(status, {"error": {"code": "nope", "message": "refused"}})
    )
    with pytest.raises(ProviderError) as caught:
        client.recall("q")
    assert len(endpoint.seen) == 1
    assert "refused" in str(caught.value)


def test_a_refused_credential_is_an_auth_error_and_not_retried(make) -> None:
    endpoint, client = make(lambda seen, n: Answer(401, {"error": {"code": "u", "message": "m"}}))
    with pytest.raises(ProviderAuthError) as caught:
        client.recall("q")
    assert len(endpoint.seen) == 1
    assert TOKEN not in str(caught.value)


def test_a_retry_after_that_fits_takes_precedence(make) -> None:
    pauses: list[float] = []

    def script(seen: Seen, number: int) -> Answer:
        if number == 0:
            return Answer(
                429, {"error": {"code": "slow", "message": "m"}}, headers={"Retry-After": "3"}
            )
        if number == 1:
            return Answer(
                429, {"error": {"code": "slow", "message": "m"}}, headers={"Retry-After": "60"}
            )
        return Answer(payload={"text": "", "sources": []})

    endpoint, client = make(script, sleep=pauses.append)
    client.recall("q")
    # 3 s fits the 10 s deadline; 60 s does not, so the schedule's 1 s applies.
    assert pauses == [3.0, 1.0]
    assert len(endpoint.seen) == 3


def test_the_deadline_covers_every_attempt(make) -> None:
    """An endpoint that never answers in time: the call gives up at its deadline (here 0.8 s),
    every attempt carrying the same deadlineAt."""
    endpoint, client = make(
        lambda seen, n: Answer(payload={"text": "", "sources": []}, delay_s=HANG_GUARD_S),
        deadline_s=0.8,
    )
    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            client.recall("q")
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            failure.append(exc)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(HANG_GUARD_S), "the recall did not give up at its deadline"
    assert len(failure) == 1 and isinstance(failure[0], ProviderTimeout)
    deadlines = {seen.body["deadlineAt"] for seen in endpoint.seen}
    assert len(deadlines) == 1
    first = endpoint.seen[0]
    assert (_iso(deadlines.pop()) - first.wall).total_seconds() <= 0.8


def test_an_idempotent_write_is_retried_with_the_same_operation(make) -> None:
    def script(seen: Seen, number: int) -> Answer:
        if number == 0:
            return Answer(502, {"error": {"code": "gateway", "message": "m"}})
        return Answer(payload={"result": {"status": "stored"}})

    endpoint, client = make(script)
    outcome = client.call_tool("remember", {"fact": "x"}, write=True, idempotent=True, cursor="c1")
    assert outcome.result == {"status": "stored"}
    assert len(endpoint.seen) == 2 and endpoint.seen[0].raw == endpoint.seen[1].raw
    body = endpoint.seen[0].body
    assert body["operation"] == "tool" and body["tool"] == "remember"
    assert body["arguments"] == {"fact": "x"} and body["cursor"] == "c1"


def test_a_non_idempotent_write_is_never_retried(make) -> None:
    endpoint, client = make(
        lambda seen, n: Answer(503, {"error": {"code": "busy", "message": "m"}})
    )
    outcome = client.call_tool("remember", {"fact": "x"}, write=True, idempotent=False, cursor=None)
    assert len(endpoint.seen) == 1
    # The endpoint answered: its error, not "uncertain".
    assert outcome.error is not None and outcome.error.code == "busy" and not outcome.uncertain
    assert "cursor" not in endpoint.seen[0].body


def test_a_dropped_non_idempotent_write_is_uncertain(make) -> None:
    endpoint, client = make(lambda seen, n: Answer(drop=True))
    outcome = client.call_tool("remember", {"fact": "x"}, write=True, idempotent=False, cursor=None)
    assert outcome.uncertain and outcome.result == {"status": "uncertain"}
    assert len(endpoint.seen) == 1


def test_a_timed_out_non_idempotent_write_is_uncertain(make) -> None:
    endpoint, client = make(
        lambda seen, n: Answer(payload={"result": {"status": "stored"}}, delay_s=HANG_GUARD_S),
        deadline_s=0.5,
    )
    outcome = client.call_tool("remember", {"fact": "x"}, write=True, idempotent=False, cursor=None)
    assert outcome.uncertain and outcome.result == {"status": "uncertain"}
    assert len(endpoint.seen) == 1


def test_a_read_tool_is_retried_and_its_error_envelope_surfaces(make) -> None:
    def script(seen: Seen, number: int) -> Answer:
        if number == 0:
            return Answer(408, {"error": {"code": "timeout", "message": "m"}})
        return Answer(
            409, {"error": {"code": "conflict", "message": "changed", "details": {"k": 1}}}
        )

    endpoint, client = make(script)
    outcome = client.call_tool("lookup", {"q": "x"}, write=False, idempotent=False, cursor=None)
    assert len(endpoint.seen) == 2
    assert outcome.error == oc.Envelope("conflict", "changed", {"k": 1})


def test_a_read_only_binding_sends_no_write(make) -> None:
    endpoint, client = make(access="read")
    outcome = client.call_tool("remember", {"fact": "x"}, write=True, idempotent=True, cursor=None)
    assert outcome.failure is not None and endpoint.seen == []
    client.recall("q")
    assert endpoint.seen[0].body["access"] == "read"


@pytest.mark.parametrize(
    "answer",
    [
        Answer(payload={"text": "x" * 9000, "sources": []}),
        Answer(payload={"text": "", "sources": [{"id": f"s{n}"} for n in range(101)]}),
        Answer(payload={"text": "", "sources": [{"id": "é" * 600}]}),
        Answer(payload={"text": "", "sources": [], "cursor": "c" * 1025}),
        Answer(payload={"text": "", "sources": [{"title": "no id"}]}),
        Answer(payload={"sources": []}),
        Answer(raw=b"not json"),
        Answer(payload={"text": "x" * 70_000, "sources": []}),
        Answer(307, {}, headers={"Location": "http://127.0.0.1:9/elsewhere"}),
    ],
    ids=[
        "text-over-maxBytes", "101-sources", "source-id-over-1024-bytes", "cursor-over-1024-bytes",
        "source-without-id", "no-text", "not-json", "body-over-64KiB", "redirect",
    ],
)  # fmt: skip
def test_a_reply_outside_the_contract_is_an_error_never_empty_memory(make, answer: Answer) -> None:
    endpoint, client = make(lambda seen, n: answer)
    with pytest.raises((ProviderProtocolError, ProviderInvalidRequest)):
        client.recall("q")
    assert len(endpoint.seen) == 1


def test_a_request_over_64_kib_is_refused_before_sending(make) -> None:
    endpoint, client = make()
    outcome = client.call_tool(
        "remember", {"fact": "x" * 70_000}, write=True, idempotent=True, cursor=None
    )
    assert outcome.failure is not None and "65536" in outcome.failure
    assert endpoint.seen == []


def test_the_path_defaults_to_memory_and_credentials_in_the_url_are_refused() -> None:
    endpoint = ContractEndpoint(path="/memory")
    try:
        base = endpoint.url.removesuffix("/memory")
        with OpenComputerClient(base, TOKEN, PARTITION) as client:
            client.recall("q")
        assert endpoint.seen[0].path == "/memory"
    finally:
        endpoint.stop()
    with pytest.raises(ValueError):
        OpenComputerClient("http://u:p@127.0.0.1:1/memory", TOKEN, PARTITION)
    with pytest.raises(ValueError):
        OpenComputerClient("http://127.0.0.1:1/memory?x=1", TOKEN, PARTITION)
