"""The managed bundle's OpenAI-compatible app, in-process: keys, errors, sessions, the streaming
shape and budgets, driven by the official openai client and by raw HTTP through Starlette's
TestClient (tests/e2e/test_managed_serve.py serves the same bundle over a socket)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import httpx
import pytest
from inprocess_serving import example_agent, files_text, load_agent, serve_app, stores_kept_open
from starlette.testclient import TestClient

if TYPE_CHECKING:
    import openai

ACME_KEY = "sk-acme-0123456789abcdef0123"
GLOBEX_KEY = "sk-globex-0123456789abcdef01"
MODEL = "managed-concierge"


@pytest.fixture(scope="module")
def concierge_agent() -> ModuleType:
    return example_agent(MODEL)


BUDGETS_SPEC = """\
name: budgets
target: managed
agent:
  model: scripted
  instructions: Be brief.
tenants:
  - id: tight
    budget:
      maxOutputTokens: 1
  - id: burst
    budget:
      maxInputTokens: 3000
  - id: damaged
    budget:
      maxOutputTokens: 100
"""
BUDGET_KEYS = {tenant: f"sk-{tenant}-0123456789abcdef0" for tenant in ("tight", "burst", "damaged")}


@pytest.fixture(scope="module")
def budgets_agent(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder = tmp_path_factory.mktemp("budgets")
    (folder / "budgets.yaml").write_text(BUDGETS_SPEC, encoding="utf-8")
    return load_agent(folder / "budgets.yaml", folder / "out")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path / "work"


@pytest.fixture
def concierge(
    concierge_agent: ModuleType, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setenv("SPECWIRE_TENANT_KEY_TENANT_ACME", ACME_KEY)
    monkeypatch.setenv("SPECWIRE_TENANT_KEY_TENANT_GLOBEX", GLOBEX_KEY)
    app, _ = serve_app(concierge_agent, workdir, monkeypatch, "managed")
    with stores_kept_open(), TestClient(app) as client:
        yield client


def tenant_root(workdir: Path, tenant: str) -> Path:
    return workdir / ".specwire" / "tenants" / tenant


def official(http: TestClient, key: str, session: str | None = None) -> openai.OpenAI:
    import openai

    headers = {"X-Session-Id": session} if session else None
    return openai.OpenAI(
        base_url="http://testserver/v1",
        api_key=key,
        max_retries=0,
        default_headers=headers,
        http_client=http,
    )


def say(http: TestClient, key: str, session: str, text: str, *, model: str = MODEL) -> str:
    completion = official(http, key, session).chat.completions.create(
        model=model, messages=[{"role": "user", "content": text}]
    )
    return completion.choices[0].message.content or ""


def auth(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def sse_events(body: str) -> list[str]:
    """The ``data:`` payloads of a server-sent event stream, in order (comments skipped)."""
    events = [block for block in body.split("\n\n") if block]
    assert all(block.startswith(("data: ", ":")) for block in events), body
    return [block.removeprefix("data: ") for block in events if block.startswith("data: ")]


def test_models_lists_the_agent_and_healthz_needs_no_key(concierge: TestClient) -> None:
    [model] = official(concierge, ACME_KEY).models.list().data
    assert (model.id, model.owned_by) == (MODEL, "specwire")
    health = concierge.get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "spec": MODEL, "target": "managed"}


def test_a_fact_remembered_in_one_call_is_recalled_in_a_later_call(
    concierge: TestClient, workdir: Path
) -> None:
    first = official(concierge, ACME_KEY, "front-desk").chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "system", "content": "ignored: the spec's instructions rule"},
            {"role": "user", "content": "remember: the lobby code is 2468"},
        ],
    )
    assert "lobby code is 2468" in (first.choices[0].message.content or "")
    assert first.usage is not None and first.usage.prompt_tokens > 0
    later = say(concierge, ACME_KEY, "front-desk", "what is the lobby code?")
    assert "From memory: the lobby code is 2468" in later
    assert "2468" in files_text(tenant_root(workdir, "tenant-acme"))


def test_a_reply_names_its_phases_in_server_timing(concierge: TestClient) -> None:
    response = concierge.post(
        "/v1/chat/completions",
        json={"model": MODEL, "messages": [{"role": "user", "content": "hello"}]},
        headers=auth(ACME_KEY),
    )
    assert response.status_code == 200
    phases = [part.split(";")[0].strip() for part in response.headers["server-timing"].split(",")]
    assert phases == ["wire", "turn"]


def test_streaming_sends_role_content_stop_usage_then_done(concierge: TestClient) -> None:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "remember: streams end with DONE"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with concierge.stream(
        "POST", "/v1/chat/completions", json=body, headers=auth(ACME_KEY)
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-session-id"].startswith("chat-")
        raw = response.read().decode("utf-8")
    *chunks, done = sse_events(raw)
    assert done == "[DONE]"
    parsed = [json.loads(chunk) for chunk in chunks]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in parsed)
    assert len({chunk["id"] for chunk in parsed}) == 1
    first, *middle, stop, usage = parsed
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    # The agent's Remember call shows as it runs: empty deltas with the tool's progress.
    progress = [chunk for chunk in middle if "specwire_tool" in chunk]
    assert [(c["specwire_tool"]["name"], c["specwire_tool"]["status"]) for c in progress] == [
        ("Remember", "running"),
        ("Remember", "done"),
    ]
    assert all(chunk["choices"][0]["delta"] == {} for chunk in progress)
    assert progress[0]["specwire_tool"]["id"] == progress[1]["specwire_tool"]["id"]
    text = "".join(
        chunk["choices"][0]["delta"]["content"] for chunk in middle if chunk not in progress
    )
    assert "streams end with DONE" in text
    assert middle.index(progress[-1]) < len(middle) - 1  # the answer comes after the tool
    assert stop["choices"][0] == {
        "index": 0,
        "delta": {},
        "finish_reason": "stop",
        "logprobs": None,
    }
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] > 0


def test_the_streamed_text_is_the_non_streamed_text(concierge: TestClient) -> None:
    client = official(concierge, GLOBEX_KEY, "same-text")
    client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "remember: parity matters"}]
    )
    question = [{"role": "user", "content": "recall: parity"}]
    plain = client.chat.completions.create(model=MODEL, messages=question)  # type: ignore[arg-type]
    stream = client.chat.completions.create(model=MODEL, messages=question, stream=True)  # type: ignore[arg-type]
    chunks = list(stream)
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert streamed == plain.choices[0].message.content
    assert chunks[-1].usage is None  # no stream_options: no usage chunk


def test_the_session_comes_from_the_header_the_user_field_or_is_new(
    concierge: TestClient,
) -> None:
    client = official(concierge, ACME_KEY)
    message = [{"role": "user", "content": "hello"}]
    by_user = client.chat.completions.with_raw_response.create(
        model=MODEL,
        messages=message,  # type: ignore[arg-type]
        user="guest-7",
    )
    assert by_user.headers["x-session-id"] == "guest-7"
    fresh = [
        client.chat.completions.with_raw_response.create(model=MODEL, messages=message)  # type: ignore[arg-type]
        for _ in range(2)
    ]
    ids = [raw.headers["x-session-id"] for raw in fresh]
    assert all(session.startswith("chat-") for session in ids) and ids[0] != ids[1]
    header = official(concierge, ACME_KEY, "desk-1").chat.completions.with_raw_response.create(
        model=MODEL,
        messages=message,  # type: ignore[arg-type]
        user="guest-7",
    )
    assert header.headers["x-session-id"] == "desk-1"  # the header wins over the user field


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({}, "Missing API key"),
        ({"authorization": "Basic c2stYWNtZQ=="}, "Missing API key"),
        ({"authorization": "Bearer "}, "Missing API key"),
        (auth("sk-not-a-tenant-key-0000000"), "Incorrect API key"),
        (auth(ACME_KEY[:-1]), "Incorrect API key"),
        (auth(ACME_KEY + "0"), "Incorrect API key"),
    ],
)
def test_a_missing_or_wrong_key_is_401_and_runs_nothing(
    concierge: TestClient, workdir: Path, headers: dict[str, str], says: str
) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "remember: keyless"}]}
    for response in (
        concierge.post("/v1/chat/completions", json=body, headers=headers),
        concierge.get("/v1/models", headers=headers),
    ):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.headers["x-should-retry"] == "false"
        error = response.json()["error"]
        assert error["code"] == "invalid_api_key" and error["message"].startswith(says)
    assert "keyless" not in files_text(workdir / ".specwire")


def test_the_official_client_raises_on_refusals(concierge: TestClient, workdir: Path) -> None:
    import openai

    with pytest.raises(openai.AuthenticationError):
        official(concierge, "sk-not-a-tenant-key-0000000").models.list()
    with pytest.raises(openai.NotFoundError) as caught:
        official(concierge, ACME_KEY).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "remember: wrong model"}]
        )
    assert caught.value.code == "model_not_found"
    assert "wrong model" not in files_text(workdir / ".specwire")


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"\xff\xfe", 400, "not UTF-8"),
        (b"[]", 400, "JSON object"),
        (b'{"model": "x", "deep": ' + b"[" * 50000 + b"]" * 50000 + b"}", 400, "nests too deeply"),
        (b'{"model": "x", "n": ' + b"9" * 5000 + b"}", 400, "cannot be read"),
        ({"model": MODEL}, 400, "messages"),
        ({"model": MODEL, "messages": []}, 400, "messages"),
        ({"model": MODEL, "messages": "hi"}, 400, "messages"),
        ({"model": MODEL, "messages": [{"role": "user", "content": 5}]}, 400, "content"),
        (
            {"model": MODEL, "messages": [{"role": "assistant", "content": "x"}]},
            400,
            "from the user",
        ),
        ({"model": MODEL, "messages": [{"role": "user", "content": "   "}]}, 400, "empty"),
        (
            {
                "model": MODEL,
                "messages": [{"role": "user", "content": [{"type": "image_url"}]}],
            },
            400,
            "only text content parts",
        ),
        (
            {"model": MODEL, "stream": "yes", "messages": [{"role": "user", "content": "x"}]},
            400,
            "stream",
        ),
        (
            {"model": MODEL, "user": "../../b", "messages": [{"role": "user", "content": "x"}]},
            400,
            "user",
        ),
        (
            {"model": MODEL, "messages": [{"role": "user", "content": "x" * 100_001}]},
            400,
            "longer than",
        ),
        (
            {"model": MODEL, "messages": [{"role": "user", "content": "x" * (2 << 20)}]},
            413,
            "limit",
        ),
    ],
)
def test_bad_requests_get_a_clear_4xx_and_change_nothing(
    concierge: TestClient,
    workdir: Path,
    body: dict[str, object] | bytes,
    status: int,
    says: str,
) -> None:
    before = files_text(workdir / ".specwire")
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = concierge.post(
        "/v1/chat/completions",
        content=content,
        headers={**auth(ACME_KEY), "content-type": "application/json"},
    )
    assert response.status_code == status
    assert response.headers["x-should-retry"] == "false"
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert says.lower() in error["message"].lower() + str(error["param"]).lower()
    assert files_text(workdir / ".specwire") == before


@pytest.mark.parametrize("session", ["../globex", "a/b", "..", "x" * 201, "a b", ""])
def test_traversal_in_session_ids_is_refused(
    concierge: TestClient, workdir: Path, session: str
) -> None:
    response = concierge.post(
        "/v1/chat/completions",
        json={"model": MODEL, "messages": [{"role": "user", "content": "remember: traversal"}]},
        headers={**auth(ACME_KEY), "x-session-id": session},
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "X-Session-Id"
    assert "traversal" not in files_text(workdir / ".specwire")


def test_unknown_routes_and_methods_get_openai_error_bodies(concierge: TestClient) -> None:
    missing = concierge.get("/v1/completions", headers=auth(ACME_KEY))
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found"
    wrong = concierge.get("/v1/chat/completions", headers=auth(ACME_KEY))
    assert wrong.status_code == 405
    assert wrong.json()["error"]["message"] == "GET is not allowed on /v1/chat/completions"


def test_tenants_are_fenced(concierge: TestClient, workdir: Path) -> None:
    say(concierge, ACME_KEY, "vault", "remember: acme vault code 1111-SECRET-A")
    say(concierge, ACME_KEY, "vault", "plan: acme launch: book venue; send invites")
    assert "1111-SECRET-A" not in say(concierge, GLOBEX_KEY, "vault", "recall: vault code")
    assert "book venue" not in say(concierge, GLOBEX_KEY, "vault", "what is next?")
    globex = files_text(tenant_root(workdir, "tenant-globex"))
    assert "1111-SECRET-A" not in globex and "acme launch" not in globex
    assert "1111-SECRET-A" in files_text(tenant_root(workdir, "tenant-acme"))


def test_a_tenant_without_a_key_gets_401_and_is_named_at_start(
    concierge_agent: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SPECWIRE_TENANT_KEY_TENANT_ACME", ACME_KEY)
    monkeypatch.delenv("SPECWIRE_TENANT_KEY_TENANT_GLOBEX", raising=False)
    app, banner = serve_app(concierge_agent, tmp_path / "work", monkeypatch, "managed")
    assert "1 of 2 tenant(s) with a key" in banner
    assert "tenant 'tenant-globex' has no API key" in capsys.readouterr().err
    with TestClient(app) as client:
        assert client.get("/v1/models", headers=auth(GLOBEX_KEY)).status_code == 401
        assert client.get("/v1/models", headers=auth(ACME_KEY)).status_code == 200


def budgeted_app(
    agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tenant: str
) -> tuple[TestClient, Path]:
    """The budgets bundle served; ``tenant``'s usage ledger."""
    for name, key in BUDGET_KEYS.items():
        monkeypatch.setenv(f"SPECWIRE_TENANT_KEY_{name.upper()}", key)
    app, _ = serve_app(agent, tmp_path / "work", monkeypatch, "managed")
    ledger = tmp_path / "work" / ".specwire" / "tenants" / tenant / "usage" / "budgets.json"
    return TestClient(app), ledger


def test_an_exhausted_budget_is_a_quota_error_and_runs_nothing(
    budgets_agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openai

    client, ledger = budgeted_app(budgets_agent, tmp_path, monkeypatch, "tight")
    with stores_kept_open(), client:
        assert say(
            client, BUDGET_KEYS["tight"], "s1", "remember: the first call fits", model="budgets"
        )
        used = json.loads(ledger.read_text(encoding="utf-8"))
        assert used["output"] >= 1 and used["turns"] == 1
        with pytest.raises(openai.RateLimitError) as caught:
            say(client, BUDGET_KEYS["tight"], "s1", "remember: over budget", model="budgets")
        assert caught.value.code == "insufficient_quota"
        assert caught.value.response.headers["x-should-retry"] == "false"
        streamed = client.post(
            "/v1/chat/completions",
            json={
                "model": "budgets",
                "stream": True,
                "messages": [{"role": "user", "content": "remember: streamed over budget"}],
            },
            headers=auth(BUDGET_KEYS["tight"]),
        )
        assert streamed.status_code == 429  # refused before the stream starts
    assert json.loads(ledger.read_text(encoding="utf-8")) == used
    assert "over budget" not in files_text(tmp_path / "work" / ".specwire")


def test_a_damaged_usage_ledger_fails_closed_with_503(
    budgets_agent: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, ledger = budgeted_app(budgets_agent, tmp_path, monkeypatch, "damaged")
    ledger.parent.mkdir(parents=True)
    ledger.write_text("{not a ledger", encoding="utf-8")
    with client:
        response = client.post(
            "/v1/chat/completions",
            json={"model": "budgets", "messages": [{"role": "user", "content": "remember: x"}]},
            headers=auth(BUDGET_KEYS["damaged"]),
        )
    assert response.status_code == 503
    assert response.json()["error"]["message"] == "the tenant's usage ledger cannot be read"
    assert ledger.read_text(encoding="utf-8") == "{not a ledger"
    assert "usage ledger" in capsys.readouterr().err


def test_concurrent_requests_overshoot_a_budget_by_one_turn_at_most(
    budgets_agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, ledger = budgeted_app(budgets_agent, tmp_path, monkeypatch, "burst")
    app = client.app

    async def burst() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:

            async def attempt(n: int) -> int:
                response = await http.post(
                    "/v1/chat/completions",
                    json={
                        "model": "budgets",
                        "messages": [{"role": "user", "content": f"note {n}"}],
                    },
                    headers={**auth(BUDGET_KEYS["burst"]), "x-session-id": f"s{n % 4}"},
                )
                return response.status_code

            return list(await asyncio.gather(*(attempt(n) for n in range(20))))

    with stores_kept_open():
        statuses = asyncio.run(burst())
    assert set(statuses) == {200, 429}
    used = json.loads(ledger.read_text(encoding="utf-8"))
    per_turn = used["input"] / used["turns"]
    assert statuses.count(200) == used["turns"]
    assert used["input"] <= 3000 + per_turn  # one turn of overshoot at most
