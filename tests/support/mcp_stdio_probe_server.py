"""A stdio MCP server of ours that probes where it runs (standard library only, so the system
``python3`` runs it inside the sandbox, which grants no virtual environment in a home folder).

Newline-delimited JSON-RPC 2.0, the MCP stdio framing: ``initialize``, ``tools/list`` and
``tools/call`` of three tools: ``where`` (its working folder and environment variable names),
``read`` (a file's text, or the error the system gave) and ``write`` (a file, or the error).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [
    {
        "name": "where",
        "description": "working folder and env names",
        "inputSchema": {"type": "object"},
    },
    {"name": "read", "description": "read a file", "inputSchema": _PATH_SCHEMA},
    {"name": "write", "description": "write a file", "inputSchema": _PATH_SCHEMA},
]


def _call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    if name == "where":
        return json.dumps({"cwd": os.getcwd(), "env": sorted(os.environ)}), False
    path = str(arguments.get("path", ""))
    try:
        if name == "read":
            with open(path, encoding="utf-8") as handle:
                return handle.read(), False
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("written by the probe\n")
        return "written", False
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror}", True


def _answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "probe", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        text, failed = _call(request["params"]["name"], request["params"].get("arguments") or {})
        result = {"content": [{"type": "text", "text": text}], "isError": failed}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no method"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        answer = _answer(json.loads(line))
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
