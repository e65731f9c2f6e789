"""Shared helpers of the wiki tests: a store on a tmp folder, a clock, a tiny embedder."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import Tool, ToolContext, ToolResult
from specwire.runtime.wiki.semantic import WikiEmbedder
from specwire.runtime.wiki.store import ArticleDraft, WikiStore

SOURCES = "\n\n## Sources\n\n- the user, 2026-07-01\n"


class Ticker:
    """A clock that advances one second per call, from 2026-07-01."""

    def __init__(self) -> None:
        self.at = datetime(2026, 7, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.at += timedelta(seconds=1)
        return self.at


class ConceptEmbedder:
    """A test embedder: each dimension is a concept, and a word votes for its concept, so
    "container orchestration" and "Kubernetes" land close while sharing no word."""

    CONCEPTS: Mapping[str, tuple[str, ...]] = {
        "orchestration": ("kubernetes", "k8s", "container", "containers", "orchestration", "pods"),
        "food": ("lunch", "pizza", "menu", "cafeteria"),
        "money": ("invoice", "billing", "payment", "refund"),
    }

    id = "test/concepts"
    dim = 3

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            words = re.findall(r"[a-z0-9]+", text.lower())
            row = [float(sum(w in vocab for w in words)) for vocab in self.CONCEPTS.values()]
            norm = math.sqrt(sum(x * x for x in row)) or 1.0
            rows.append([x / norm for x in row])
        return rows


def _is_embedder(e: WikiEmbedder) -> WikiEmbedder:
    return e


_is_embedder(ConceptEmbedder())


def make_store(root: Path, spec: str = "kb", **kwargs: Any) -> WikiStore:
    kwargs.setdefault("now", Ticker())
    return WikiStore(StoreLayout(root.resolve(), spec), **kwargs)


def draft(slug: str, body: str, title: str | None = None, **fields: Any) -> ArticleDraft:
    return ArticleDraft(
        slug=slug, title=title or slug.replace("-", " ").title(), body=body, **fields
    )


def call(
    tool: Tool, args: Mapping[str, Any], events: list[tuple[str, Any]] | None = None
) -> ToolResult:
    def emit(kind: str, payload: Mapping[str, Any]) -> None:
        if events is not None:
            events.append((kind, dict(payload)))

    return tool.invoke(args, ToolContext("sess_0123456789abcdef", "tu_1", emit))
