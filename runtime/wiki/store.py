"""``WikiStore``: the versioned articles of one spec and every change to them.

- Every content edit keeps the previous file verbatim in ``versions/<slug>/<n>.md`` (supersede,
  never delete), bumps the version, records ``supersedes`` and resets ``verified``; tags,
  sources, confidence and status carry over when the edit omits them.
- Optimistic concurrency: a write names the version it was based on (``expected_version``;
  ``None`` or 0 means "create"), checked under the store's lock against the file on disk, so a
  writer that read an older version — in this process or another — is refused with a
  ``WikiConflict`` naming the current version, and nothing is written.
- ``require_sources``: a body without a ``## Sources`` heading is refused before anything is
  written; the bullets under the heading become the article's ``sources``.
- ``set_signals`` changes ``verified``/``confidence`` only: no version bump, no snapshot.
- A damaged article file is reported (named, with why) and never written over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final, Literal

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.safety.screening import scan, storable
from specwire.runtime.wiki.article import (
    MAX_BODY_CHARS,
    MAX_CATEGORY_CHARS,
    MAX_EDIT_MESSAGE_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TITLE_CHARS,
    Article,
    ArticleStatus,
    DamagedArticle,
    Visibility,
    WikiRefusal,
    check_slug,
    extract_sources,
    has_sources_section,
    parse_article,
    slugify,
)
from specwire.runtime.wiki.folder import WikiFolder
from specwire.runtime.wiki.screening import WITHHELD, article_text, screen_article
from specwire.runtime.wiki.semantic import VectorCache, WikiEmbedder
from specwire.runtime.wiki.snapshot import RESCAN_S, WikiSnapshot, load_snapshot, mark_changed

if TYPE_CHECKING:
    from specwire.runtime.wiki.volume_folder import AnyWikiFolder

SOURCES_REQUIRED: Final = (
    "wiki_write rejected: the body has no `## Sources` section. This wiki requires cited "
    "knowledge — add a `## Sources` heading listing where this came from, then retry. "
    "Nothing was written."
)
GAP_PREFIX: Final = "gap-"
GapPriority = Literal["low", "medium", "high"]


class WikiConflict(WikiRefusal):
    """A write based on a version that is no longer current."""

    def __init__(self, slug: str, current: int, expected: int | None) -> None:
        based = "as a new article" if not expected else f"against version {expected}"
        now = f"is at version {current}" if current else "does not exist yet"
        retry = (
            f"retry with expectedVersion {current}" if current else "retry without expectedVersion"
        )
        super().__init__(
            f"stale_article_version: {slug} {now} (you wrote {based}) — read it with wiki_get, "
            f"merge your change, then {retry}. Nothing was written."
        )
        self.slug = slug
        self.current_version = current


@lazy_dataclass(frozen=True)
class ArticleDraft:
    """A write request. ``None`` fields keep the current article's value (or the default)."""

    slug: str
    title: str
    body: str
    summary: str | None = None
    tags: Sequence[str] | None = None
    category: str | None = None
    status: ArticleStatus | None = None
    confidence: float | None = None
    edit_message: str | None = None
    visibility: Visibility | None = None


@lazy_dataclass(frozen=True)
class WriteOutcome:
    """A written article, and whether it was new."""

    article: Article
    created: bool


def _storable(value: str, what: str) -> str:
    if "\x00" in value:
        raise WikiRefusal(f"{what} must not contain a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise WikiRefusal(f"{what} is not valid Unicode text") from None
    return value


def _bounded(value: str | None, what: str, limit: int) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value:
        raise WikiRefusal(f"{what} must not be empty")
    if len(value) > limit:
        raise WikiRefusal(f"{what} is too long ({len(value)} characters; at most {limit})")
    return _storable(value, what)


def _tags(tags: Sequence[str]) -> tuple[str, ...]:
    cleaned: dict[str, None] = {}
    for tag in tags:
        text = _bounded(tag, "a tag", MAX_TAG_CHARS)
        assert text is not None
        cleaned[text] = None
    if len(cleaned) > MAX_TAGS:
        raise WikiRefusal(f"too many tags ({len(cleaned)}; at most {MAX_TAGS})")
    return tuple(cleaned)


class WikiStore:
    def __init__(
        self,
        layout: StoreLayout,
        *,
        require_sources: bool = False,
        embedder: WikiEmbedder | None = None,
        now: Clock = utc_now,
        volume: DocumentVolume | None = None,
        rescan_s: float = RESCAN_S,
    ) -> None:
        """``volume``: a database volume keeps the articles there (``memory.state:
        postgres``); None or a file volume: the folder under the layout's root. ``rescan_s``:
        how stale a read may be while the folder's own stamp holds (``snapshot.RESCAN_S``)."""
        self.layout = layout
        self.folder: AnyWikiFolder
        if volume is None or volume.on_files:
            self.folder = WikiFolder(layout.root, layout.wiki_dir, now=now)
        else:
            from specwire.runtime.pg.volume import PostgresVolume
            from specwire.runtime.wiki.volume_folder import VolumeWikiFolder

            if not isinstance(volume, PostgresVolume):
                raise TypeError(f"no wiki folder for {type(volume).__name__}")
            self.folder = VolumeWikiFolder(volume, layout.wiki_dir, now=now)
        self.require_sources = require_sources
        self.vectors = (
            VectorCache(embedder, self.folder.directory) if embedder is not None else None
        )
        self._now = now
        self._rescan_s = rescan_s

    @property
    def path(self) -> str:
        volume = getattr(self.folder, "volume", None)
        if volume is not None:
            return str(volume.where)
        return str(self.folder.directory)

    # ── reads ───────────────────────────────────────────────────────────────────────────────

    def snapshot(self) -> WikiSnapshot:
        return load_snapshot(self.folder, rescan_s=self._rescan_s)

    def get(self, slug: str) -> Article | None:
        """The current article (None when there is none); ``DamagedArticle`` when its file is
        not readable as one."""
        check_slug(slug)
        snap = self.snapshot()
        if slug in snap.damaged:
            raise self._damaged(slug, snap.damaged[slug])
        return snap.articles.get(slug)

    def get_version(self, slug: str, version: int) -> Article | None:
        text = self.folder.read_version(slug, version)
        if text is None:
            return None
        article = parse_article(text, expected_slug=slug)
        withheld = screen_article(article)
        if withheld is not None:
            raise self._damaged(slug, withheld)
        return article

    def _damaged(self, slug: str, why: str) -> DamagedArticle:
        if why.startswith(WITHHELD):
            return DamagedArticle(
                f"the article {slug} is {why}; it is not shown until a clean version replaces it"
            )
        return DamagedArticle(
            f"the article file articles/{slug}.md is damaged ({why}) — a person must fix it or "
            "move it away; nothing was changed"
        )

    # ── writes ──────────────────────────────────────────────────────────────────────────────

    def write(
        self, draft: ArticleDraft, *, expected_version: int | None, session_id: str | None = None
    ) -> WriteOutcome:
        return self._write(draft, expected_version, session_id, self.require_sources)

    def _write(
        self,
        draft: ArticleDraft,
        expected_version: int | None,
        session_id: str | None,
        sources_required: bool,
    ) -> WriteOutcome:
        draft = _redacted(draft)
        slug = check_slug(draft.slug)
        title = _bounded(draft.title, "title", MAX_TITLE_CHARS)
        assert title is not None
        body = _storable(draft.body.strip("\n"), "body")
        if not body.strip():
            raise WikiRefusal("body must not be empty")
        if len(body) > MAX_BODY_CHARS:
            raise WikiRefusal(
                f"body is too long ({len(body)} characters; at most {MAX_BODY_CHARS})"
            )
        if sources_required and not has_sources_section(body):
            raise WikiRefusal(SOURCES_REQUIRED)
        with self.folder.lock:
            current, on_disk = self._current_file(slug)
            found = current.version if current is not None else 0
            if (expected_version or 0) != found:
                raise WikiConflict(slug, found, expected_version)
            article = self._next(current, draft, slug, title, body, session_id)
            flagged = scan(article_text(article))
            if flagged is not None:
                raise WikiRefusal(
                    f"wiki_write quarantined by the injection scanner (rule {flagged.label}): "
                    "nothing was written"
                )
            if current is not None and on_disk is not None:
                self.folder.keep_version(slug, current.version, on_disk)
            self.folder.write_article(slug, article.render())
            mark_changed(self.folder.directory)
        return WriteOutcome(article, created=current is None)

    def _current_file(self, slug: str) -> tuple[Article | None, str | None]:
        """The article as it is on disk now, with its file's text (read under the lock, never
        from the cache)."""
        text = self.folder.read_article(slug)
        if text is None:
            return None, None
        try:
            return parse_article(text, expected_slug=slug), text
        except DamagedArticle as exc:
            raise self._damaged(slug, str(exc)) from None

    def _next(
        self,
        current: Article | None,
        draft: ArticleDraft,
        slug: str,
        title: str,
        body: str,
        session_id: str | None,
    ) -> Article:
        stamp = iso(self._now())
        confidence = draft.confidence
        if confidence is not None and not 0 <= confidence <= 1:
            raise WikiRefusal("confidenceScore must be between 0 and 1")
        summary = _bounded(draft.summary, "summary", MAX_SUMMARY_CHARS)
        category = _bounded(draft.category, "category", MAX_CATEGORY_CHARS)
        edit_message = _bounded(draft.edit_message, "editMessage", MAX_EDIT_MESSAGE_CHARS)
        tags = _tags(draft.tags) if draft.tags is not None else None
        base = current or Article(
            slug=slug, title=title, body=body, created_at=stamp, created_by=session_id
        )
        return replace(
            base,
            title=title,
            body=body,
            sources=extract_sources(body) or base.sources,
            updated_at=stamp,
            summary=summary if summary is not None else base.summary,
            category=category if category is not None else base.category,
            edit_message=edit_message,
            tags=tags if tags is not None else base.tags,
            status=draft.status or base.status,
            confidence=confidence if confidence is not None else base.confidence,
            visibility=draft.visibility or base.visibility,
            version=base.version + 1 if current is not None else 1,
            supersedes=current.version if current is not None else None,
            verified=False,
        )

    def set_signals(
        self, slug: str, *, verified: bool | None = None, confidence: float | None = None
    ) -> Article:
        check_slug(slug)
        if confidence is not None and not 0 <= confidence <= 1:
            raise WikiRefusal("confidenceScore must be between 0 and 1")
        with self.folder.lock:
            current, _ = self._current_file(slug)
            if current is None:
                raise WikiRefusal(f"no article {slug} — list them with wiki_list")
            changed = replace(
                current,
                verified=current.verified if verified is None else verified,
                confidence=current.confidence if confidence is None else confidence,
            )
            self.folder.write_article(slug, changed.render())
            mark_changed(self.folder.directory)
        return changed

    def log_gap(
        self, topic: str, *, detail: str | None, tags: Sequence[str], priority: GapPriority
    ) -> WriteOutcome:
        """Record a knowledge gap as the draft article ``gap-<slug(topic)>``; a repeat appends
        an occurrence line."""
        topic_text = _bounded(topic, "topic", MAX_TITLE_CHARS - len("Study gap: "))
        assert topic_text is not None
        slug = GAP_PREFIX + slugify(topic_text, max_chars=124)
        if slug == GAP_PREFIX:
            raise WikiRefusal("topic needs at least one letter or digit")
        what = " ".join((detail or "").split()) or "(no detail)"
        line = f"- {iso(self._now())} ({priority}) {what}"
        base_tags = ["gaps/", f"priority:{priority}", *tags]
        for _ in range(3):  # a concurrent logger bumped it: read again and append again
            current = self.get(slug)
            if current is None:
                body = f"Knowledge gap: {topic_text}\n\n## Occurrences\n\n{line}"
                merged = base_tags
            else:
                body = f"{current.body}\n{line}"
                merged = [*current.tags, *base_tags]
            draft = ArticleDraft(
                slug=slug,
                title=f"Study gap: {topic_text}",
                body=body[-MAX_BODY_CHARS:],
                tags=list(dict.fromkeys(merged))[:MAX_TAGS],
                status="draft" if current is None else None,
            )
            try:
                # Gap notes are the wiki's own bookkeeping, not knowledge: no sources required.
                expected = current.version if current else None
                return self._write(draft, expected, None, False)
            except WikiConflict:
                mark_changed(self.folder.directory)  # read the files again, not the cache
                continue
        raise StoreError(f"{slug} kept changing while the gap was being logged; retry")


def _redacted(draft: ArticleDraft) -> ArticleDraft:
    """The draft with secret values replaced by their names in every text field (the same
    redaction every memory write gets: ``runtime.safety.screening.storable``)."""

    def kept(value: str | None) -> str | None:
        return None if value is None else storable(value)

    return replace(
        draft,
        title=storable(draft.title),
        body=storable(draft.body),
        summary=kept(draft.summary),
        tags=None if draft.tags is None else [storable(tag) for tag in draft.tags],
        category=kept(draft.category),
        edit_message=kept(draft.edit_message),
    )
