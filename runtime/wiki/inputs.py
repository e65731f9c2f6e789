"""Input models of the ten wiki tools (names and fields as CrewHaus / thredz-mcp define them).

Every ``wiki_*`` tool accepts ``space`` for parity with thredz; a local wiki has one space, so it
is accepted and ignored. ``wiki_write`` adds one field of our own, ``expectedVersion``: the
version the edit is based on. Without it the tool bases the edit on the version current when the
call runs (CrewHaus's behaviour); with it a stale edit is refused with the current version named.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from specwire.runtime.core.fragment import (
    DEFAULT_WIKI_RECALL_K,
    RECALL_K_MAX,
    RECALL_K_MIN,
    WIKI_SLUG_PATTERN,
)
from specwire.runtime.core.tool_types import ToolInput
from specwire.runtime.wiki.article import (
    MAX_BODY_CHARS,
    MAX_CATEGORY_CHARS,
    MAX_EDIT_MESSAGE_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TITLE_CHARS,
    ArticleStatus,
    Visibility,
)
from specwire.runtime.wiki.queries import SortKey, SortOrder

MAX_QUERY_CHARS = 2_000
MAX_DETAIL_CHARS = 2_000
MAX_JUSTIFICATION_CHARS = 500
DEFAULT_MIN_SCORE = 0.05
DEFAULT_LIST_LIMIT = 25
MAX_LIST_LIMIT = 100

Slug = Annotated[
    str,
    Field(
        pattern=WIKI_SLUG_PATTERN,
        description="The article's slug: lowercase letters, digits and hyphens (deploy-target).",
    ),
]
Query = Annotated[
    str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for.")
]
Tag = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TAG_CHARS)]
Limit = Annotated[
    int,
    Field(
        ge=RECALL_K_MIN,
        le=RECALL_K_MAX,
        description=f"How many articles at most (default {DEFAULT_WIKI_RECALL_K}).",
    ),
]
Confidence = Annotated[float, Field(ge=0, le=1, description="How sure the knowledge is (0-1).")]
Justification = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_JUSTIFICATION_CHARS,
        description="A short justification for the change, checked against the instructions.",
    ),
]


class _WikiInput(ToolInput):
    space: str | None = Field(
        default=None, max_length=200, description="The wiki space (one local space; ignored)."
    )


class WikiRecallInput(_WikiInput):
    query: Query
    limit: Limit | None = None


class WikiSemanticSearchInput(_WikiInput):
    query: Query
    limit: Limit | None = None
    minScore: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description=f"The lowest cosine similarity shown (default {DEFAULT_MIN_SCORE}).",
    )


class WikiSearchInput(_WikiInput):
    query: Query


class WikiGetInput(_WikiInput):
    slug: Slug
    concise: bool | None = Field(
        default=None, description="Cut the body at 600 characters (default: the whole body)."
    )


class WikiWriteInput(_WikiInput):
    slug: Slug
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS, description="The title.")
    body: str = Field(
        min_length=1,
        max_length=MAX_BODY_CHARS,
        description="Markdown body — include a ## Sources section with citations",
    )
    summary: str | None = Field(
        default=None, min_length=1, max_length=MAX_SUMMARY_CHARS, description="One-line summary."
    )
    tags: list[Tag] | None = Field(
        default=None,
        max_length=MAX_TAGS,
        description="Labels (kept from the last version if omitted).",
    )
    category: str | None = Field(
        default=None, min_length=1, max_length=MAX_CATEGORY_CHARS, description="A category."
    )
    status: ArticleStatus | None = Field(
        default=None, description="draft, published (default), review or archived."
    )
    confidenceScore: Confidence | None = None
    editMessage: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_EDIT_MESSAGE_CHARS,
        description="What this edit changes.",
    )
    visibility: Visibility | None = Field(default=None, description="private (default) or shared.")
    expectedVersion: int | None = Field(
        default=None,
        ge=0,
        description="The version your edit is based on (from wiki_get; 0 for a new article). "
        "If the article changed since, nothing is written and the current version is named.",
    )
    justification: Justification


class WikiListInput(_WikiInput):
    query: Query | None = None
    tags: str | None = Field(
        default=None,
        max_length=MAX_TAGS * (MAX_TAG_CHARS + 1),
        description="Comma-separated tags; an article must carry all of them.",
    )
    category: str | None = Field(default=None, max_length=MAX_CATEGORY_CHARS)
    status: ArticleStatus | None = None
    sort: SortKey | None = Field(
        default=None, description="updated (default), created, title or relevance."
    )
    order: SortOrder | None = Field(default=None, description="asc (default) or desc.")
    limit: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LIST_LIMIT,
        description=f"How many articles at most (default {DEFAULT_LIST_LIMIT}).",
    )


class WikiRelatedInput(_WikiInput):
    slug: Slug


class WikiSetSignalsInput(_WikiInput):
    slug: Slug
    verified: bool | None = Field(default=None, description="Whether the article is verified.")
    confidenceScore: Confidence | None = None
    justification: Justification


class WikiStatsInput(_WikiInput):
    pass


class LogKnowledgeGapInput(ToolInput):
    topic: str = Field(
        min_length=1, max_length=180, description="What you did not know, in a few words."
    )
    detail: str | None = Field(
        default=None, max_length=MAX_DETAIL_CHARS, description="Where the gap showed up."
    )
    tags: list[Tag] | None = Field(default=None, max_length=MAX_TAGS - 2)
    priority: Literal["low", "medium", "high"] | None = Field(
        default=None, description="low, medium (default) or high."
    )
