"""``mcp_servers`` on the crew and research targets (issue 23).

Real bundles built by ``codegen build`` and run with the scripted model. Our stdio probe
(``tests/support/mcp_stdio_probe_server.py``, run by the system ``python3`` in the bash sandbox,
from a copy in the working folder) is started once per run:

- crew: the entry role calls one of its tools, then delegates to another role, which calls it
  too; both calls reach the one instance, working in the bundle's working folder;
- research: every branch calls one of its tools;
- a server that is not ``optional`` and does not start stops the start with one line (exit 2);
  an optional one is one warning line and the run goes on;
- the instance is stopped when the bundle ends.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from serving_support import build_bundle, processes_running, run_bundle, tool_results

from specwire.runtime.tools.shell.sandbox import sandbox_unavailable

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "support" / "mcp_stdio_probe_server.py"
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
WHERE = "call mcp__probe__where {}"


def _needs_the_probe(workdir: Path) -> None:
    if SYSTEM_PYTHON is None:
        pytest.skip("no system python3 to run the probe server")
    problem = sandbox_unavailable(workdir.parent)
    if problem is not None:
        pytest.skip(f"no sandbox here: {problem}")


def _workdir(tmp_path: Path) -> tuple[Path, str]:
    """A working folder holding a copy of the probe under a name unique to this test."""
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    marker = f"probe-{os.getpid()}-{tmp_path.name}.py"
    shutil.copyfile(PROBE, workdir / marker)
    return workdir, marker


def _servers(marker: str, extra: str = "") -> str:
    return (
        f"mcp_servers:\n  probe: {{transport: stdio, command: {SYSTEM_PYTHON}, args: [{marker}]}}\n"
        + extra
    )


def _build(tmp_path: Path, name: str, text: str) -> Path:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(text, encoding="utf-8")
    return build_bundle(spec, tmp_path / f"{name}-out")


_run = run_bundle


def _results(workdir: Path, name: str) -> list[dict[str, object]]:
    return [found for found in tool_results(workdir / ".specwire") if found["name"] == name]


_running = processes_running


def _crew(marker: str, extra: str = "") -> str:
    return (
        "name: squad\ntarget: crew\nmodel: scripted\nentry: lead\n"
        "roles:\n  lead: {instructions: You lead.}\n  helper: {instructions: You help.}\n"
        "continuity: false\n" + _servers(marker, extra)
    )


def test_every_crew_role_calls_the_one_instance_started_for_the_run(tmp_path: Path) -> None:
    workdir, marker = _workdir(tmp_path)
    _needs_the_probe(workdir)
    agent = _build(tmp_path, "squad", _crew(marker))
    delegate = "call Delegate " + json.dumps({"role": "helper", "task": WHERE})

    done = _run(agent, workdir, "--message", WHERE, "--message", delegate)

    assert done.returncode == 0, done.stderr
    where = _results(workdir, "mcp__probe__where")
    assert len(where) == 2, where  # the lead's call and the helper's, each in its own log
    for result in where:
        assert result["isError"] is False, result
        assert f'"cwd": "{workdir.resolve()}"' in str(result["text"])
    delegated = _results(workdir, "Delegate")
    assert len(delegated) == 1 and delegated[0]["isError"] is False, delegated
    assert "Done:" in str(delegated[0]["text"]), delegated
    assert _running(marker) == []  # stopped with the bundle


def test_every_research_branch_calls_the_server(tmp_path: Path) -> None:
    workdir, marker = _workdir(tmp_path)
    _needs_the_probe(workdir)
    agent = _build(
        tmp_path,
        "survey",
        "name: survey\ntarget: research\n"
        "agent: {model: scripted, instructions: You use the tools you are given.}\n"
        f"goal: |\n  {WHERE}\n\n  {WHERE}\n"
        "branchingFactor: 2\nmaxDurationMs: 120000\ncontinuity: false\n" + _servers(marker),
    )

    done = _run(agent, workdir)

    assert done.returncode == 0, done.stderr
    where = _results(workdir, "mcp__probe__where")
    assert len(where) == 2, where
    for result in where:
        assert result["isError"] is False, result
        assert f'"cwd": "{workdir.resolve()}"' in str(result["text"])
    assert _running(marker) == []


def test_a_server_that_does_not_start_stops_the_crew_in_one_line(tmp_path: Path) -> None:
    workdir, marker = _workdir(tmp_path)
    _needs_the_probe(workdir)
    missing = "  gone: {transport: stdio, command: /nonexistent/specwire-no-server}\n"
    agent = _build(tmp_path, "stopped", _crew(marker, missing))

    done = _run(agent, workdir, "--message", WHERE)

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "gone" in line]
    assert len(lines) == 1, done.stderr
    assert _results(workdir, "mcp__probe__where") == []
    assert _running(marker) == []  # the probe, started first, was stopped too

    optional = (
        "  gone: {transport: stdio, command: /nonexistent/specwire-no-server, optional: true}\n"
    )
    agent = _build(tmp_path, "warned", _crew(marker, optional))
    done = _run(agent, workdir, "--message", WHERE)
    assert done.returncode == 0, done.stderr
    assert len([line for line in done.stderr.splitlines() if "gone" in line]) == 1, done.stderr
    [result] = _results(workdir, "mcp__probe__where")
    assert result["isError"] is False, result
