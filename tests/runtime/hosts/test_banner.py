"""The banner's tool count is the number of tools the model is sent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specwire.runtime.core.seams import LoopOptions, Skill
from specwire.runtime.hosts.console import describe
from specwire.runtime.loop.tools import ToolRunner, skill_tool
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.tools.builtin import builtin_catalog

SKILLS = [Skill("triage", "How to triage a ticket.", "Read the ticket first.", "project")]


@pytest.mark.parametrize("skills", [[], SKILLS], ids=["no skills", "skills"])
def test_the_banner_counts_the_tools_the_model_is_sent(skills: list[Skill], tmp_path: Path) -> None:
    catalog = builtin_catalog(["read", "ls"], tmp_path)
    options = LoopOptions(skills=skills) if skills else LoopOptions()
    runner = ToolRunner(
        catalog,
        SessionLog(tmp_path / "sessions", "sess_00000000000000aa"),
        lambda _line: None,
        [skill_tool(skills)] if skills else [],
    )
    sent = len(runner.specs())
    match = re.match(r"(\d+) tool\(s\)", describe(catalog, options))
    assert match is not None and int(match.group(1)) == sent
    assert sent == (3 if skills else 2)
