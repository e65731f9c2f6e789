"""`agent.py serve` that cannot serve says why in one line, exits 2, and creates nothing."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving_support import ROOT, build_bundle, clean_env

from specwire.runtime.hosts.http.serving import check_serve_extra


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("bundles")
    return {
        name: build_bundle(ROOT / "examples" / f"{name}.yaml", out / name)
        for name in ("channel-helpdesk", "managed-concierge")
    }


def serve(
    agent: Path, workdir: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    workdir.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, str(agent), "serve", *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


CHANNEL_ENV = {
    "HELPDESK_SLACK_SIGNING_SECRET": "signing-secret-value-123",
    "HELPDESK_SLACK_BOT_TOKEN": "xoxb-bot-token-value-123",
    "HELPDESK_WEBHOOK_TOKEN": "webhook-token-value-123",
}
KEY = "sk-acme-startup-0123456789"


@pytest.mark.parametrize(
    ("bundle", "env", "args", "says"),
    [
        (
            "channel-helpdesk",
            {**CHANNEL_ENV, "HELPDESK_SLACK_SIGNING_SECRET": ""},
            (),
            "not started: 1 environment variable is not set: HELPDESK_SLACK_SIGNING_SECRET "
            "(channels.slack.signingSecret)",
        ),
        (
            "channel-helpdesk",
            {**CHANNEL_ENV, "SPECWIRE_PORT": "http"},
            (),
            "$SPECWIRE_PORT must be a port number",
        ),
        (
            "channel-helpdesk",
            {**CHANNEL_ENV, "SPECWIRE_MAX_BODY_BYTES": "10"},
            (),
            "SPECWIRE_MAX_BODY_BYTES must be",
        ),
        (
            "managed-concierge",
            {},
            (),
            "no tenant has an API key: set $SPECWIRE_TENANT_KEY_TENANT_ACME",
        ),
        ("managed-concierge", {"SPECWIRE_TENANT_KEY_TENANT_ACME": "short"}, (), "too short"),
        (
            "managed-concierge",
            {"SPECWIRE_TENANT_KEY_TENANT_ACME": KEY, "SPECWIRE_TENANT_KEY_TENANT_GLOBEX": KEY},
            (),
            "the same API key",
        ),
        (
            "managed-concierge",
            {"SPECWIRE_TENANT_KEY_TENANT_ACME": KEY},
            ("--port", "70000"),
            "between 0 and 65535",
        ),
    ],
)
def test_a_bundle_that_cannot_serve_says_why(
    bundles: dict[str, Path],
    tmp_path: Path,
    bundle: str,
    env: dict[str, str],
    args: tuple[str, ...],
    says: str,
) -> None:
    done = serve(bundles[bundle], tmp_path / "work", clean_env(**env), *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith(f"{bundle}: ")][-1:]
    assert says in line
    assert KEY not in done.stderr and "signing-secret-value" not in done.stderr
    assert not (tmp_path / "work" / ".specwire").exists()


def test_a_port_in_use_is_one_line(
    bundles: dict[str, Path], tmp_path: Path, busy_port: int
) -> None:
    env = clean_env(SPECWIRE_TENANT_KEY_TENANT_ACME=KEY)
    done = serve(bundles["managed-concierge"], tmp_path / "work", env, "--port", str(busy_port))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"cannot listen on 127.0.0.1:{busy_port}" in done.stderr


def test_a_channel_spec_with_nothing_to_serve(tmp_path: Path) -> None:
    spec = tmp_path / "quiet.yaml"
    spec.write_text(
        "name: quiet\ntarget: channel\nagent:\n  model: scripted\n  instructions: Hi.\n"
        "channels:\n  discord:\n    guild: main\nrouting:\n  sessionKey: thread\n",
        encoding="utf-8",
    )
    agent = build_bundle(spec, tmp_path / "out")
    done = serve(agent, tmp_path / "work", clean_env())
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "quiet: nothing to serve: add channels.slack" in done.stderr


def test_help_lists_serve_and_console_and_no_command_is_the_console(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    for agent in bundles.values():
        shown = subprocess.run(
            [sys.executable, str(agent), "--help"], capture_output=True, text=True, check=True
        )
        assert "{serve,console}" in shown.stdout
    done = subprocess.run(
        [sys.executable, str(bundles["channel-helpdesk"]), "--message", "t1: hello"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "t1: Noted: hello."


def test_a_missing_serve_extra_names_the_install_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    assert check_serve_extra("helpdesk") is False
    assert (
        capsys.readouterr().err
        == "helpdesk: `serve` needs uvicorn: pip install 'specwire[serve]'\n"
    )
