"""Shared pieces for the host tests: tiny agent scripts run as real subprocesses, session logs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from specwire.runtime.core.tool_types import Tool, ToolCatalog, ToolContext, ToolResult


def write_agent(tmp_path: Path, body: str, name: str = "agent.py") -> Path:
    """A small bundle-like script; ``body`` is dedented and appended after common imports."""
    script = tmp_path / name
    header = "import sys\nfrom pathlib import Path\n"
    script.write_text(header + textwrap.dedent(body), encoding="utf-8")
    return script


def run_agent(
    script: Path,
    cwd: Path,
    *args: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        check=False,
    )


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def session_logs(sessions_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return {log.stem: read_log(log) for log in sorted(sessions_dir.glob("sess_*.jsonl"))}


def of_kind(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event["payload"] for event in events if event["type"] == kind]


class _Text(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


def echo_catalog() -> ToolCatalog:
    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(f"echo: {parsed.text}")

    catalog = ToolCatalog()
    catalog.register(Tool("Echo", "Echo the text back.", _Text, handle))
    return catalog
