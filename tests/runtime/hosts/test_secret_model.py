"""A model id given as a secret reference (``model: $MODEL_ID``): read when the host starts.

Set: the host runs that model. Unset: exit 2 with a message naming the variable, no traceback,
nothing created. ``SPECWIRE_MODEL`` still overrides (the reference is then not read at all).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hosts_support import echo_catalog

from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.hosts.channel import serve_channel
from specwire.runtime.hosts.cli import run_cli
from specwire.runtime.hosts.crew import run_crew
from specwire.runtime.hosts.managed import serve_managed
from specwire.runtime.hosts.research import run_research
from specwire.runtime.hosts.types import ChannelConfig, RoleConfig, TenantConfig, TurnSetup
from specwire.runtime.models import ModelError, ModelUnavailableError, ScriptedModel
from specwire.runtime.models.select import (
    ModelSecretMissingError,
    resolve_model_id,
    select_spec_model,
)
from specwire.runtime.safety.secrets import SecretRef
from specwire.runtime.wiring import HostResources

MODEL_ID = SecretRef("DEMO_MODEL_ID")

Host = Callable[[str | SecretRef, Path], int]


def cli(model: str | SecretRef, root: Path) -> int:
    return run_cli(
        spec_name="demo",
        model=model,
        instructions="i",
        build_session=lambda: TurnSetup(catalog=echo_catalog()),
        cwd=root,
        argv=["--message", "hello"],
    )


def channel(model: str | SecretRef, root: Path) -> int:
    return serve_channel(
        spec_name="demo",
        model=model,
        instructions="i",
        channels=[ChannelConfig("slack", {})],
        session_key="thread",
        build_turn=lambda session_id, resources: TurnSetup(echo_catalog()),
        root=root,
        argv=["--message", "t1: hello"],
    )


def managed(model: str | SecretRef, root: Path) -> int:
    def build_turn(tenant: Tenant, session_id: str, resources: HostResources) -> TurnSetup:
        return TurnSetup(echo_catalog())

    return serve_managed(
        spec_name="demo",
        model=model,
        instructions="i",
        tenants=[TenantConfig("acme")],
        build_turn=build_turn,
        root=root,
        argv=["--message", "acme/s1: hello"],
    )


def research(model: str | SecretRef, root: Path) -> int:
    return run_research(
        spec_name="demo",
        model=model,
        instructions="i",
        goal="hello",
        branching_factor=1,
        max_duration_ms=60_000,
        allowed_origins=[],
        build_session=lambda: TurnSetup(catalog=echo_catalog()),
        cwd=root,
        argv=[],
    )


def crew(model: str | SecretRef, root: Path) -> int:
    return run_crew(
        spec_name="demo",
        model=model,
        entry="lead",
        roles=[RoleConfig("lead", "i")],
        build_session=lambda: TurnSetup(catalog=echo_catalog()),
        cwd=root,
        argv=["--message", "hello"],
    )


HOSTS: dict[str, Host] = {
    "cli": cli,
    "channel": channel,
    "managed": managed,
    "research": research,
    "crew": crew,
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SPECWIRE_MODEL", "SPECWIRE_SCRIPT", "SPECWIRE_TENANTS_ROOT", MODEL_ID.env):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("target", HOSTS)
def test_a_set_secret_model_id_runs_that_model(
    target: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(MODEL_ID.env, "scripted/from-env")
    code = HOSTS[target](MODEL_ID, tmp_path)
    out, err = capsys.readouterr()
    assert code == 0, err
    # The banner and the session logs name the reference, never its value.
    assert "model $DEMO_MODEL_ID" in err and "from-env" not in err
    assert "hello" in out
    logs = list((tmp_path / ".specwire").rglob("*.jsonl"))
    assert logs
    for log in logs:
        text = log.read_text(encoding="utf-8")
        assert '"model": "$DEMO_MODEL_ID"' in text or "session_start" not in text
        assert "from-env" not in text


@pytest.mark.parametrize("target", HOSTS)
@pytest.mark.parametrize("value", [None, "", "   "], ids=["unset", "empty", "blank"])
def test_an_unset_secret_model_id_exits_2_naming_the_variable(
    target: str,
    value: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if value is not None:
        monkeypatch.setenv(MODEL_ID.env, value)
    code = HOSTS[target](MODEL_ID, tmp_path)
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err == (
        "demo: not started: 1 environment variable is not set: DEMO_MODEL_ID "
        f"({'model' if target == 'crew' else 'agent.model'}); or set SPECWIRE_MODEL to run "
        "another model (SPECWIRE_MODEL=scripted runs offline)\n"
    )
    assert "Traceback" not in err
    assert not (tmp_path / ".specwire").exists()


@pytest.mark.parametrize("target", HOSTS)
def test_specwire_model_overrides_an_unset_secret_model_id(
    target: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SPECWIRE_MODEL", "scripted/override")
    code = HOSTS[target](MODEL_ID, tmp_path)
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "model scripted/override" in err


def test_a_crew_role_model_may_be_a_secret_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    roles = [RoleConfig("lead", "i"), RoleConfig("writer", "w", SecretRef("WRITER_MODEL"))]
    monkeypatch.delenv("WRITER_MODEL", raising=False)

    def run(role: str) -> int:
        return run_crew(
            spec_name="demo",
            model="scripted",
            entry="lead",
            roles=roles,
            build_session=lambda: TurnSetup(catalog=echo_catalog()),
            cwd=tmp_path,
            argv=["--role", role, "--message", "hello"],
        )

    assert run("lead") == 0  # the entry role never reads the writer's variable
    assert run("writer") == 2
    assert "WRITER_MODEL (roles.writer.model)" in capsys.readouterr().err
    monkeypatch.setenv("WRITER_MODEL", "scripted/writer")
    assert run("writer") == 0
    assert "crew role writer · model $WRITER_MODEL" in capsys.readouterr().err


def test_resolution_and_selection() -> None:
    assert resolve_model_id("openai/gpt-4o", environ={}) == "openai/gpt-4o"
    assert resolve_model_id(MODEL_ID, environ={"DEMO_MODEL_ID": " scripted/x "}) == "scripted/x"
    with pytest.raises(ModelSecretMissingError) as missing:
        resolve_model_id(MODEL_ID, environ={"OTHER": "scripted"})
    assert isinstance(missing.value, ModelError) and missing.value.env == "DEMO_MODEL_ID"
    chosen = select_spec_model(MODEL_ID, environ={"DEMO_MODEL_ID": "scripted/y"})
    assert isinstance(chosen, ScriptedModel) and chosen.model_id == "scripted/y"
    override = select_spec_model(MODEL_ID, environ={"SPECWIRE_MODEL": "scripted/z"})
    assert override.model_id == "scripted/z"
    with pytest.raises(ModelUnavailableError, match='"mystery-5" is not available'):
        select_spec_model(MODEL_ID, environ={"DEMO_MODEL_ID": "mystery-5"})
    assert select_spec_model("scripted", environ={}).model_id == "scripted"
