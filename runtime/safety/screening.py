"""The one screening and redaction entry point for text about to be written to memory.

Everything the runtime keeps and later reads into a prompt — facts, focus, plan titles and
steps, goals (the agent's own and ``log_knowledge_gap``'s), the handoff rendered from them,
wiki articles, imports — passes the same two steps before it is written:

- **redaction** (``runtime.safety.redaction.redact``): a secret value becomes ``$NAME``;
- **screening** (``runtime.safety.injection.scan``): text the scanner flags is refused with the
  rule that fired and nothing is changed (the refusal never echoes the text).

``storable`` and ``screen_for_memory`` are those steps for a store's write methods;
``screened`` wraps a tool handler so a flagged input is refused before the handler runs. Every
function of the runtime that persists text is listed, with how its text is screened, in
``runtime.safety.write_paths`` (a test walks the code and fails on an unlisted write).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.tool_types import ToolContext, ToolHandler, ToolResult
from specwire.runtime.core.undecodable import valid_text
from specwire.runtime.safety.redaction import redact

if TYPE_CHECKING:
    from specwire.runtime.safety.injection import InjectionHit


def scan(text: str) -> InjectionHit | None:
    """``runtime.safety.injection.scan``, imported on the first write: the scanner's rules and
    vocabularies cost a memory bundle's start more than anything its first prompt needs."""
    from specwire.runtime.safety.injection import scan as scan_text

    return scan_text(text)


class ScreenedOut(StoreError):
    """A write the injection scanner flagged: refused, nothing changed."""

    def __init__(self, hit: InjectionHit) -> None:
        super().__init__(refusal(hit))
        self.hit = hit


def refusal(hit: InjectionHit) -> str:
    return (
        f"not written: the injection scanner flagged this input (rule {hit.label}); "
        "nothing was changed"
    )


def storable(text: str) -> str:
    """``text`` as it may be kept: valid Unicode, secret values replaced by their names."""
    return redact(valid_text(text))


def screen_for_memory(*texts: str | None) -> None:
    """Raise ``ScreenedOut`` when the scanner flags any of ``texts`` (``None`` ones skipped)."""
    hit = scan("\n".join(text for text in texts if text))
    if hit is not None:
        raise ScreenedOut(hit)


def screened(handler: ToolHandler) -> ToolHandler:
    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        from pydantic import BaseModel  # loaded already: ``parsed`` came from a tool's input model

        data = parsed.model_dump() if isinstance(parsed, BaseModel) else parsed
        hit = scan("\n".join(_strings(data)))
        if hit is not None:
            return ToolResult(refusal(hit), is_error=True)
        return handler(parsed, ctx)

    return handle


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
