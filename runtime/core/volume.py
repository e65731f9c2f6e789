"""``DocumentVolume``: where the human-readable state documents live (continuity, the wiki,
dream state), addressed by paths below a store root.

Two implementations: ``runtime.fs.volume.FileVolume`` (today's files under ``.specwire/``,
fenced and atomic) and ``runtime.pg.volume.PostgresVolume`` (one row per document in the
``state_documents`` table, keyed by tenant, spec and the path relative to the root, so the
database holds exactly the bytes the file layout would and exports to it). Tiers build their
paths as they always did (``StoreLayout``) and hand them to the volume; a PostgreSQL volume
never touches the disk.

Folders exist implicitly: a folder is there while a document below it is. A mutation that
reads, decides and writes holds ``locked`` (an ``flock`` on files; a transaction-scoped
advisory lock on PostgreSQL, whose reads and writes inside it run in that one transaction).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, runtime_checkable

from specwire.runtime.core.clock import Clock


@runtime_checkable
class DocumentVolume(Protocol):
    """Documents (UTF-8 text) at paths below ``root``."""

    root: Path
    # True for the file implementation: code keeping behaviour only files have (temporary
    # files to sweep, renames of whole folders) asks this.
    on_files: bool

    @property
    def where(self) -> str:
        """What the wiring log says about the volume (never a DSN)."""
        ...

    def key(self, path: Path) -> str:
        """``path`` relative to the root, slash-separated ("" for the root itself)."""
        ...

    def read(self, path: Path) -> str | None:
        """The document's text; None when there is none."""
        ...

    def write(self, path: Path, text: str) -> None:
        """Create or replace the document, atomically."""
        ...

    def names(self, directory: Path) -> list[str]:
        """The names directly in ``directory`` (documents and folders), sorted; [] when none."""
        ...

    def is_dir(self, path: Path) -> bool: ...

    def exists(self, path: Path) -> bool:
        """A document or a folder at ``path``."""
        ...

    def documents(self, directory: Path) -> list[Path]:
        """Every document below ``directory`` (recursively), sorted by path."""
        ...

    def move(self, source: Path, destination: Path) -> None:
        """Rename a document, or a folder with everything below it."""
        ...

    def remove(self, path: Path) -> bool:
        """Delete a document, or a folder with everything below it; True when one was there."""
        ...

    def locked(
        self, lock: Path, *, wait_s: float, what: str, now: Clock | None = None
    ) -> AbstractContextManager[None]:
        """Hold the exclusive lock named by ``lock`` (a ``.lock`` path) for a mutation."""
        ...
