"""The start checks (``runtime.hosts.preflight``): every unset variable in one line, the model's
family, and each memory provider probed for real within 1 s (closed ports, a server that never
answers, a missing vault folder); the research and crew hosts stop before anything is created."""

from __future__ import annotations

import socket
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hosts_support import echo_catalog

from specwire.runtime.hosts.crew import run_crew
from specwire.runtime.hosts.preflight import (
    StartCheck,
    bundle_fragment,
    passes_start_checks,
    start_problems,
)
from specwire.runtime.hosts.research import run_research
from specwire.runtime.hosts.start_needs import SecretNeed
from specwire.runtime.hosts.types import RoleConfig, TurnSetup
from specwire.runtime.safety.secrets import SecretRef

PASSWORD = "never-in-a-message-5d4c3b"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fragment(**memory: Any) -> dict[str, Any]:
    return {"spec_name": "demo", "version": 5, "specwire": "0.3.0", "memory": memory}


@pytest.fixture(autouse=True)
def _no_model_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECWIRE_MODEL", raising=False)


def test_every_unset_variable_is_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODEL_ID", "DATABASE_URL", "OPENAI_API_KEY", "HOOK", "MEMORY_TOKEN_B"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORY_TOKEN_A", "set")
    check = StartCheck(
        "demo",
        (("agent.model", SecretRef("MODEL_ID")),),
        fragment(
            backend="postgres",
            dsn="$DATABASE_URL",
            embedder="openai/text-embedding-3-small",
            providers=[
                {"name": "svc", "backend": "http", "url": "http://x", "token": "$MEMORY_TOKEN"}
            ],
        ),
        secrets=(SecretNeed("HOOK", "channels.webhook.token"),),
        tenants=("a", "b"),
    )
    assert start_problems(check) == [
        "not started: 5 environment variables are not set: MODEL_ID (agent.model), "
        "HOOK (channels.webhook.token), DATABASE_URL (memory.dsn), "
        "MEMORY_TOKEN_B (memory.providers.svc.token of tenant b), "
        "OPENAI_API_KEY (memory.embedder openai/text-embedding-3-small); or set "
        "SPECWIRE_MODEL to run another model (SPECWIRE_MODEL=scripted runs offline)"
    ]


def test_the_models_adapter_key_is_a_needed_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    check = StartCheck("demo", (("agent.model", "anthropic/claude-sonnet-4-5"),))
    [line] = start_problems(check)
    assert "ANTHROPIC_API_KEY (the model anthropic/claude-sonnet-4-5)" in line


def test_the_override_reads_no_reference_of_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODEL_ID", raising=False)
    monkeypatch.setenv("SPECWIRE_MODEL", "scripted/other")
    assert start_problems(StartCheck("demo", (("agent.model", SecretRef("MODEL_ID")),))) == []
    monkeypatch.setenv("SPECWIRE_MODEL", "gemini-2.0")
    [line] = start_problems(StartCheck("demo", (("agent.model", "scripted"),)))
    assert line.startswith('model "gemini-2.0" (from SPECWIRE_MODEL) is not available')


def test_an_unreachable_postgres_is_one_line_without_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dsn = f"postgresql://u:{PASSWORD}@127.0.0.1:{closed_port()}/db"
    monkeypatch.setenv("DATABASE_URL", dsn)
    check = StartCheck(
        "demo", (("agent.model", "scripted"),), fragment(backend="postgres", dsn="$DATABASE_URL")
    )
    [line] = start_problems(check)
    assert line.startswith("memory (postgres) is not reachable: ")
    assert "Connection refused" in line and PASSWORD not in line


def test_a_provider_whose_settings_are_missing_is_not_probed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    check = StartCheck(
        "demo", (("agent.model", "scripted"),), fragment(backend="postgres", dsn="$DATABASE_URL")
    )
    assert start_problems(check) == [
        "not started: 1 environment variable is not set: DATABASE_URL (memory.dsn)"
    ]


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A server that accepts connections and never answers a byte."""
    held: list[socket.socket] = []
    stop = threading.Event()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.1)

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=10)
        for conn in held:
            conn.close()
        server.close()


def test_a_memory_service_that_never_answers_fails_within_the_deadline(
    silent_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_TOKEN", "t" * 24)
    check = StartCheck(
        "demo",
        (("agent.model", "scripted"),),
        fragment(backend="http", url=f"http://127.0.0.1:{silent_server}", token="$MEMORY_TOKEN"),
    )
    [line] = start_problems(check)
    assert line in (
        "memory (http) did not answer within 1 s",
        "memory (http) is not reachable: health check timeout",
    )


def test_tenants_failing_alike_share_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_TOKEN_ACME", "a" * 24)
    monkeypatch.setenv("MEMORY_TOKEN_GLOBEX", "g" * 24)
    check = StartCheck(
        "demo",
        (("agent.model", "scripted"),),
        fragment(backend="http", url=f"http://127.0.0.1:{closed_port()}", token="$MEMORY_TOKEN"),
        tenants=("acme", "globex"),
    )
    assert start_problems(check) == [
        "memory (http, tenants acme, globex) is not reachable: health check failed: unavailable"
    ]


def test_an_opencomputer_endpoint_is_probed_by_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OC_TOKEN", "o" * 24)
    check = StartCheck(
        "demo",
        (("agent.model", "scripted"),),
        fragment(
            backend="http",
            protocol="opencomputer",
            url=f"http://127.0.0.1:{closed_port()}",
            token="$OC_TOKEN",
        ),
    )
    assert start_problems(check) == [
        "memory (http, opencomputer) is not reachable: Connection refused"
    ]


def test_a_routed_provider_that_fails_is_a_warning_not_a_refusal(tmp_path: Path) -> None:
    """The router answers without a provider that fails (reporting it each turn): only the
    primary stops the start."""
    memory = fragment(providers=[{"name": "notes", "backend": "markdown", "path": "notes"}])
    check = StartCheck("demo", (("agent.model", "scripted"),), memory, cwd=tmp_path)
    warnings: list[str] = []
    assert start_problems(check, warnings) == []
    assert warnings == [
        "memory.providers.notes (markdown) is not reachable: its folder 'notes' does not exist; "
        "recall goes on without it"
    ]
    logged: list[str] = []
    assert passes_start_checks(check, logged.append)
    assert logged == [f"demo: warning: {warnings[0]}\n"]
    (tmp_path / "notes").mkdir()
    warnings.clear()
    assert start_problems(check, warnings) == [] and warnings == []


def test_memory_switched_off_probes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    memory = fragment(enabled=False, backend="postgres", dsn="$DATABASE_URL")
    assert start_problems(StartCheck("demo", (("agent.model", "scripted"),), memory)) == []


def test_a_fragment_the_runtime_refuses_is_a_problem() -> None:
    newer = {"spec_name": "demo", "version": 99, "specwire": "9.0.0"}
    [line] = start_problems(StartCheck("demo", (("agent.model", "scripted"),), newer))
    assert "this bundle needs" in line


def test_the_fragment_is_the_one_beside_the_bundles_builder() -> None:
    bundle = types.ModuleType("agent")
    exec(  # a generated bundle's shape: the constant and the builder in one module
        "MEMORY_FRAGMENT = {'spec_name': 'demo'}\ndef build_session():\n    return None\n",
        bundle.__dict__,
    )
    assert bundle_fragment(None, bundle.build_session) == {"spec_name": "demo"}
    assert bundle_fragment({"spec_name": "given"}, bundle.build_session) == {"spec_name": "given"}
    assert bundle_fragment(None, lambda: None) is None  # this test module has no fragment


def unreachable(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("DATABASE_URL", f"postgresql://u:{PASSWORD}@127.0.0.1:{closed_port()}/d")
    return fragment(backend="postgres", dsn="$DATABASE_URL")


def test_research_stops_before_anything_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[str] = []
    code = run_research(
        spec_name="demo",
        model="scripted",
        instructions="i",
        goal="g",
        branching_factor=1,
        max_duration_ms=1000,
        allowed_origins=(),
        cwd=tmp_path,
        argv=[],
        build_session=lambda: built.append("session") or TurnSetup(echo_catalog()),
        memory=unreachable(monkeypatch),
    )
    err = capsys.readouterr().err
    assert code == 2 and built == [] and list(tmp_path.iterdir()) == []
    assert err.startswith("demo: memory (postgres) is not reachable: ") and err.count("\n") == 1


def test_crew_stops_before_anything_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[str] = []
    code = run_crew(
        spec_name="demo",
        model="scripted",
        entry="lead",
        roles=[RoleConfig("lead", "i", model_fallbacks=("gemini-2.0",))],
        cwd=tmp_path,
        argv=["--message", "hello"],
        build_session=lambda: built.append("session") or TurnSetup(echo_catalog()),
        memory=unreachable(monkeypatch),
    )
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and built == [] and list(tmp_path.iterdir()) == []
    assert [line.split(": ", 1)[1][:18] for line in lines] == [
        'model "gemini-2.0"',
        "memory (postgres) ",
    ]
