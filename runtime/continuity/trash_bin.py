"""``TrashBin``: clearing a state folder's files into the trash and restoring them.

Snapshots and moves are ``runtime.continuity.trash``; nothing is ever deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from specwire.runtime.continuity.plans import PLAN_FILE_RE
from specwire.runtime.continuity.state_folder import (
    FOCUS_FILE,
    GOALS_FILE,
    HANDOFF_FILE,
    PLANS_DIR,
    StateFolder,
)
from specwire.runtime.continuity.trash import (
    Snapshot,
    list_snapshots,
    move_to_snapshot,
    new_snapshot,
    purge_part,
    restore_snapshot,
    snapshot_time,
)

ClearScope = Literal["focus", "plans", "goals", "all"]


@dataclass(frozen=True)
class ClearResult:
    """What a clear moved to the trash, and the snapshot it made."""

    scope: ClearScope
    moved: tuple[Path, ...]
    snapshot: Snapshot | None


class TrashBin:
    def __init__(self, folder: StateFolder, trash_dir: Path) -> None:
        self._folder = folder
        self.trash_dir = trash_dir

    def _scope_paths(self, scope: ClearScope) -> list[Path]:
        path = self._folder.path
        if scope == "focus":
            return [path(FOCUS_FILE)]
        if scope == "plans":
            return [path(PLANS_DIR)]
        if scope == "goals":
            return [path(GOALS_FILE)]
        return [path(FOCUS_FILE), path(PLANS_DIR), path(GOALS_FILE), path(HANDOFF_FILE)]

    def clear(self, scope: ClearScope) -> ClearResult:
        """Move the scope's files into a new trash snapshot (nothing is deleted)."""
        paths = self._scope_paths(scope)
        if not any(p.exists() for p in paths):
            return ClearResult(scope, (), None)
        root = self._folder.root
        with self._folder.mutation():
            present = [p for p in self._scope_paths(scope) if p.exists()]
            if not present:
                return ClearResult(scope, (), None)
            snapshot = new_snapshot(self.trash_dir, self._folder.now(), root=root)
            moved = move_to_snapshot(present, snapshot, root=root)
        return ClearResult(scope, tuple(moved), snapshot)

    def restore(self, ts: str) -> list[Path]:
        """Move a trash snapshot back; fail closed if any destination exists."""
        with self._folder.mutation():
            return restore_snapshot(self.trash_dir, ts, root=self._folder.root)

    def purge(self, before: datetime, state_dir: Path) -> list[str]:
        """Delete ``state_dir``'s files from every snapshot taken before ``before``."""
        root = self._folder.root
        relative = state_dir.resolve().relative_to(root.resolve())
        purged: list[str] = []
        with self._folder.mutation():
            for snapshot in self.snapshots():
                taken = snapshot_time(snapshot.ts)
                if (
                    taken is not None
                    and taken < before
                    and purge_part(snapshot, relative, root=root)
                ):
                    purged.append(snapshot.ts)
        return purged

    def snapshots(self) -> list[Snapshot]:
        return list_snapshots(self.trash_dir, root=self._folder.root)

    def plan_ids(self) -> list[str]:
        """Ids of plans sitting in the trash: a new plan never takes one, so restoring the
        trash never collides with a plan created since."""
        relative = self._folder.path(PLANS_DIR).relative_to(self._folder.root)
        ids: list[str] = []
        for snapshot in self.snapshots():
            directory = snapshot.path / relative
            if directory.is_dir():
                for entry in directory.iterdir():
                    match = PLAN_FILE_RE.match(entry.name)
                    if match is not None:
                        ids.append(match.group(1))
        return ids
