"""Start time of a stdio MCP server (initialize + tools/list) confined and unconfined, side by side.

Usage: ``python bench/mcp_stdio_sandbox_start.py [rounds]``. Servers: our stdlib probe server run
by the system ``python3``, and ``@modelcontextprotocol/server-filesystem`` by npx from
``.cache/mcp-servers`` (when installed). Prints the median of each and the ratio.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from specwire.runtime.tools.mcp_servers.config import StdioServer
from specwire.runtime.tools.mcp_servers.connection import McpConnections

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "mcp-servers"
PROBE = ROOT / "tests" / "support" / "mcp_stdio_probe_server.py"


def _seconds(server: StdioServer, workspace: Path) -> float:
    connections = McpConnections()
    try:
        began = time.perf_counter()
        [started] = connections.start_all([server], workspace, deadline=120.0)
        elapsed = time.perf_counter() - began
        if isinstance(started, Exception):
            raise SystemExit(str(started))
        return elapsed
    finally:
        connections.close()


def main(rounds: int) -> None:
    servers = [("probe (python3)", "/usr/bin/python3", (str(PROBE),))]
    if (CACHE / "node_modules" / ".bin" / "mcp-server-filesystem").exists():
        args = ("--no-install", "--prefix", str(CACHE), "mcp-server-filesystem", ".")
        servers.append(("server-filesystem (npx)", "npx", args))
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        for label, command, args in servers:
            timings: dict[bool, list[float]] = {True: [], False: []}
            _seconds(StdioServer("s", command, args, (), False), workspace)  # warm the probe
            for _ in range(rounds):
                for confined in (False, True):
                    server = StdioServer("s", command, args, (), False, sandbox=confined)
                    timings[confined].append(_seconds(server, workspace))
            plain, boxed = (statistics.median(timings[flag]) for flag in (False, True))
            print(
                f"{label}: unconfined {plain * 1000:.0f} ms, confined {boxed * 1000:.0f} ms, "
                f"ratio {boxed / plain:.2f} (median of {rounds})"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
