"""The channel and managed console adapters: routing, per-turn wiring, tenant roots."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hosts_support import echo_catalog, of_kind, session_logs

from specwire.runtime.core.seams import LoopOptions, MemorySeam
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.hosts.channel import serve_channel
from specwire.runtime.hosts.managed import serve_managed
from specwire.runtime.hosts.types import ChannelConfig, TenantConfig, TurnSetup
from specwire.runtime.safety.secrets import SecretRef
from specwire.runtime.wiring import HostResources

SLACK = ChannelConfig("slack", {"botToken": SecretRef("NEVER_SET_SLACK_TOKEN")})


@pytest.fixture(autouse=True)
def _no_model_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECWIRE_MODEL", raising=False)
    monkeypatch.delenv("SPECWIRE_SCRIPT", raising=False)


def channel(root: Path, lines: list[str], turns: list[str]) -> int:
    def build_turn(session_id: str, resources: HostResources) -> TurnSetup:
        turns.append(session_id)
        return TurnSetup(echo_catalog())

    argv: list[str] = []
    for line in lines:
        argv += ["--message", line]
    return serve_channel(
        spec_name="helpdesk",
        model="scripted",
        instructions="You help in threads.",
        channels=[SLACK],
        session_key="thread",
        build_turn=build_turn,
        root=root,
        argv=argv,
    )


def test_channel_routes_each_conversation_to_its_own_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns: list[str] = []
    code = channel(
        tmp_path,
        ["t1: hello", "t2: hi there", 't1: call Echo {"text": "again"}', "no key here", "t1: "],
        turns,
    )
    out, err = capsys.readouterr()
    assert code == 2  # a line was not answered: the run says so (served on)
    assert out.splitlines() == [
        "t1: Noted: hello.",
        "t2: Noted: hi there.",
        "t1: Done: echo: again",
    ]
    assert "expected \"<conversation-key>: <message>\", got 'no key here'" in err
    assert "expected" in err.splitlines()[-2]  # "t1: " has no message either
    t1, t2 = turns[0], turns[1]
    assert turns == [t1, t2, t1] and t1 != t2
    logs = session_logs(tmp_path / ".specwire" / "sessions")
    assert sorted(logs) == sorted([t1, t2])
    first = logs[t1]
    assert [e["type"] for e in first].count("session_start") == 2  # one single-turn run per message
    assert of_kind(first, "session_start")[0]["conversation"] == "t1"
    assert [m["turn"] for m in of_kind(first, "user_message")] == [1, 2]
    assert of_kind(first, "session_end") == [
        {"stopReason": "complete", "turns": 1},
        {"stopReason": "complete", "turns": 1},
    ]
    assert "slack" in err and "`serve` connects them" in err


def test_channel_reads_stdin_lines_and_keeps_serving_after_a_failed_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("bad: boom\nok: fine\n"))

    attempts: list[str] = []

    def build_turn(session_id: str, resources: HostResources) -> TurnSetup:
        attempts.append(session_id)
        if len(attempts) == 1:
            raise RuntimeError("wiring exploded")
        return TurnSetup(echo_catalog())

    code = serve_channel(
        spec_name="helpdesk",
        model="scripted",
        instructions="x",
        channels=[],
        session_key="thread",
        build_turn=build_turn,
        root=tmp_path,
        argv=[],
    )
    out, err = capsys.readouterr()
    assert code == 2  # a line was not answered: the run says so (served on)
    assert out.splitlines() == ["ok: Noted: fine."]
    assert "bad: error: RuntimeError: wiring exploded" in err


def test_channel_with_an_unavailable_model_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECWIRE_MODEL", "mystery-x")
    assert channel(tmp_path, ["t1: hi"], []) == 2
    assert '"mystery-x" (from SPECWIRE_MODEL) is not available' in capsys.readouterr().err


TENANTS = [TenantConfig("acme"), TenantConfig("globex", max_input_tokens=1000)]


def managed(root: Path, lines: list[str], calls: list[tuple[Tenant, str]]) -> int:
    def build_turn(tenant: Tenant, session_id: str, resources: HostResources) -> TurnSetup:
        calls.append((tenant, session_id))
        recall = MemorySeam(auto_recall=True, recall=lambda q, k: [f"tenant {tenant.id} fact"])
        return TurnSetup(echo_catalog(), LoopOptions(memory=recall))

    argv: list[str] = []
    for line in lines:
        argv += ["--message", line]
    return serve_managed(
        spec_name="concierge",
        model="scripted",
        instructions="You are a concierge.",
        tenants=TENANTS,
        build_turn=build_turn,
        root=root,
        argv=argv,
    )


def test_managed_fences_each_tenant_under_its_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPECWIRE_TENANTS_ROOT", raising=False)
    calls: list[tuple[Tenant, str]] = []
    code = managed(
        tmp_path,
        ["acme/s1: hello", "initech/s1: let me in", "globex/s1: hi", "acme/s1: again", "acme: x"],
        calls,
    )
    out, err = capsys.readouterr()
    assert code == 2  # a line was not answered: the run says so (served on)
    assert out.splitlines() == [
        "acme/s1: Noted: hello. From memory: tenant acme fact.",
        "globex/s1: Noted: hi. From memory: tenant globex fact.",
        "acme/s1: Noted: again. From memory: tenant acme fact.",
    ]
    assert (
        'initech/s1: error: unknown tenant "initech" (tenants: acme, globex); nothing was run'
        in err
    )
    assert "expected \"<tenant-id>/<session-key>: <message>\", got 'acme: x'" in err
    tenants_root = (tmp_path / ".specwire" / "tenants").resolve()
    assert [(t.id, t.root) for t, _ in calls] == [
        ("acme", tenants_root / "acme"),
        ("globex", tenants_root / "globex"),
        ("acme", tenants_root / "acme"),
    ]
    acme_session, globex_session = calls[0][1], calls[1][1]
    assert calls[2][1] == acme_session and acme_session != globex_session
    assert sorted(p.name for p in tenants_root.iterdir()) == ["acme", "globex"]
    acme_logs = session_logs(tenants_root / "acme" / "sessions")
    globex_logs = session_logs(tenants_root / "globex" / "sessions")
    assert list(acme_logs) == [acme_session] and list(globex_logs) == [globex_session]
    starts = of_kind(acme_logs[acme_session], "session_start")
    assert [s["tenant"] for s in starts] == ["acme", "acme"] and starts[0]["target"] == "managed"
    assert not (tmp_path / ".specwire" / "sessions").exists()


def test_managed_same_session_key_in_two_tenants_are_two_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPECWIRE_TENANTS_ROOT", raising=False)
    calls: list[tuple[Tenant, str]] = []
    managed(tmp_path, ["acme/shared: a", "globex/shared: b"], calls)
    assert calls[0][1] != calls[1][1]


def test_managed_tenants_root_comes_from_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "tenants-here"
    monkeypatch.setenv("SPECWIRE_TENANTS_ROOT", str(elsewhere))
    calls: list[tuple[Tenant, str]] = []
    assert managed(tmp_path / "cwd", ["acme/s: hi"], calls) == 0
    [(tenant, session_id)] = calls
    assert tenant.root == elsewhere.resolve() / "acme"
    assert (elsewhere / "acme" / "sessions" / f"{session_id}.jsonl").is_file()
    assert elsewhere.resolve().as_posix() in capsys.readouterr().err


def test_channel_releases_each_turns_wiring_after_the_turn(tmp_path: Path) -> None:
    events: list[str] = []

    def build_turn(session_id: str, resources: HostResources) -> TurnSetup:
        events.append("open")
        return TurnSetup(echo_catalog(), close=lambda: events.append("close"))

    code = serve_channel(
        spec_name="helpdesk",
        model="scripted",
        instructions="x",
        channels=[],
        session_key="thread",
        build_turn=build_turn,
        root=tmp_path,
        argv=["--message", "t1: hello", "--message", 't1: call Echo {"text": "x"}'],
    )
    assert code == 0
    assert events == ["open", "close", "open", "close"]


def test_a_thread_resumes_its_session_after_the_host_restarts(tmp_path: Path) -> None:
    first: list[str] = []
    second: list[str] = []
    assert channel(tmp_path, ["t1: hello", "t2: hi"], first) == 0
    assert channel(tmp_path, ["t1: still there?"], second) == 0
    assert second == [first[0]] and first[0] != first[1]
    logs = session_logs(tmp_path / ".specwire" / "sessions")
    assert [m["turn"] for m in of_kind(logs[first[0]], "user_message")] == [1, 2]
