"""A stdio MCP server runs inside the ``bash`` tool's sandbox (issue 23 item 2).

Our probe server (``tests/support/mcp_stdio_probe_server.py``, standard library only, run by
the system ``python3``) is started by the runtime's own connection code through the official
SDK's stdio client, and asked to read the state folder, a file outside the workspace, and to
write outside it: every one is refused by the system, its working folder is the workspace, and
its environment holds the spec's ``env`` and bash's allow-list only. A server marked
``sandbox: false`` still runs unconfined (and does read the file the confined one could not).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from specwire.runtime.safety.secrets import SecretRef
from specwire.runtime.tools.mcp_servers.config import StdioServer
from specwire.runtime.tools.mcp_servers.connection import McpConnections, ServerSession
from specwire.runtime.tools.mcp_servers.errors import McpServerError
from specwire.runtime.tools.shell.sandbox import sandbox_unavailable

PROBE = Path(__file__).resolve().parents[1] / "support" / "mcp_stdio_probe_server.py"
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / ".specwire").mkdir(parents=True)
    (folder / ".specwire" / "facts.jsonl").write_text("the vault code is 4711\n")
    (folder / "notes.txt").write_text("heliotrope\n")
    return folder


@pytest.fixture
def connections() -> Iterator[McpConnections]:
    opened = McpConnections()
    try:
        yield opened
    finally:
        opened.close()


def _start(
    connections: McpConnections,
    workspace: Path,
    *,
    sandbox: bool = True,
    network: Literal["none", "outbound"] = "none",
) -> ServerSession:
    if SYSTEM_PYTHON is None:
        pytest.skip("no system python3 to run the probe server")
    if sandbox and sandbox_unavailable(workspace) is not None:
        pytest.skip(f"no sandbox here: {sandbox_unavailable(workspace)}")
    env = (("PROBE_NOTE", "kept"), ("PROBE_TOKEN", SecretRef("PROBE_SECRET")))
    # The probe runs from a copy in the workspace: the checkout may lie under a folder the
    # sandbox never grants (/tmp, /home, /root), and the workspace is always readable.
    probe = workspace / "mcp-probe" / PROBE.name
    probe.parent.mkdir(exist_ok=True)
    shutil.copyfile(PROBE, probe)
    server = StdioServer(
        "probe", SYSTEM_PYTHON, (str(probe),), env, False, sandbox=sandbox, network=network
    )
    [started] = connections.start_all([server], workspace, deadline=60.0)
    assert not isinstance(started, McpServerError), started
    return started


def _call(connections: McpConnections, started: ServerSession, tool: str, **args: str) -> str:
    result = connections.call(started, tool, dict(args), timeout=30.0)
    texts = [getattr(part, "text", "") for part in result.content]
    return ("error: " if result.is_error else "") + "".join(texts)


def test_a_confined_server_works_in_the_workspace_and_reaches_nothing_else(
    workspace: Path, tmp_path: Path, connections: McpConnections, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROBE_SECRET", "s3cret-value")
    monkeypatch.setenv("HOST_ONLY_VARIABLE", "never seen")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside the workspace\n")
    started = _start(connections, workspace)

    where = json.loads(_call(connections, started, "where"))
    assert where["cwd"] == str(workspace)
    assert {"PROBE_NOTE", "PROBE_TOKEN", "PATH", "HOME"} <= set(where["env"])
    assert "HOST_ONLY_VARIABLE" not in where["env"] and "PROBE_SECRET" not in where["env"]
    assert "HTTPS_PROXY" not in where["env"]  # no network: no egress proxy either

    assert _call(connections, started, "read", path="notes.txt") == "heliotrope\n"
    state = _call(connections, started, "read", path=".specwire/facts.jsonl")
    assert state.startswith("error: ") and "4711" not in state
    state_abs = _call(connections, started, "read", path=str(workspace / ".specwire/facts.jsonl"))
    assert state_abs.startswith("error: ") and "4711" not in state_abs
    far = _call(connections, started, "read", path=str(outside))
    assert far.startswith("error: ") and "outside the workspace" not in far
    assert "root:" not in _call(connections, started, "read", path="/etc/shadow")
    wrote = _call(connections, started, "write", path=str(tmp_path / "planted.txt"))
    assert wrote.startswith("error: ") and not (tmp_path / "planted.txt").exists()
    assert _call(connections, started, "write", path="made-here.txt") == "written"
    assert (workspace / "made-here.txt").read_text() == "written by the probe\n"


def test_an_unconfined_server_is_only_what_the_spec_asks_for(
    workspace: Path, tmp_path: Path, connections: McpConnections, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROBE_SECRET", "s3cret-value")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside the workspace\n")
    started = _start(connections, workspace, sandbox=False)
    assert json.loads(_call(connections, started, "where"))["cwd"] == str(workspace)
    assert _call(connections, started, "read", path=str(outside)) == "outside the workspace\n"


def test_a_confined_server_whose_command_is_not_on_path_fails_in_one_line(
    workspace: Path, connections: McpConnections
) -> None:
    if sandbox_unavailable(workspace) is not None:
        pytest.skip("no sandbox here")
    server = StdioServer("ghost", "no-such-program-here", (), (), False)
    [failed] = connections.start_all([server], workspace, deadline=30.0)
    assert isinstance(failed, McpServerError)
    assert str(failed) == "MCP server 'ghost': 'no-such-program-here' is not on PATH"


def test_a_confined_server_with_outbound_network_is_given_the_egress_proxy(
    workspace: Path, connections: McpConnections, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROBE_SECRET", "s3cret-value")
    started = _start(connections, workspace, network="outbound")
    where = json.loads(_call(connections, started, "where"))
    assert {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"} <= set(where["env"])
    state = _call(connections, started, "read", path=".specwire/facts.jsonl")
    assert state.startswith("error: ") and "4711" not in state
