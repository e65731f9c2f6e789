"""The ``Skill`` tool's input model, imported (with pydantic) on the tool's first call."""

from __future__ import annotations

from pydantic import Field

from specwire.runtime.core.tool_input import ToolInput


class _SkillInput(ToolInput):
    name: str = Field(min_length=1, description="The skill's name, as listed in the prompt.")
