"""`agent.py serve` on the built managed-concierge bundle, driven by the official openai client.

Each tenant has its own key (``SPECWIRE_TENANT_KEY_<TENANT>``); the bundle runs as a subprocess
on 127.0.0.1 with the scripted model.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from serving_support import ROOT, Served, build_bundle, clean_env, served

ACME_KEY = "sk-acme-0123456789abcdef0123"
GLOBEX_KEY = "sk-globex-0123456789abcdef01"
MODEL = "managed-concierge"


@pytest.fixture(scope="module")
def concierge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("concierge")
    agent = build_bundle(ROOT / "examples" / "managed-concierge.yaml", base / "out")
    env = clean_env(
        SPECWIRE_TENANT_KEY_TENANT_ACME=ACME_KEY, SPECWIRE_TENANT_KEY_TENANT_GLOBEX=GLOBEX_KEY
    )
    with served(agent, base / "work", env) as server:
        yield server
    assert "Traceback" not in server.stderr


def client(server: Served, key: str, session: str | None = None) -> openai.OpenAI:
    headers = {"X-Session-Id": session} if session else None
    return openai.OpenAI(
        base_url=f"{server.url}/v1", api_key=key, max_retries=0, default_headers=headers
    )


def say(server: Served, key: str, session: str, text: str, *, model: str = MODEL) -> str:
    completion = client(server, key, session).chat.completions.create(
        model=model, messages=[{"role": "user", "content": text}]
    )
    return completion.choices[0].message.content or ""


def tenant_root(server: Served, tenant: str) -> Path:
    return server.workdir / ".specwire" / "tenants" / tenant


def files_text(root: Path) -> str:
    if not root.exists():
        return ""
    return "\n".join(
        path.read_bytes().decode("utf-8", "replace") for path in root.rglob("*") if path.is_file()
    )


def test_models_lists_the_agent(concierge: Served) -> None:
    [model] = client(concierge, ACME_KEY).models.list().data
    assert model.id == MODEL


def test_a_fact_remembered_in_one_call_is_recalled_in_a_later_call(concierge: Served) -> None:
    first = client(concierge, ACME_KEY, "front-desk").chat.completions.create(
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


def test_streaming_sends_the_reply_as_chunks(concierge: Served) -> None:
    stream = client(concierge, ACME_KEY, "streamer").chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "remember: streams end with DONE"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert "streams end with DONE" in text
    assert [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_the_session_can_come_from_the_user_field_or_is_new_and_returned(concierge: Served) -> None:
    plain = client(concierge, ACME_KEY)
    raw = plain.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": "hello"}], user="guest-7"
    )
    assert raw.headers["x-session-id"] == "guest-7"
    fresh = plain.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": "hello"}]
    )
    assert fresh.headers["x-session-id"].startswith("chat-")


def test_wrong_missing_key_and_unknown_model_are_refused(concierge: Served) -> None:
    with pytest.raises(openai.AuthenticationError):
        client(concierge, "sk-not-a-tenant-key-0000000").models.list()
    with pytest.raises(openai.AuthenticationError):
        say(concierge, ACME_KEY[:-1], "s", "remember: near miss")
    with pytest.raises(openai.NotFoundError) as caught:
        client(concierge, ACME_KEY).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "remember: wrong model"}]
        )
    assert caught.value.code == "model_not_found"
    assert "near miss" not in files_text(tenant_root(concierge, "tenant-acme"))
    assert "wrong model" not in files_text(tenant_root(concierge, "tenant-acme"))


def test_tenants_are_fenced(concierge: Served) -> None:
    say(concierge, ACME_KEY, "vault", "remember: acme vault code 1111-SECRET-A")
    say(concierge, ACME_KEY, "vault", "plan: acme launch: book venue; send invites")
    answer = say(concierge, GLOBEX_KEY, "vault", "recall: vault code")
    assert "1111-SECRET-A" not in answer
    plan = say(concierge, GLOBEX_KEY, "vault", "what is next?")
    assert "book venue" not in plan
    globex_files = files_text(tenant_root(concierge, "tenant-globex"))
    assert "1111-SECRET-A" not in globex_files and "acme launch" not in globex_files
    assert "1111-SECRET-A" in files_text(tenant_root(concierge, "tenant-acme"))


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not valid JSON"),
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
            {"model": MODEL, "messages": [{"role": "user", "content": "x" * (2 << 20)}]},
            413,
            "limit",
        ),
    ],
)
def test_bad_requests_get_a_clear_4xx_and_change_nothing(
    concierge: Served, body: dict[str, object] | bytes, status: int, says: str
) -> None:
    before = files_text(tenant_root(concierge, "tenant-acme"))
    headers = {"authorization": f"Bearer {ACME_KEY}", "content-type": "application/json"}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    with concierge.client() as http:
        response = http.post("/v1/chat/completions", content=content, headers=headers)
    assert response.status_code == status
    error = response.json()["error"]
    assert says.lower() in error["message"].lower() + str(error["param"]).lower()
    assert files_text(tenant_root(concierge, "tenant-acme")) == before


@pytest.mark.parametrize("session", ["../globex", "a/b", "..", "x" * 201, "a b"])
def test_traversal_in_session_ids_is_refused(concierge: Served, session: str) -> None:
    with pytest.raises(openai.BadRequestError):
        say(concierge, ACME_KEY, session, "remember: traversal")


def test_concurrent_turns_across_tenants_lose_nothing(concierge: Served) -> None:
    jobs = [
        (key, f"load-{n % 3}", f"remember: load fact {tenant}-{n}")
        for n in range(10)
        for key, tenant in ((ACME_KEY, "acme"), (GLOBEX_KEY, "globex"))
    ]
    with ThreadPoolExecutor(max_workers=20) as pool:
        replies = list(pool.map(lambda job: say(concierge, *job), jobs))
    assert all(reply.startswith("Done: remembered") for reply in replies)
    for tenant in ("acme", "globex"):
        db = tenant_root(concierge, f"tenant-{tenant}") / "facts" / f"{MODEL}.sqlite3"
        with sqlite3.connect(db) as conn:
            texts = {row[0] for row in conn.execute("SELECT text FROM facts")}
        assert {f"load fact {tenant}-{n}" for n in range(10)} <= texts
        assert not any(text.startswith("load fact") and tenant not in text for text in texts)
    for log in (concierge.workdir / ".specwire" / "tenants").rglob("sess_*.jsonl"):
        seqs = [json.loads(line)["seq"] for line in log.read_text(encoding="utf-8").splitlines()]
        assert seqs == list(range(1, len(seqs) + 1))


def test_an_exhausted_budget_is_a_quota_error_and_runs_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "tight.yaml"
    spec.write_text(
        "name: tight\ntarget: managed\nagent:\n  model: scripted\n  instructions: Be brief.\n"
        "tenants:\n  - id: small\n    budget:\n      maxOutputTokens: 1\n"
        "memory:\n  autoRecall: true\n",
        encoding="utf-8",
    )
    agent = build_bundle(spec, tmp_path / "out")
    key = "sk-small-0123456789abcdef0"
    with served(agent, tmp_path / "work", clean_env(SPECWIRE_TENANT_KEY_SMALL=key)) as server:
        assert say(server, key, "s1", "remember: the first call fits", model="tight").startswith(
            "Done"
        )
        ledger = tmp_path / "work" / ".specwire" / "tenants" / "small" / "usage" / "tight.json"
        used = json.loads(ledger.read_text(encoding="utf-8"))
        assert used["output"] >= 1 and used["turns"] == 1
        with pytest.raises(openai.RateLimitError) as caught:
            say(server, key, "s1", "remember: over budget", model="tight")
        assert caught.value.code == "insufficient_quota"
        assert json.loads(ledger.read_text(encoding="utf-8")) == used
        assert "over budget" not in files_text(tmp_path / "work" / ".specwire")
    assert "Traceback" not in server.stderr


def test_concurrent_requests_overshoot_a_budget_by_one_turn_at_most(tmp_path: Path) -> None:
    spec = tmp_path / "burst.yaml"
    spec.write_text(
        "name: burst\ntarget: managed\nagent:\n  model: scripted\n  instructions: Be brief.\n"
        "tenants:\n  - id: small\n    budget:\n      maxInputTokens: 3000\n",
        encoding="utf-8",
    )
    agent = build_bundle(spec, tmp_path / "out")
    key = "sk-small-0123456789abcdef0"

    def attempt(n: int) -> str:
        try:
            return say(server, key, f"s{n % 4}", f"note {n}", model="burst")
        except openai.RateLimitError:
            return "429"

    env = clean_env(SPECWIRE_TENANT_KEY_SMALL=key)
    with served(agent, tmp_path / "work", env) as server, ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(attempt, range(20)))
    ledger = tmp_path / "work" / ".specwire" / "tenants" / "small" / "usage" / "burst.json"
    used = json.loads(ledger.read_text(encoding="utf-8"))
    per_turn = used["input"] / used["turns"]
    assert answers.count("429") == 20 - used["turns"] > 0
    assert used["input"] <= 3000 + per_turn  # one turn of overshoot at most
    assert "Traceback" not in server.stderr


def test_sigterm_stops_gracefully_with_status_0(tmp_path: Path) -> None:
    agent = build_bundle(ROOT / "examples" / "managed-concierge.yaml", tmp_path / "out")
    env = clean_env(SPECWIRE_TENANT_KEY_TENANT_ACME=ACME_KEY)
    with served(agent, tmp_path / "work", env) as server:
        assert say(server, ACME_KEY, "s", "remember: before the stop").startswith("Done")
    assert server.process.returncode == 0
    assert server.stderr.rstrip().endswith("stopped")


def test_concurrent_large_turns_after_a_tiny_one_overshoot_by_one_turn_at_most(
    tmp_path: Path,
) -> None:
    """Each turn is reserved by the size of its own message: a tiny first turn does not make
    twelve large ones look cheap (the average-turn reservation recorded 297,094 of 100,000)."""
    budget = 100_000
    spec = tmp_path / "bulk.yaml"
    spec.write_text(
        "name: bulk\ntarget: managed\nagent:\n  model: scripted\n  instructions: Be brief.\n"
        f"tenants:\n  - id: small\n    budget:\n      maxInputTokens: {budget}\n",
        encoding="utf-8",
    )
    agent = build_bundle(spec, tmp_path / "out")
    key = "sk-small-0123456789abcdef0"
    ledger = tmp_path / "work" / ".specwire" / "tenants" / "small" / "usage" / "bulk.json"
    large = "a long report line about the quarterly numbers. " * 1_200  # 58,800 chars

    def attempt(n: int) -> str:
        try:
            return say(server, key, f"large-{n}", f"{n}: {large}", model="bulk")
        except openai.RateLimitError:
            return "429"

    env = clean_env(SPECWIRE_TENANT_KEY_SMALL=key)
    with served(agent, tmp_path / "work", env) as server:
        assert say(server, key, "tiny", "hi", model="bulk")
        tiny = json.loads(ledger.read_text(encoding="utf-8"))["input"]
        with ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(attempt, range(12)))
    used = json.loads(ledger.read_text(encoding="utf-8"))
    large_turns = used["turns"] - 1
    one_large_turn = (used["input"] - tiny) / large_turns
    assert answers.count("429") == 12 - large_turns > 0
    assert one_large_turn > 5 * tiny  # the turns are large, the first one tiny
    assert used["input"] <= budget + one_large_turn, used
    assert used["estimated"] > 0
    assert "Traceback" not in server.stderr
