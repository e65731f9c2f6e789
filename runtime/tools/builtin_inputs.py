"""The input models of the file tools (read, write, ls, grep), imported with pydantic on a
tool's first call (``runtime.core.tool_types.LazyInput``)."""

from __future__ import annotations

from pydantic import Field

from specwire.runtime.core.tool_input import ToolInput


class ReadInput(ToolInput):
    path: str = Field(min_length=1, description="A text file, relative to the working directory.")


class WriteInput(ToolInput):
    path: str = Field(min_length=1, description="The file to create or replace.")
    content: str = Field(description="The complete new content of the file (UTF-8 text).")


class LsInput(ToolInput):
    path: str = Field(default=".", description="A directory (default: the working directory).")


class GrepInput(ToolInput):
    pattern: str = Field(min_length=1, description="A Python regular expression.")
    path: str = Field(default=".", description="A file or directory to search (default: all).")
