"""A bundle that cannot start fails its start: one line per problem, exit 2, nothing created.

Acceptance of issue 22 (fail fast at start): an unreachable PostgreSQL (a closed port), an
unreachable memory service, unset secrets (all in one line) and an unknown model, on the cli,
channel ``serve`` and managed ``serve``. Real bundles built by ``codegen build``, run as their
users run them; nothing is mocked: the closed port is a port nobody listens on.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serving_support import build_bundle, clean_env, free_port

TARGETS = ("cli", "channel", "managed")
HEADS = {
    "cli": "target: cli\n",
    "channel": "target: channel\nchannels:\n  webhook: {token: $HOOK_TOKEN}\n"
    "routing: {sessionKey: thread}\n",
    "managed": "target: managed\ntenants: [{id: acme}, {id: globex}]\n",
}
MEMORY = {
    "postgres": "memory: {backend: postgres, dsn: $DATABASE_URL}\n",
    "http": "memory: {backend: http, url: $MEMORY_URL, token: $MEMORY_TOKEN}\n",
    "file": "memory: {}\n",
}
# What every start of these bundles reads besides the setting under test.
BASE_ENV = {
    "HOOK_TOKEN": "hook-token-value-0123456789",
    "SPECWIRE_TENANT_KEY_ACME": "sk-acme-start-0123456789",
    "SPECWIRE_TENANT_KEY_GLOBEX": "sk-globex-start-0123456789",
    "MODEL_ID": "scripted",
}
PASSWORD = "pg-password-never-shown-9f8e7d"
MEMORY_TOKEN = "memory-token-never-shown-0a1b2c"


def spec_text(target: str, backend: str) -> str:
    return (
        f"name: start-{target}-{backend}\n{HEADS[target]}"
        "agent: {model: $MODEL_ID, instructions: You keep notes.}\n"
        f"tools: [read, ls]\n{MEMORY[backend]}"
    )


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    built = {}
    for target in TARGETS:
        for backend in MEMORY:
            folder = tmp_path_factory.mktemp(f"{target}-{backend}")
            spec = folder / "agent.yaml"
            spec.write_text(spec_text(target, backend), encoding="utf-8")
            built[target, backend] = build_bundle(spec, folder / "out")
    return built


def start(agent: Path, target: str, workdir: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """The bundle's start as its user runs it: the cli with a message, the others ``serve``."""
    workdir.mkdir()
    args = ["--message", "hello"] if target == "cli" else ["serve", "--port", str(free_port())]
    done = subprocess.run(
        [sys.executable, str(agent), *args],
        cwd=workdir,
        env={**clean_env(**env), "HOME": str(workdir)},
        capture_output=True,
        text=True,
        timeout=120,  # a start that hangs fails here; nothing below is timed
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout, done.stderr


def one_line_failure(result: tuple[int, str, str], spec_name: str, workdir: Path) -> str:
    code, out, err = result
    assert code == 2, err
    assert out == ""
    assert "Traceback" not in err and "listening on" not in err
    [line] = err.splitlines()
    assert line.startswith(f"{spec_name}: ")
    assert list(workdir.iterdir()) == []  # no .specwire/, no session log, no tenant folder
    return line[len(spec_name) + 2 :]


@pytest.mark.parametrize("target", TARGETS)
def test_an_unreachable_postgres_fails_the_start(
    target: str, bundles: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    dsn = f"postgresql://specwire:{PASSWORD}@127.0.0.1:{free_port()}/facts"
    workdir = tmp_path / "work"
    result = start(bundles[target, "postgres"], target, workdir, {**BASE_ENV, "DATABASE_URL": dsn})
    said = one_line_failure(result, f"start-{target}-postgres", workdir)
    assert said.startswith("memory (postgres) is not reachable: ")
    assert "Connection refused" in said
    assert PASSWORD not in result[2]


@pytest.mark.parametrize("target", TARGETS)
def test_an_unreachable_memory_service_fails_the_start(
    target: str, bundles: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    tokens = (
        {"MEMORY_TOKEN_ACME": MEMORY_TOKEN, "MEMORY_TOKEN_GLOBEX": MEMORY_TOKEN}
        if target == "managed"
        else {"MEMORY_TOKEN": MEMORY_TOKEN}
    )
    env = {**BASE_ENV, **tokens, "MEMORY_URL": f"http://127.0.0.1:{free_port()}"}
    workdir = tmp_path / "work"
    result = start(bundles[target, "http"], target, workdir, env)
    said = one_line_failure(result, f"start-{target}-http", workdir)
    whose = ", tenants acme, globex" if target == "managed" else ""
    assert said == f"memory (http{whose}) is not reachable: health check failed: unavailable"
    assert MEMORY_TOKEN not in result[2]


@pytest.mark.parametrize("target", TARGETS)
def test_every_unset_secret_is_named_in_one_line(
    target: str, bundles: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    env = {**BASE_ENV, "MODEL_ID": "", "HOOK_TOKEN": "", "MEMORY_URL": ""}
    workdir = tmp_path / "work"
    said = one_line_failure(
        start(bundles[target, "http"], target, workdir, env), f"start-{target}-http", workdir
    )
    expected = ["MODEL_ID (agent.model)", "MEMORY_URL (memory.url)"]
    if target == "managed":
        expected += ["MEMORY_TOKEN_ACME (memory.token of tenant acme)"]
        expected += ["MEMORY_TOKEN_GLOBEX (memory.token of tenant globex)"]
    else:
        expected += ["MEMORY_TOKEN (memory.token)"]
    if target == "channel":
        expected += ["HOOK_TOKEN (channels.webhook.token)"]
    assert said.startswith(f"not started: {len(expected)} environment variables are not set: ")
    for variable in expected:
        assert variable in said


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("how", ["spec", "override"])
def test_an_unknown_model_fails_the_start(
    target: str, how: str, bundles: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    chosen = {"MODEL_ID": "gemini-2.0"} if how == "spec" else {"SPECWIRE_MODEL": "claude"}
    workdir = tmp_path / "work"
    said = one_line_failure(
        start(bundles[target, "file"], target, workdir, {**BASE_ENV, **chosen}),
        f"start-{target}-file",
        workdir,
    )
    model_id = chosen.get("MODEL_ID", "claude")
    assert said.startswith(f'model "{model_id}"')
    assert "is not available: use anthropic/<model> or claude-*" in said


def test_the_problems_of_one_start_are_each_one_line(
    bundles: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    """Several problems at once: each its own line, all reported by the one failed start."""
    env = {
        **BASE_ENV,
        "HOOK_TOKEN": "",
        "SPECWIRE_MODEL": "gemini-2.0",
        "DATABASE_URL": f"postgresql://specwire:{PASSWORD}@127.0.0.1:{free_port()}/facts",
    }
    workdir = tmp_path / "work"
    code, out, err = start(bundles["channel", "postgres"], "channel", workdir, env)
    assert code == 2 and out == "" and list(workdir.iterdir()) == []
    prefix = "start-channel-postgres: "
    lines = err.splitlines()
    assert all(line.startswith(prefix) for line in lines)
    assert [line[len(prefix) :][:18] for line in lines] == [
        "not started: 1 env",
        'model "gemini-2.0"',
        "memory (postgres) ",
    ]
