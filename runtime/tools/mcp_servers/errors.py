"""The start failure of an MCP tool server (one line, exit 2 through ``run_bundle``)."""

from __future__ import annotations


class McpServerError(RuntimeError):
    """A server that is not optional did not start, answer or list its tools in time."""
