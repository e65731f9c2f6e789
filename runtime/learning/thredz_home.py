"""The learning loop over Thredz's wiki: a spec with ``thredz`` and no ``memory.wiki`` of its own
(CrewHaus: learning needs ``memory.wiki`` or ``thredz``).

``study_sources`` writes each source's article with the server's ``wiki_write`` (based on the
current version, as the tool does when no ``expectedVersion`` is given) after asking
``wiki_get`` whether the article already says the same (then it is left alone, so a pass stays
idempotent); ``run_exam`` recalls with ``wiki_recall`` and reads each recalled article whole
with ``wiki_get``; a failed sample is logged with ``log_knowledge_gap`` on the server (the
Thredz wiki's gap notes). What is sent is screened like any forwarded write; replies are read
as text. While Thredz is unavailable (the run is degraded) a source fails with that reason and
the exam recalls nothing.

The host wires these tools once the server is connected (``with_thredz_learning``): the
bundle's own wiring has no wiki to put them on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import DEFAULT_WIKI_RECALL_K, STUDY_TOOL_NAME
from specwire.runtime.core.fragment_data import FragmentData
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.learning.exam import gap_topic
from specwire.runtime.learning.tools import LearningContext, learning_tools
from specwire.runtime.safety.injection import scan
from specwire.runtime.tools.mcp_servers.thredz import ThredzLink
from specwire.runtime.tools.mcp_servers.tools import reply_text
from specwire.runtime.wiki.store import GAP_PREFIX, ArticleDraft

_RECALLED: Final = re.compile(r"\[wiki:([a-z0-9][a-z0-9-]{0,127})\]")
_UNAVAILABLE: Final = "Thredz is unavailable (the run uses the local stores; no wiki here)"


@dataclass(frozen=True)
class _Current:
    body: str  # the whole reply: the article's body is within it (``study.says_the_same``)
    version: int = 0
    is_reply: bool = True


@dataclass(frozen=True)
class _Written:
    created: bool


def _one_line(text: str) -> str:
    return " ".join(text.split())


class ThredzWiki:
    """Thredz's wiki, through the server's tools, as the learning loop uses a wiki."""

    def __init__(self, link: ThredzLink) -> None:
        self.link = link

    def _text(self, tool: str, arguments: dict[str, object]) -> str | None:
        """The reply's text; None when the article or answer is not there (an error reply)."""
        result = self.link.call(tool, dict(arguments))
        if result is None:
            raise StoreError(_UNAVAILABLE)
        return None if result.is_error else reply_text(result)

    def get(self, slug: str) -> _Current | None:
        text = self._text("wiki_get", {"slug": slug})
        return _Current(text) if text is not None else None

    def write(
        self, draft: ArticleDraft, *, expected_version: int | None, session_id: str | None = None
    ) -> _Written:
        arguments: dict[str, object] = {
            "slug": draft.slug,
            "title": draft.title,
            "body": draft.body,
            "tags": list(draft.tags or ()),
            "justification": draft.edit_message or "study pass",
        }
        if draft.edit_message:
            arguments["editMessage"] = draft.edit_message
        flagged = next(filter(None, (scan(str(value)) for value in arguments.values())), None)
        if flagged is not None:
            raise StoreError(f"the injection scanner flagged the source (rule {flagged.label})")
        result = self.link.call("wiki_write", arguments)
        if result is None:
            raise StoreError(_UNAVAILABLE)
        text = reply_text(result)
        if result.is_error:
            raise StoreError(f"Thredz refused the article: {_one_line(text)[:300]}")
        return _Written(created=text.lstrip().lower().startswith("created"))

    def recall_texts(self, question: str, k: int) -> list[str]:
        try:
            text = self._text("wiki_recall", {"query": question, "limit": max(1, min(k, 50))})
        except StoreError:
            return []
        slugs = [slug for slug in _RECALLED.findall(text or "") if not slug.startswith(GAP_PREFIX)]
        texts: list[str] = []
        for slug in dict.fromkeys(slugs):
            try:
                article = self._text("wiki_get", {"slug": slug})
            except StoreError:
                break
            if article is not None:
                texts.append(article)
            if len(texts) == k:
                break
        return texts


class ThredzGaps:
    """Failed exam samples as gap notes in Thredz's wiki (``log_knowledge_gap``)."""

    def __init__(self, link: ThredzLink) -> None:
        self.link = link

    def log_gap(self, question: str, sample_id: str) -> str:
        result = self.link.call(
            "log_knowledge_gap",
            {
                "topic": gap_topic(question),
                "detail": f"failed exam sample {sample_id}",
                "priority": "high",
            },
        )
        if result is None:
            raise StoreError(_UNAVAILABLE)
        text = _one_line(reply_text(result))[:200]
        if result.is_error:
            raise StoreError(text)
        return text

    def open_gap(self, question: str) -> str | None:
        return None  # a gap note is the wiki's bookkeeping; nothing to close


def with_thredz_learning(
    catalog: ToolCatalog,
    fragment: FragmentData | None,
    link: ThredzLink,
    workspace: Path,
    log: Callable[[str], None],
) -> ToolCatalog:
    """``catalog`` with the learning tools over Thredz's wiki, when the spec learns into it
    (``learning_on_thredz``) and the bundle's wiring did not already offer them."""
    from specwire.runtime.core.fragment import learning_on_thredz

    if fragment is None or not learning_on_thredz(fragment) or catalog.get(STUDY_TOOL_NAME):
        return catalog
    assert fragment.learning is not None
    tools = learning_tools(thredz_learning_context(fragment, link, workspace))
    for tool in tools:
        catalog.register(tool)
    log(
        f"[learning] {fragment.learning.domain}: {len(fragment.learning.sources)} source(s) "
        f"into Thredz's wiki — {', '.join(tool.name for tool in tools)} wired\n"
    )
    return catalog


def thredz_learning_context(
    fragment: FragmentData, link: ThredzLink, workspace: Path
) -> LearningContext:
    """The learning loop of ``fragment`` (which has ``learning``) over Thredz's wiki, its
    sources read beneath ``workspace``: the tools' context, and a heartbeat's."""
    assert fragment.learning is not None
    return LearningContext(
        ThredzWiki(link), fragment.learning, workspace, ThredzGaps(link), DEFAULT_WIKI_RECALL_K
    )
