"""One Markdown note of a vault, and the links between notes.

A note is ``<path>.md`` with optional front matter (``vault.frontmatter``): ``title`` (else the
file's stem), ``aliases``, ``tags`` (a leading ``#`` dropped), ``summary``, ``type`` and
``scope``. ``scope`` is a scope key label (``agent``, ``crew``, ``user:U123``…; Remem's
``global``, ``workspace`` and ``project`` read as ``agent``); absent means ``agent``. A note
whose scope cannot be read has ``scope=None`` and is never returned (fail closed).

``[[Target]]``, ``[[Target|shown]]``, ``[[Target#Heading]]`` and ``![[Target]]`` link to the
note whose path (without ``.md``), stem, title or alias is ``Target`` (case and Unicode form
ignored; the first by path when several match). Backlinks are the notes that link to a note.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from specwire.runtime.core.scopes import AGENT, ScopeError, ScopeKey
from specwire.runtime.facts.text import fold
from specwire.runtime.facts.vault.frontmatter import split_front_matter

# The longest title, alias, tag, summary or type kept (longer ones are cut).
MAX_FIELD_CHARS = 240
# At most this many links are read from one note.
MAX_LINKS = 256
_WIKILINK = re.compile(
    r"!?\[\[([^\[\]|#\n]{1,240})(?:#[^\[\]|\n]{0,240})?(?:\|([^\[\]\n]{0,240}))?\]\]"
)
# Remem's scopes that mean "everyone this agent talks to" here.
_AGENT_ALIASES = frozenset({"global", "workspace", "project", "agent"})


@dataclass(frozen=True)
class Note:
    path: str  # relative to the vault, "/"-separated, with ".md"
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    summary: str | None
    type: str | None
    scope: ScopeKey | None  # None: unreadable, never returned
    body: str
    links: tuple[str, ...]  # link targets as written (deduplicated, in order)
    # The front matter names the title (else it is the file's stem, not part of the content).
    titled: bool = False

    @property
    def stem(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")


def parse_note(path: str, text: str) -> Note:
    matter = split_front_matter(text)
    title = _field(matter.text("title")) or _field(path.rsplit("/", 1)[-1].removesuffix(".md"))
    links = list(dict.fromkeys(m.group(1).strip() for m in _WIKILINK.finditer(matter.body)))
    return Note(
        path=path,
        title=title or path,
        aliases=tuple(dict.fromkeys(_field(a) for a in matter.items("aliases") if _field(a))),
        tags=tuple(
            dict.fromkeys(
                _field(t.lstrip("#")) for t in matter.items("tags") if _field(t.lstrip("#"))
            )
        ),
        summary=_field(matter.text("summary")) or None,
        type=_field(matter.text("type")) or None,
        scope=_scope(matter.text("scope")),
        body=matter.body.strip(),
        links=tuple(link for link in links if link)[:MAX_LINKS],
        titled=bool(_field(matter.text("title"))),
    )


def readable(body: str) -> str:
    """``body`` as a reader sees it: each wikilink replaced by its shown text (its alias, else
    its target)."""
    return _WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), body)


def _field(value: str | None) -> str:
    if value is None:
        return ""
    one_line = " ".join(value.split())
    return one_line[:MAX_FIELD_CHARS]


def _scope(label: str | None) -> ScopeKey | None:
    if label is None or label.strip().casefold() in _AGENT_ALIASES:
        return AGENT
    try:
        return ScopeKey.parse(label.strip())
    except ScopeError:
        return None


def link_key(name: str) -> str:
    """How a link target and a note's names are compared."""
    return " ".join(fold(name).split()).removesuffix(".md")


def resolve_links(notes: Iterable[Note]) -> dict[str, tuple[str, ...]]:
    """Per note path, the paths of the notes that link to it (its backlinks), sorted."""
    ordered = sorted(notes, key=lambda note: note.path)
    names: dict[str, str] = {}
    for note in ordered:  # exact paths first, then stems, titles and aliases
        names.setdefault(link_key(note.path), note.path)
    for note in ordered:
        for name in (note.stem, note.title, *note.aliases):
            names.setdefault(link_key(name), note.path)
    backlinks: dict[str, set[str]] = {}
    for note in ordered:
        for target in note.links:
            found = names.get(link_key(target))
            if found is not None and found != note.path:
                backlinks.setdefault(found, set()).add(note.path)
    return {path: tuple(sorted(sources)) for path, sources in backlinks.items()}


def titles_of(paths: Iterable[str], notes: Mapping[str, Note]) -> tuple[str, ...]:
    return tuple(notes[path].title for path in paths if path in notes)
