"""A wiki article: its fields, its file format, and the rules every stored field obeys.

File format (``articles/<slug>.md``, and each prior version in ``versions/<slug>/<n>.md``)::

    ---
    {"slug": "…", "title": "…", "version": 2, …}      (JSON front matter: valid YAML)
    ---

    <markdown body>

A file a person edited may use block YAML front matter; it is read the same way. A file that
does not parse, or whose fields break a rule below, is reported as damaged (naming the file and
the reason) and never written over.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Final, Literal, get_args

from specwire.runtime.continuity.frontmatter import join_frontmatter, split_frontmatter
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import WIKI_SLUG_PATTERN
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.patterns import LazyPattern

ArticleStatus = Literal["draft", "published", "review", "archived"]
Visibility = Literal["private", "shared"]
STATUSES: Final[tuple[str, ...]] = get_args(ArticleStatus)

SLUG_RE: Final = LazyPattern(WIKI_SLUG_PATTERN)
MAX_SLUG_CHARS: Final = 128
MAX_TITLE_CHARS: Final = 200
MAX_BODY_CHARS: Final = 100_000
MAX_SUMMARY_CHARS: Final = 1_000
MAX_TAGS: Final = 20
MAX_TAG_CHARS: Final = 64
MAX_CATEGORY_CHARS: Final = 64
MAX_SOURCES: Final = 20
MAX_SOURCE_CHARS: Final = 500
MAX_EDIT_MESSAGE_CHARS: Final = 500
DEFAULT_CONFIDENCE: Final = 0.5

_WIKILINK_RE: Final = LazyPattern(r"\[\[([^\[\]|\n]{1,200})(?:\|[^\[\]\n]{0,200})?\]\]")
SOURCES_HEADING_RE: Final = LazyPattern(r"^##\s+Sources\b", re.MULTILINE)
_HEADING_RE: Final = LazyPattern(r"^#{1,2}\s", re.MULTILINE)
_BULLET_RE: Final = LazyPattern(r"^\s*(?:[-*+]|\d+[.)])\s+(.+?)\s*$")


class WikiRefusal(StoreError):
    """A wiki operation refused; the message is shown to the model as is."""


class DamagedArticle(StoreError):
    """An article file that cannot be read as an article (named, with the reason)."""


def check_slug(slug: str) -> str:
    if not isinstance(slug, str) or SLUG_RE.fullmatch(slug) is None:
        raise WikiRefusal(
            f"invalid slug {str(slug)[:80]!r}: use lowercase letters, digits and hyphens, starting "
            f"with a letter or digit, at most {MAX_SLUG_CHARS} characters (e.g. deploy-target)"
        )
    return slug


def slugify(text: str, *, max_chars: int = MAX_SLUG_CHARS) -> str:
    """``"Some Page"`` → ``some-page`` (empty when nothing usable is left)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:max_chars].rstrip("-")


def extract_links(body: str, own_slug: str) -> tuple[str, ...]:
    """``[[Some Page]]`` and ``[[Some Page|label]]`` targets as slugs: valid, distinct, in order
    of first mention, never the article itself."""
    found: dict[str, None] = {}
    for match in _WIKILINK_RE.finditer(body):
        target = slugify(match.group(1))
        if target and target != own_slug and SLUG_RE.fullmatch(target):
            found[target] = None
    return tuple(found)


def has_sources_section(body: str) -> bool:
    return SOURCES_HEADING_RE.search(body) is not None


def extract_sources(body: str) -> tuple[str, ...]:
    """The bullets under ``## Sources`` (up to ``MAX_SOURCES``), each cut to a bounded length."""
    match = SOURCES_HEADING_RE.search(body)
    if match is None:
        return ()
    rest = body[match.end() :].split("\n", 1)
    section = rest[1] if len(rest) > 1 else ""
    end = _HEADING_RE.search(section)
    if end is not None:
        section = section[: end.start()]
    sources: list[str] = []
    for line in section.split("\n"):
        bullet = _BULLET_RE.match(line)
        if bullet is not None:
            sources.append(bullet.group(1)[:MAX_SOURCE_CHARS])
        if len(sources) == MAX_SOURCES:
            break
    return tuple(sources)


@lazy_dataclass(frozen=True)
class Article:
    """One wiki article: its front matter and body."""

    slug: str
    title: str
    body: str
    version: int = 1
    tags: tuple[str, ...] = ()
    status: ArticleStatus = "published"
    confidence: float = DEFAULT_CONFIDENCE
    verified: bool = False
    sources: tuple[str, ...] = ()
    summary: str | None = None
    category: str | None = None
    visibility: Visibility = "private"
    supersedes: int | None = None
    created_by: str | None = None
    created_at: str = ""
    updated_at: str = ""
    edit_message: str | None = None
    links: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", extract_links(self.body, self.slug))

    def front_matter(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "slug": self.slug,
            "title": self.title,
            "version": self.version,
            "tags": list(self.tags),
            "status": self.status,
            "confidence": self.confidence,
            "verified": self.verified,
            "sources": list(self.sources),
            "visibility": self.visibility,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }
        optional = {
            "summary": self.summary,
            "category": self.category,
            "supersedes": self.supersedes,
            "createdBy": {"sessionId": self.created_by} if self.created_by else None,
            "editMessage": self.edit_message,
        }
        meta.update({key: value for key, value in optional.items() if value is not None})
        return meta

    def render(self) -> str:
        body = self.body if self.body.endswith("\n") else self.body + "\n"
        return join_frontmatter(self.front_matter(), body)


def parse_article(text: str, *, expected_slug: str) -> Article:
    """An article file's content, or ``DamagedArticle`` saying why it is not one."""
    try:
        meta, body = split_frontmatter(text)
    except ValueError as exc:
        raise DamagedArticle(str(exc)) from None
    try:
        return _article_from(meta, body.lstrip("\n"), expected_slug)
    except (TypeError, ValueError) as exc:
        raise DamagedArticle(str(exc)) from None


def _article_from(meta: Mapping[str, Any], body: str, expected_slug: str) -> Article:
    slug = meta.get("slug", expected_slug)
    if slug != expected_slug:
        raise ValueError(f"its slug {slug!r} does not match its file name ({expected_slug})")
    title = _text(meta, "title", MAX_TITLE_CHARS, required=True)
    assert title is not None
    version = meta.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"version must be a whole number ≥ 1 (got {version!r})")
    status = meta.get("status", "published")
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)} (got {status!r})")
    visibility = meta.get("visibility", "private")
    if visibility not in ("private", "shared"):
        raise ValueError(f"visibility must be private or shared (got {visibility!r})")
    supersedes = meta.get("supersedes")
    if supersedes is not None and (isinstance(supersedes, bool) or not isinstance(supersedes, int)):
        raise ValueError(f"supersedes must be a version number (got {supersedes!r})")
    created_by = meta.get("createdBy")
    session = created_by.get("sessionId") if isinstance(created_by, Mapping) else None
    if len(body) > MAX_BODY_CHARS:
        raise ValueError(f"its body is longer than {MAX_BODY_CHARS} characters")
    return Article(
        slug=slug,
        title=title,
        body=body.rstrip("\n"),
        version=version,
        tags=_strings(meta, "tags", MAX_TAGS, MAX_TAG_CHARS),
        status=status,
        confidence=_confidence(meta.get("confidence", DEFAULT_CONFIDENCE)),
        verified=_flag(meta, "verified"),
        sources=_strings(meta, "sources", MAX_SOURCES, MAX_SOURCE_CHARS),
        summary=_text(meta, "summary", MAX_SUMMARY_CHARS),
        category=_text(meta, "category", MAX_CATEGORY_CHARS),
        visibility=visibility,
        supersedes=supersedes,
        created_by=session if isinstance(session, str) else None,
        created_at=str(meta.get("createdAt", "")),
        updated_at=str(meta.get("updatedAt", "")),
        edit_message=_text(meta, "editMessage", MAX_EDIT_MESSAGE_CHARS),
    )


def _text(meta: Mapping[str, Any], key: str, limit: int, *, required: bool = False) -> str | None:
    value = meta.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty string")
    if len(value) > limit:
        raise ValueError(f"{key} is longer than {limit} characters")
    return value


def _strings(meta: Mapping[str, Any], key: str, count: int, limit: int) -> tuple[str, ...]:
    value = meta.get(key, [])
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValueError(f"{key} must be a list of strings")
    if len(value) > count or not all(isinstance(v, str) and len(v) <= limit for v in value):
        raise ValueError(f"{key} must hold at most {count} strings of at most {limit} characters")
    return tuple(value)


def _flag(meta: Mapping[str, Any], key: str) -> bool:
    value = meta.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false")
    return value


def _confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"confidence must be a number between 0 and 1 (got {value!r})")
    return float(value)
