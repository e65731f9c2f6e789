"""``codegen memory mcp``'s parts without a client: the fragment read from a bundle without
running it, the one-line refusals, the read-only set, the bearer check."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from specwire.runtime.core.fragment import WIKI_TOOL_NAMES
from specwire.runtime.owner.bundle_fragment import read_bundle_fragment
from specwire.runtime.owner.command import main
from specwire.runtime.owner.mcp_toolset import READ_TOOL_NAMES
from specwire.runtime.owner.mcp_verb import require_bearer
from specwire.runtime.owner.selection import SelectionError


def test_the_fragment_is_read_as_a_literal_and_the_bundle_never_runs(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    (tmp_path / "agent.py").write_text(
        f"open({str(ran)!r}, 'w').close()\nMEMORY_FRAGMENT = {{'spec_name': 'demo'}}\n",
        encoding="utf-8",
    )
    assert read_bundle_fragment(tmp_path) == {"spec_name": "demo"}
    assert not ran.exists()


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("x = 1\n", "no MEMORY_FRAGMENT"),
        ("MEMORY_FRAGMENT = dict(spec_name='demo')\n", "not a literal mapping"),
        ("MEMORY_FRAGMENT = [1]\n", "not a literal mapping"),
        ("def (:\n", "cannot read a bundle"),
    ],
)
def test_a_bundle_without_a_literal_fragment_is_refused(
    tmp_path: Path, source: str, says: str
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(source, encoding="utf-8")
    with pytest.raises(SelectionError, match=says):
        read_bundle_fragment(agent)


def test_mcp_without_agent_state_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "agent.py").write_text("MEMORY_FRAGMENT = {'spec_name': 'd'}\n", encoding="utf-8")
    code = main(["--root", str(tmp_path), "mcp", "--bundle", str(tmp_path / "agent.py")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no state directory" in err


@pytest.mark.parametrize(
    "flags", [["--backend", "postgres"], ["--dsn", "$OTHER_DSN"], ["--url", "http://127.0.0.1:9"]]
)
def test_mcp_refuses_connection_flags_it_would_not_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    (tmp_path / "agent.py").write_text("MEMORY_FRAGMENT = {'spec_name': 'd'}\n", encoding="utf-8")
    code = main(["--root", str(tmp_path), *flags, "mcp", "--bundle", str(tmp_path / "agent.py")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "drop --backend/--dsn/--url/--token" in err


def test_a_bundle_with_per_conversation_continuity_asks_for_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review finding H7-7: a channel bundle (continuity scope session, the default) stopped
    # with an internal message ("needs deps.session_scope") before naming the flag to pass.
    fragment = {"spec_name": "d", "memory": {}, "continuity": {"scope": "session"}}
    (tmp_path / "agent.py").write_text(f"MEMORY_FRAGMENT = {fragment!r}\n", encoding="utf-8")
    (tmp_path / ".specwire").mkdir()
    code = main(["--root", str(tmp_path), "mcp", "--bundle", str(tmp_path / "agent.py")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "--session" in err and "deps." not in err


def test_no_writing_tool_is_on_the_read_list() -> None:
    writers = {"Remember", "MemoryForget", "FocusWrite", "PlanUpdate", "PlanComplete"}
    writers |= {"GoalWrite", "GoalUpdate", "MemoryClear", "memory_write", "memory_save"}
    writers |= {"memory_append_daily", "wiki_write", "wiki_set_signals", "log_knowledge_gap"}
    assert not writers & READ_TOOL_NAMES
    assert {"Recall", "MemoryRead", "wiki_recall", "wiki_get"} <= READ_TOOL_NAMES
    assert set(WIKI_TOOL_NAMES) - READ_TOOL_NAMES == {
        "wiki_write",
        "wiki_set_signals",
        "log_knowledge_gap",
    }


def call(app_headers: list[tuple[bytes, bytes]]) -> tuple[int, bool]:
    reached: list[bool] = []
    statuses: list[int] = []

    async def app(scope: object, receive: object, send: object) -> None:
        reached.append(True)

    async def send(message: dict[str, object]) -> None:
        if message["type"] == "http.response.start":
            status = message["status"]
            assert isinstance(status, int)
            statuses.append(status)

    async def receive() -> dict[str, object]:
        return {"type": "http.request"}

    guarded = require_bearer(app, "s3cret-token-0123456789")
    anyio.run(guarded, {"type": "http", "headers": app_headers}, receive, send)
    return (statuses[0] if statuses else 0), bool(reached)


def test_only_the_exact_bearer_token_reaches_the_server() -> None:
    assert call([(b"authorization", b"Bearer s3cret-token-0123456789")]) == (0, True)
    assert call([(b"authorization", b"Bearer s3cret-token-012345678")]) == (401, False)
    assert call([(b"authorization", b"s3cret-token-0123456789")]) == (401, False)
    assert call([]) == (401, False)


def test_a_bundle_with_per_person_continuity_asks_whose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A managed bundle (continuity scope audience, managed's auto): without --user or
    # --conversation there is nobody's focus to serve, and never the tenant-wide folder.
    fragment = {"spec_name": "d", "memory": {}, "continuity": {"scope": "audience"}}
    (tmp_path / "agent.py").write_text(f"MEMORY_FRAGMENT = {fragment!r}\n", encoding="utf-8")
    (tmp_path / ".specwire").mkdir()
    code = main(["--root", str(tmp_path), "mcp", "--bundle", str(tmp_path / "agent.py")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "--user" in err and "--conversation" in err
