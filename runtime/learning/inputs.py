"""The learning tools' input models: both take nothing (``{}``), so the model cannot point a
study pass or an exam anywhere the spec does not."""

from __future__ import annotations

from specwire.runtime.core.tool_input import ToolInput


class StudySourcesInput(ToolInput):
    """Read the spec's learning sources into the wiki."""


class RunExamInput(ToolInput):
    """Run the spec's exam against the wiki."""
