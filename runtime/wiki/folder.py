"""Fenced file I/O of one wiki folder (``<root>/wiki/<spec>/``)::

    articles/<slug>.md          the current version of each article
    versions/<slug>/<n>.md      every earlier version, verbatim (supersede, never delete)
    .lock                       held by every writer (``runtime.fs.locking.FileLock``)

Every path is checked to stay inside the store's root and opened one component at a time without
following a symlink (``runtime.fs.fenced``); only regular files named ``<slug>.md`` with a
valid slug are read, so a file a person or a hostile model planted under another name is never
touched. Writes are atomic (temporary file, fsync, rename), mode 0600.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import StoreError, UnsafeFileError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.fs.fenced import read_text, sweep_stale_temps, write_atomic
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.fs.safe_open import open_dir_beneath, open_regular_fd, text_mode
from specwire.runtime.wiki.article import SLUG_RE, check_slug

ARTICLE_SUFFIX = ".md"


@lazy_dataclass(frozen=True)
class UnreadableFile:
    """An article file that could not be read, and why."""

    reason: str


# What identifies one state of an article file: (inode, size, mtime in ns).
Stamp = tuple[int, int, int]


def is_article_name(name: str) -> bool:
    return (
        name.endswith(ARTICLE_SUFFIX)
        and SLUG_RE.fullmatch(name[: -len(ARTICLE_SUFFIX)]) is not None
    )


class WikiFolder:
    def __init__(self, root: Path, directory: Path, *, now: Clock = utc_now) -> None:
        self.root = root
        self.directory = directory
        self.articles_dir = directory / "articles"
        self.versions_dir = directory / "versions"
        self.lock = FileLock(directory / ".lock", what="wiki store", now=now)

    def article_path(self, slug: str) -> Path:
        return self.articles_dir / f"{check_slug(slug)}{ARTICLE_SUFFIX}"

    def version_path(self, slug: str, version: int) -> Path:
        return self.versions_dir / check_slug(slug) / f"{version}{ARTICLE_SUFFIX}"

    def _parts(self, directory: Path) -> tuple[str, ...]:
        return directory.relative_to(self.root).parts

    def folder_stamp(self) -> Stamp | None:
        """The stamp of ``articles/`` itself (changes when a file is added, renamed in or
        removed), None when it does not exist."""
        try:
            info = os.stat(self.articles_dir, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def scan(self) -> dict[str, Stamp]:
        """``{slug: stamp}`` of every article file (nothing when the folder does not exist)."""
        fd = open_dir_beneath(self.root, self._parts(self.articles_dir))
        if fd is None:
            return {}
        found: dict[str, Stamp] = {}
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    if not is_article_name(entry.name):
                        continue
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode):
                        slug = entry.name[: -len(ARTICLE_SUFFIX)]
                        found[slug] = (info.st_ino, info.st_size, info.st_mtime_ns)
        finally:
            os.close(fd)
        return found

    def read_articles(self, slugs: Sequence[str]) -> dict[str, str | UnreadableFile]:
        """Each article file's text, opening the folder once (a file that vanished meanwhile
        is left out; one that cannot be read maps to why)."""
        fd = open_dir_beneath(self.root, self._parts(self.articles_dir))
        if fd is None:
            return {}
        texts: dict[str, str | UnreadableFile] = {}
        try:
            for slug in slugs:
                name = f"{check_slug(slug)}{ARTICLE_SUFFIX}"
                try:
                    file_fd = open_regular_fd(name, dir_fd=fd, label=f"articles/{name}")
                except FileNotFoundError:
                    continue
                except UnsafeFileError as exc:
                    texts[slug] = UnreadableFile(exc.reason)
                    continue
                with os.fdopen(file_fd, "rb") as handle:
                    data = handle.read()
                try:
                    texts[slug] = text_mode(data)
                except UnicodeDecodeError:
                    texts[slug] = UnreadableFile("is not UTF-8 text")
        finally:
            os.close(fd)
        return texts

    def read_article(self, slug: str) -> str | None:
        return read_text(self.article_path(slug), root=self.root)

    def write_article(self, slug: str, text: str) -> None:
        write_atomic(self.article_path(slug), text, root=self.root)

    def read_version(self, slug: str, version: int) -> str | None:
        return read_text(self.version_path(slug, version), root=self.root)

    def keep_version(self, slug: str, version: int, text: str) -> Path:
        """Keep ``text`` as ``versions/<slug>/<version>.md``. A different file already there
        (a person set an article's version back by hand) is never replaced: the text goes to
        ``<version>-2.md``, ``<version>-3.md``, … instead."""
        path = self.version_path(slug, version)
        for copy in range(2, 1000):
            existing = read_text(path, root=self.root)
            if existing is None or existing == text:
                write_atomic(path, text, root=self.root)
                return path
            path = path.with_name(f"{version}-{copy}{ARTICLE_SUFFIX}")
        raise StoreError(f"versions/{slug}/ has too many copies of version {version}")

    def count_versions(self) -> int:
        fd = open_dir_beneath(self.root, self._parts(self.versions_dir))
        if fd is None:
            return 0
        total = 0
        try:
            with os.scandir(fd) as entries:
                slugs = [e.name for e in entries if SLUG_RE.fullmatch(e.name)]
            for slug in slugs:
                child = open_dir_beneath(fd, (slug,))
                if child is None:
                    continue
                try:
                    with os.scandir(child) as files:
                        total += sum(1 for f in files if f.name.endswith(ARTICLE_SUFFIX))
                finally:
                    os.close(child)
        finally:
            os.close(fd)
        return total

    def sweep_temps(self) -> list[str]:
        """Remove temporaries a killed writer left in ``articles/`` (never a live writer's)."""
        return sweep_stale_temps(
            [(self.articles_dir, is_article_name)], root=self.root, lock=self.lock
        )
