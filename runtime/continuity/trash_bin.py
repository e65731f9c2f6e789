"""``TrashBin``: clearing a state folder's files into the trash and restoring them.

Snapshots and moves are ``runtime.continuity.trash`` on files; in a database volume the same
layout is kept as document paths (``trash/<ts>/state/<spec>/…``), moved document by document
under the store lock and the trash's own (``trash/.lock``: scopes clearing in the same second
never share a snapshot). Nothing is ever deleted but by ``purge``.
"""

from __future__ import annotations

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
    SNAPSHOT_RE,
    Snapshot,
    list_snapshots,
    move_to_snapshot,
    new_snapshot,
    purge_part,
    restore_snapshot,
    snapshot_name,
    snapshot_time,
)
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass

ClearScope = Literal["focus", "plans", "goals", "all"]


@lazy_dataclass(frozen=True)
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
        exists = self._folder.exists
        if not any(exists(p) for p in paths):
            return ClearResult(scope, (), None)
        root = self._folder.root
        with self._folder.mutation():
            present = [p for p in self._scope_paths(scope) if exists(p)]
            if not present:
                return ClearResult(scope, (), None)
            if not self._folder.volume.on_files:
                return self._clear_documents(scope, present)
            snapshot = new_snapshot(self.trash_dir, self._folder.now(), root=root)
            moved = move_to_snapshot(present, snapshot, root=root)
        return ClearResult(scope, tuple(moved), snapshot)

    def _clear_documents(self, scope: ClearScope, present: list[Path]) -> ClearResult:
        volume = self._folder.volume
        with volume.locked(self.trash_dir / ".lock", wait_s=self._folder.lock_wait_s, what="trash"):
            taken = set(volume.names(self.trash_dir))
            base = snapshot_name(self._folder.now())
            ts = next(
                name
                for name in (base if n == 0 else f"{base}-{n}" for n in range(len(taken) + 1))
                if name not in taken
            )
            snapshot = Snapshot(ts, self.trash_dir / ts)
            moved: list[Path] = []
            for path in present:
                for document in volume.documents(path) or [path]:
                    destination = snapshot.path / volume.key(document)
                    volume.move(document, destination)
                    moved.append(destination)
        return ClearResult(scope, tuple(moved), snapshot)

    def restore(self, ts: str) -> list[Path]:
        """Move a trash snapshot back; fail closed if any destination exists."""
        with self._folder.mutation():
            if not self._folder.volume.on_files:
                return self._restore_documents(ts)
            return restore_snapshot(self.trash_dir, ts, root=self._folder.root)

    def _restore_documents(self, ts: str) -> list[Path]:
        volume = self._folder.volume
        if not SNAPSHOT_RE.match(ts):
            raise StoreError(
                f"not a trash snapshot name: {ts!r} (expected YYYY-MM-DDTHH-MM-SS[-N])"
            )
        snapshot = self.trash_dir / ts
        documents = volume.documents(snapshot)
        if not documents:
            raise StoreError(f"no trash snapshot {ts} in {self.trash_dir}")
        prefix = volume.key(snapshot) + "/"
        pairs = [(d, volume.root / volume.key(d).removeprefix(prefix)) for d in documents]
        clashes = [volume.key(dest) for _, dest in pairs if volume.exists(dest)]
        if clashes:
            raise StoreError(
                f"refusing to restore {ts}: these files exist again and would be overwritten: "
                f"{', '.join(clashes)} — move them away first; nothing was restored"
            )
        for source, destination in pairs:
            volume.move(source, destination)
        return [destination for _, destination in pairs]

    def purge(self, before: datetime, state_dir: Path) -> list[str]:
        """Delete ``state_dir``'s files from every snapshot taken before ``before``."""
        root = self._folder.root
        relative = state_dir.resolve().relative_to(root.resolve())
        purged: list[str] = []
        with self._folder.mutation():
            for snapshot in self.snapshots():
                taken = snapshot_time(snapshot.ts)
                if taken is not None and taken < before and self._purge_part(snapshot, relative):
                    purged.append(snapshot.ts)
        return purged

    def _purge_part(self, snapshot: Snapshot, relative: Path) -> bool:
        if self._folder.volume.on_files:
            return purge_part(snapshot, relative, root=self._folder.root)
        return self._folder.volume.remove(snapshot.path / relative)

    def snapshots(self) -> list[Snapshot]:
        volume = self._folder.volume
        if volume.on_files:
            return list_snapshots(self.trash_dir, root=self._folder.root)
        return [
            Snapshot(name, self.trash_dir / name)
            for name in volume.names(self.trash_dir)
            if SNAPSHOT_RE.match(name)
        ]

    def plan_ids(self) -> list[str]:
        """Ids of plans sitting in the trash: a new plan never takes one, so restoring the
        trash never collides with a plan created since."""
        relative = self._folder.path(PLANS_DIR).relative_to(self._folder.root)
        ids: list[str] = []
        for snapshot in self.snapshots():
            for name in self._folder.names(snapshot.path / relative):
                match = PLAN_FILE_RE.match(name)
                if match is not None:
                    ids.append(match.group(1))
        return ids
