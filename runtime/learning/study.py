"""A study pass: every source of the spec read into a sourced wiki article.

One article per source, its slug from the source (``docs/billing.md`` → ``study-docs-billing-md``),
its title the source's first ``# heading``, its body the source's text and a ``## Sources``
section naming the source (the wiki's ``requireSources`` rule holds). A source whose article
already says the same is left alone, so a pass is idempotent and cheap to repeat (on every
dream); a changed source updates its article (the previous version is kept by the wiki). A
source that cannot be read, or whose text the wiki refuses (the injection scanner), is reported
and the others are still studied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, Protocol

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.learning.sources import (
    SourceText,
    SourceUnreadable,
    read_source,
    url_origins,
)
from specwire.runtime.wiki.article import MAX_BODY_CHARS, slugify
from specwire.runtime.wiki.store import ArticleDraft, WikiConflict

STUDY_SLUG_PREFIX: Final = "study-"
STUDY_TAG: Final = "studied"
_SOURCES_SECTION_ROOM: Final = 2_200

Outcome = Literal["created", "updated", "unchanged", "failed"]


@dataclass(frozen=True)
class StudiedSource:
    ref: str
    outcome: Outcome
    slug: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class StudyReport:
    sources: tuple[StudiedSource, ...] = field(default=())

    def count(self, outcome: Outcome) -> int:
        return sum(1 for item in self.sources if item.outcome == outcome)

    @property
    def written(self) -> int:
        return self.count("created") + self.count("updated")

    def summary(self) -> str:
        return (
            f"study pass over {len(self.sources)} source(s): {self.count('created')} article(s) "
            f"created, {self.count('updated')} updated, {self.count('unchanged')} unchanged, "
            f"{self.count('failed')} failed"
        )

    def lines(self) -> list[str]:
        rows = [self.summary()]
        for item in self.sources:
            where = f" → {item.slug}" if item.slug else ""
            detail = f" ({item.detail})" if item.detail else ""
            rows.append(f"- {item.ref}: {item.outcome}{where}{detail}")
        return rows


class _Current(Protocol):
    @property
    def body(self) -> str: ...

    @property
    def version(self) -> int: ...


class _Written(Protocol):
    @property
    def created(self) -> bool: ...


class StudyWiki(Protocol):
    """What a study pass writes into: the local ``WikiStore``, or Thredz's wiki
    (``runtime.learning.thredz_home``)."""

    def get(self, slug: str) -> _Current | None: ...

    def write(
        self, draft: ArticleDraft, *, expected_version: int | None, session_id: str | None = None
    ) -> _Written: ...


def says_the_same(current: _Current, body: str) -> bool:
    """Whether the current article already holds ``body``: the same body; for a remote wiki,
    whose answer is its tool's whole reply (``is_reply``), the body found within it, whitespace
    aside."""
    if getattr(current, "is_reply", False):
        return " ".join(body.split()) in " ".join(current.body.split())
    return current.body.strip("\n") == body.strip("\n")


def article_slug(ref: str) -> str:
    stem = ref.split("://", 1)[-1]
    return (STUDY_SLUG_PREFIX + slugify(stem, max_chars=120)).rstrip("-")


def article_body(source: SourceText) -> str:
    text = source.text.strip("\n")
    room = MAX_BODY_CHARS - _SOURCES_SECTION_ROOM
    cut = len(text) > room
    if cut:
        text = text[:room]
    note = " (first part)" if cut or source.truncated else ""
    return f"{text}\n\n## Sources\n\n- {source.ref}{note}\n"


def default_fetch(sources: Sequence[str]) -> Tool | None:
    """A fetch tool allowed the URL sources' origins only (None without URL sources, or
    without httpx: those sources are then reported as unreadable)."""
    origins = url_origins(sources)
    if not origins:
        return None
    from specwire.runtime.tools.fetch import fetch_problem, fetch_tool

    if fetch_problem() is not None:
        return None
    return fetch_tool(origins)


def study_pass(
    store: StudyWiki,
    sources: Sequence[str],
    workspace: Path,
    *,
    fetch: Tool | None = None,
    session_id: str | None = None,
) -> StudyReport:
    studied: list[StudiedSource] = []
    for ref in sources:
        studied.append(_study_one(store, ref, workspace, fetch, session_id))
    return StudyReport(tuple(studied))


def _study_one(
    store: StudyWiki, ref: str, workspace: Path, fetch: Tool | None, session_id: str | None
) -> StudiedSource:
    slug = article_slug(ref)
    try:
        source = read_source(ref, workspace, fetch)
    except SourceUnreadable as exc:
        return StudiedSource(ref, "failed", detail=str(exc))
    body = article_body(source)
    for _ in range(3):  # another writer bumped the article in between: read again
        try:
            current = store.get(slug)
        except StoreError as exc:  # a damaged file; Thredz unreachable
            return StudiedSource(ref, "failed", slug, " ".join(str(exc).split()))
        if current is not None and says_the_same(current, body):
            return StudiedSource(ref, "unchanged", slug)
        draft = ArticleDraft(
            slug=slug,
            title=source.title,
            body=body,
            tags=(STUDY_TAG,),
            edit_message=f"study pass: {ref}",
        )
        try:
            done = store.write(
                draft,
                expected_version=current.version if current is not None else None,
                session_id=session_id,
            )
        except WikiConflict:
            continue
        except StoreError as exc:  # a refusal (the injection scanner), a damaged file
            return StudiedSource(ref, "failed", slug, " ".join(str(exc).split()))
        return StudiedSource(ref, "created" if done.created else "updated", slug)
    return StudiedSource(ref, "failed", slug, "the article kept changing; study again")
