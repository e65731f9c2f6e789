"""The ``bash`` tool's input model, imported (with pydantic) on the tool's first call."""

from __future__ import annotations

from pydantic import Field

from specwire.runtime.core.tool_input import ToolInput
from specwire.runtime.tools.shell.limits import BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS


class BashInput(ToolInput):
    command: str = Field(min_length=1, description="A shell command, run in the working directory.")
    timeoutMs: int | None = Field(  # camelCase: the tool schema spelling
        default=None,
        ge=1,
        le=BASH_MAX_TIMEOUT_MS,
        description=f"Kill the command after this many ms (default {BASH_DEFAULT_TIMEOUT_MS}).",
    )
