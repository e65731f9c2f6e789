"""``VolumeWikiFolder``: ``WikiFolder``'s interface over a database volume
(``memory.state: postgres``): the same paths (``wiki/<spec>/articles/<slug>.md``,
``versions/<slug>/<n>.md``) as document keys, the same texts, the store lock an advisory lock
held by the writer's transaction. A stamp is ``(0, size, revision)``: every write takes a new
revision, so the snapshot cache sees another worker's edit on its next read.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import StoreError
from specwire.runtime.fs.locking import DEFAULT_WAIT_S
from specwire.runtime.wiki.article import SLUG_RE, check_slug
from specwire.runtime.wiki.folder import (
    ARTICLE_SUFFIX,
    Stamp,
    UnreadableFile,
    WikiFolder,
    is_article_name,
)

if TYPE_CHECKING:
    from specwire.runtime.pg.volume import PostgresVolume


WAIT_S = DEFAULT_WAIT_S  # as the file lock's


class _VolumeLock:
    """``with folder.lock:`` as on files, each entry a new hold of the volume's lock."""

    def __init__(self, volume: PostgresVolume, path: Path, now: Clock) -> None:
        self._volume, self._path, self._now = volume, path, now
        self._held: list[AbstractContextManager[None]] = []

    def __enter__(self) -> None:
        held = self._volume.locked(self._path, wait_s=WAIT_S, what="wiki store", now=self._now)
        held.__enter__()
        self._held.append(held)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._held.pop().__exit__(exc_type, exc, tb)


class VolumeWikiFolder:
    def __init__(self, volume: PostgresVolume, directory: Path, *, now: Clock = utc_now) -> None:
        self.volume = volume
        self.root = volume.root
        self.directory = directory
        self.articles_dir = directory / "articles"
        self.versions_dir = directory / "versions"
        self.lock = _VolumeLock(volume, directory / ".lock", now)

    def article_path(self, slug: str) -> Path:
        return self.articles_dir / f"{check_slug(slug)}{ARTICLE_SUFFIX}"

    def version_path(self, slug: str, version: int) -> Path:
        return self.versions_dir / check_slug(slug) / f"{version}{ARTICLE_SUFFIX}"

    def folder_stamp(self) -> Stamp | None:
        stamp = self.volume.stamp(self.articles_dir)
        return None if stamp is None else (0, stamp[0], stamp[1])

    def scan(self) -> dict[str, Stamp]:
        return {
            name[: -len(ARTICLE_SUFFIX)]: (0, size, revision)
            for name, (revision, size) in self.volume.revisions(self.articles_dir).items()
            if is_article_name(name)
        }

    def read_articles(self, slugs: Sequence[str]) -> dict[str, str | UnreadableFile]:
        wanted = {f"{check_slug(slug)}{ARTICLE_SUFFIX}": slug for slug in slugs}
        prefix = self.volume.key(self.articles_dir) + "/"
        texts: dict[str, str | UnreadableFile] = {}
        for key, text, _ in self.volume.texts(self.articles_dir):
            slug = wanted.get(key.removeprefix(prefix))
            if slug is not None:
                texts[slug] = text.replace("\r\n", "\n").replace("\r", "\n")
        return texts

    def read_article(self, slug: str) -> str | None:
        return self.volume.read(self.article_path(slug))

    def write_article(self, slug: str, text: str) -> None:
        self.volume.write(self.article_path(slug), text)

    def read_version(self, slug: str, version: int) -> str | None:
        return self.volume.read(self.version_path(slug, version))

    def keep_version(self, slug: str, version: int, text: str) -> Path:
        path = self.version_path(slug, version)
        for copy in range(2, 1000):
            existing = self.volume.read(path)
            if existing is None or existing == text:
                self.volume.write(path, text)
                return path
            path = path.with_name(f"{version}-{copy}{ARTICLE_SUFFIX}")
        raise StoreError(f"versions/{slug}/ has too many copies of version {version}")

    def count_versions(self) -> int:
        prefix = self.volume.key(self.versions_dir) + "/"
        total = 0
        for document in self.volume.documents(self.versions_dir):
            parts = self.volume.key(document).removeprefix(prefix).split("/")
            if (
                len(parts) == 2
                and SLUG_RE.fullmatch(parts[0])
                and parts[1].endswith(ARTICLE_SUFFIX)
            ):
                total += 1
        return total

    def sweep_temps(self) -> list[str]:
        return []  # a database volume has no temporary files


# Either folder, as the store and its snapshot use them.
AnyWikiFolder = WikiFolder | VolumeWikiFolder
