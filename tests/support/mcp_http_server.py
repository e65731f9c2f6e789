"""A small streamable-HTTP MCP server for the tests, on the official ``mcp`` SDK's server side.

``python mcp_http_server.py PORT`` serves ``/mcp`` on 127.0.0.1:PORT with two tools: ``add``
(two integers) and ``echo_note`` (returns its text, so a test can send an injection through it).
Requests without ``Authorization: Bearer test-token`` are refused (401), so the bundle's
``headers`` (a ``$REF``) are shown to reach the server.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import PlainTextResponse

TOKEN = "test-token"
server = MCPServer("specwire-test-tools")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return f"sum={a + b}"


@server.tool()
def echo_note(text: str) -> str:
    """Return the note it is given."""
    return text


def app() -> Any:
    inner = server.streamable_http_app()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            if request.headers.get("authorization") != f"Bearer {TOKEN}":
                await PlainTextResponse("unauthorized", status_code=401)(scope, receive, send)
                return
        await inner(scope, receive, send)

    return guarded


if __name__ == "__main__":
    uvicorn.run(app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
