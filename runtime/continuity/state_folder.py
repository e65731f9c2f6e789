"""``StateFolder``: one scope's continuity folder — its layout, its fenced file I/O and its lock.

The folder is ``<root>/state/<spec>/``, or ``<root>/state/<spec>/sessions/<scope>/`` with
session scope::

    focus.md                      focus note, active-plan mirror, requirements ledger
    plans/plan-NNNN-<slug>.md     one plan per file
    plans/ACTIVE                  the active plan's id (the authority)
    goals.yaml                    goals (YAML; written as JSON)
    handoff.md                    the note the last session left
    .lock                         held by mutations only

Every path is fenced with ``assert_inside(path, root)`` on every I/O and then opened component by
component with ``O_NOFOLLOW`` (``runtime.fs.fenced``): no symlink is followed inside the
state folder, and a FIFO, device or socket where a file belongs is refused at once, naming it,
instead of hanging the agent. Writes are tmp+rename with mode 0600; reads never lock; every
mutation re-reads its state under the lock (``runtime.fs.locking``: an ``flock`` the OS releases
when
its holder dies, so a killed writer never blocks the next one). ``sweep_stale_temps`` removes the
temporaries a killed writer left (under the lock, only when it is free). Nothing is created on
disk until the first write.

That is the file volume (``runtime.fs.volume.FileVolume``, the default). With
``memory.state: postgres`` the folder's documents live in a ``PostgresVolume``
(``runtime.pg.volume``): the same paths as keys, the same texts, the lock an advisory lock held
by the mutation's transaction; nothing is written on disk.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from specwire.runtime.continuity.plans import ACTIVE_FILE, PLAN_FILE_RE
from specwire.runtime.continuity.retention import LOCK_NAME as RETENTION_LOCK_NAME
from specwire.runtime.continuity.retention import retention_temp
from specwire.runtime.core.clock import Clock, iso
from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.tenancy import assert_inside
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.fs.fenced import sweep_stale_temps
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.fs.volume import FileVolume

FOCUS_FILE = "focus.md"
PLANS_DIR = "plans"
GOALS_FILE = "goals.yaml"
HANDOFF_FILE = "handoff.md"
LOCK_FILE = ".lock"


def _is_state_file(name: str) -> bool:
    return name in (FOCUS_FILE, GOALS_FILE, HANDOFF_FILE)


def _is_plan_file(name: str) -> bool:
    return name == ACTIVE_FILE or PLAN_FILE_RE.match(name) is not None


class StateFolder:
    """Fenced paths, reads and atomic writes below ``root``, and the re-entrant store lock."""

    def __init__(
        self,
        root: Path,
        scope_dir: Path,
        *,
        now: Clock,
        log: Callable[[str], None],
        lock_wait_s: float,
        volume: DocumentVolume | None = None,
    ) -> None:
        self.root = root
        self.volume: DocumentVolume = volume if volume is not None else FileVolume(root)
        self.scope_dir = assert_inside(scope_dir, root)
        self.lock_wait_s = lock_wait_s
        self.clock = now
        self.log = log
        self._held = threading.local()

    def path(self, *parts: str) -> Path:
        """The path as spelled (checked to resolve inside the root): the I/O below opens it
        component by component and never follows a link, so it is not resolved here."""
        path = self.scope_dir.joinpath(*parts)
        assert_inside(path, self.root)
        return path

    def read(self, path: Path) -> str | None:
        """The file's text; None when it does not exist."""
        return self.volume.read(path)

    def write(self, path: Path, text: str) -> None:
        self.volume.write(path, text)

    def names(self, directory: Path) -> list[str]:
        """The names in ``directory``, sorted ([] when it does not exist)."""
        return self.volume.names(directory)

    def exists(self, path: Path) -> bool:
        return self.volume.exists(path)

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, as shown in messages."""
        try:
            return str(path.relative_to(self.root.resolve()))
        except ValueError:
            return str(path)

    def now(self) -> datetime:
        return self.clock()

    def stamp(self) -> str:
        return iso(self.clock())

    def lock(self, *, wait_s: float) -> FileLock:
        return FileLock(self.path(LOCK_FILE), wait_s=wait_s, now=self.clock)

    @contextlib.contextmanager
    def mutation(self) -> Iterator[None]:
        """Hold the store lock (re-entrant within one thread)."""
        depth: int = getattr(self._held, "depth", 0)
        if depth:
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth
            return
        with self.volume.locked(
            self.path(LOCK_FILE), wait_s=self.lock_wait_s, what="continuity store", now=self.clock
        ):
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0

    def sweep_stale_temps(self) -> None:
        """Remove what writers killed mid-write left behind (see ``sweep_stale_temps``). Never
        fails: a folder that cannot be checked is reported by the I/O that needs it. A
        database volume has no temporaries."""
        if not self.volume.on_files:
            return
        removed: list[str] = []
        try:
            removed += sweep_stale_temps(
                # The sweep fences each folder itself.
                [(self.scope_dir, _is_state_file), (self.scope_dir / PLANS_DIR, _is_plan_file)],
                root=self.root,
                lock=self.lock(wait_s=0),
            )
            removed += sweep_stale_temps(
                [(self.root, retention_temp)],
                root=self.root,
                lock=FileLock(self.root / RETENTION_LOCK_NAME, wait_s=0, now=self.clock),
            )
        except (OSError, StoreError, MemoryServiceError) as exc:
            self.log(f"[memory] could not check for leftover temporary files: {exc}\n")
        if removed:
            self.log(
                f"[memory] removed {len(removed)} temporary file(s) an interrupted write left: "
                f"{', '.join(removed)}\n"
            )
