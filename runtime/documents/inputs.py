"""The input models of the document tools, imported on a tool's first call
(``runtime.core.tool_types.LazyInput``). Sizes are not capped here: a text or summary over its
limit is answered with OpenComputer's ``too_large`` rejection, not a validation error."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from specwire.runtime.core.fragment import RESOURCE_ID_MAX_LENGTH, RESOURCE_ID_PATTERN
from specwire.runtime.core.tool_input import ToolInput
from specwire.runtime.documents.model import CURSOR_MAX_CHARS, DOCUMENT_ID_PATTERN

_MEMORY_HELP = (
    "The binding (memory resource) to use, as the tool's description names them; required when "
    "several offer this tool."
)


def _memory() -> Any:
    return Field(
        default=None,
        pattern=RESOURCE_ID_PATTERN,
        max_length=RESOURCE_ID_MAX_LENGTH,
        description=_MEMORY_HELP,
    )


class MemorySaveInput(ToolInput):
    memory: str | None = _memory()
    text: str = Field(description="The document's new text: it replaces the whole document.")
    summary: str | None = Field(
        default=None,
        description='A one-line summary (at most 240 bytes). Omit it to keep the current one; "" '
        "clears it.",
    )


class DocumentReadInput(ToolInput):
    memory: str | None = _memory()
    id: str = Field(pattern=DOCUMENT_ID_PATTERN, description="The document's id.")


class DocumentListInput(ToolInput):
    memory: str | None = _memory()
    cursor: str | None = Field(
        default=None,
        max_length=CURSOR_MAX_CHARS,
        description="The nextCursor of the previous page; omit it for the first page.",
    )
