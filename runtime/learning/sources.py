"""Reading a study source: a file beneath the workspace, or a URL through the fetch tool.

Nothing here is imported before the first pass (the read and fetch tools load then). A local
source is read with the read tool's fences (``tools.builtin.read_workspace_text``: no
way out of the workspace or into ``.specwire/``, no symlink swapped in, UTF-8 text only). A URL
is fetched by the fetch tool (``tools.fetch``) allowed only the origins of the spec's own URL
sources, so a redirect elsewhere is refused; its text arrives framed as untrusted data, and the
frame's inner text is what is studied. The model never names what is read: the spec does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from specwire.runtime.core.tool_types import Tool, ToolContext, ToolRefusal

# At most this much of one source is studied (a wiki article holds 100,000 characters).
SOURCE_MAX_BYTES: Final = 96 * 1024
_HEADING_PREFIX: Final = "# "


class SourceUnreadable(Exception):
    """A source that could not be read; the message says why, in one line."""


@dataclass(frozen=True)
class SourceText:
    """One source's text, as studied."""

    ref: str
    title: str
    text: str
    truncated: bool


def is_url(ref: str) -> bool:
    return ref.startswith(("http://", "https://"))


def url_origins(refs: Sequence[str]) -> tuple[str, ...]:
    """The origins of the URL sources, in order, each once: all a study pass may fetch from."""
    found: dict[str, None] = {}
    for ref in refs:
        if is_url(ref):
            parts = urlsplit(ref)
            found[f"{parts.scheme}://{parts.netloc}".lower()] = None
    return tuple(found)


def read_source(ref: str, workspace: Path, fetch: Tool | None) -> SourceText:
    if is_url(ref):
        if fetch is None:
            raise SourceUnreadable(f"{ref}: URL sources need the fetch tool (specwire[research])")
        return _fetched(ref, fetch)
    from specwire.runtime.tools.builtin import read_workspace_text  # loaded by the first pass

    try:
        text, size = read_workspace_text(workspace, ref, SOURCE_MAX_BYTES)
    except (ToolRefusal, OSError) as exc:
        raise SourceUnreadable(f"{ref}: {_reason(exc)}") from None
    return SourceText(ref, _title(text, Path(ref).name), text, size > SOURCE_MAX_BYTES)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return " ".join(str(exc).split())


def _fetched(ref: str, fetch: Tool) -> SourceText:
    result = fetch.invoke({"url": ref}, ToolContext(session_id="", tool_use_id="study"))
    if result.is_error:
        raise SourceUnreadable(f"{ref}: {' '.join(result.text.split())[:300]}")
    text = _unframed(result.text)
    return SourceText(ref, _title(text, ref), text, "truncated" in result.text.split("\n", 1)[0])


def _unframed(framed: str) -> str:
    """The page text inside the fetch tool's frame (already neutralized by it)."""
    from specwire.runtime.tools.fetch import FETCH_HEADER, FETCH_TAG  # a URL source: loaded

    opening, header, closing = f"<{FETCH_TAG}>", FETCH_HEADER, f"</{FETCH_TAG}>"
    lines = framed.split("\n")
    try:
        start = lines.index(opening) + 1
        end = len(lines) - 1 - lines[::-1].index(closing)
    except ValueError:
        raise SourceUnreadable("the fetch tool's reply had no framed text") from None
    if start < end and lines[start] == header:
        start += 1
    return "\n".join(lines[start:end])


def _title(text: str, fallback: str) -> str:
    """The first level-1 heading, else ``fallback``."""
    for line in text.splitlines():
        if line.startswith(_HEADING_PREFIX) and line[2:].strip():
            return " ".join(line[2:].split())[:200]
    return fallback[:200]
