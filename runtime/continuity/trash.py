"""Trash instead of deletes: cleared files move to ``<root>/trash/<ts>/`` and can come back.

A snapshot keeps each file's path relative to the store root (``trash/<ts>/state/<spec>/focus.md``),
so restoring is moving them back. ``<ts>`` is ``YYYY-MM-DDTHH-MM-SS`` in UTC from the injected
clock, with ``-N`` appended when that second is taken. Restore is fail-closed: if any destination
exists, nothing moves.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.patterns import LazyPattern
from specwire.runtime.core.tenancy import assert_inside

SNAPSHOT_RE = LazyPattern(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:-\d+)?$")


@lazy_dataclass(frozen=True)
class Snapshot:
    """One snapshot of cleared state in the trash."""

    ts: str
    path: Path


def snapshot_name(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H-%M-%S")


def new_snapshot(trash_dir: Path, moment: datetime, *, root: Path) -> Snapshot:
    """Create a fresh, empty snapshot directory (``-1``, ``-2``… when the second is taken)."""
    base = snapshot_name(moment)
    trash = assert_inside(trash_dir, root)
    trash.mkdir(parents=True, exist_ok=True, mode=0o700)
    suffix = 0
    while True:
        ts = base if suffix == 0 else f"{base}-{suffix}"
        path = assert_inside(trash / ts, root)
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            suffix += 1
            continue
        return Snapshot(ts, path)


def move_to_snapshot(paths: Sequence[Path], snapshot: Snapshot, *, root: Path) -> list[Path]:
    """Move each existing path (file or directory) into the snapshot; return what moved."""
    root_resolved = root.resolve()
    moved: list[Path] = []
    for path in paths:
        source = assert_inside(path, root)
        if not source.exists():
            continue
        destination = assert_inside(snapshot.path / source.relative_to(root_resolved), root)
        destination.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.rename(source, destination)
        moved.append(destination)
    return moved


def _snapshot_path(trash_dir: Path, ts: str, root: Path) -> Path:
    if not SNAPSHOT_RE.match(ts):
        raise StoreError(f"not a trash snapshot name: {ts!r} (expected YYYY-MM-DDTHH-MM-SS[-N])")
    path = assert_inside(trash_dir / ts, root)
    if not path.is_dir():
        raise StoreError(f"no trash snapshot {ts} in {trash_dir}")
    return path


def _files(directory: Path) -> list[Path]:
    found: list[Path] = []
    for current, dirs, files in os.walk(directory):
        dirs.sort()
        found += [Path(current) / name for name in sorted(files)]
        # A symlinked directory is moved as a link, never followed.
        found += [Path(current) / d for d in dirs if (Path(current) / d).is_symlink()]
    return found


def file_count(paths: Sequence[Path]) -> int:
    """How many files ``paths`` hold (a directory counts its files, as a restore moves them),
    so clearing and restoring the same snapshot report the same number."""
    return sum(
        len(_files(path)) if path.is_dir() and not path.is_symlink() else 1 for path in paths
    )


def restore_snapshot(trash_dir: Path, ts: str, *, root: Path) -> list[Path]:
    """Move a snapshot's files back; refuse (moving nothing) if any destination exists."""
    snapshot = _snapshot_path(trash_dir, ts, root)
    root_resolved = root.resolve()
    pairs: list[tuple[Path, Path]] = []
    for item in _files(snapshot):
        relative = item.relative_to(snapshot)
        pairs.append((item, assert_inside(root_resolved / relative, root)))
    clashes = [dest for _, dest in pairs if dest.exists() or dest.is_symlink()]
    if clashes:
        listed = ", ".join(str(c.relative_to(root_resolved)) for c in clashes)
        raise StoreError(
            f"refusing to restore {ts}: these files exist again and would be overwritten: "
            f"{listed} — move them away first; nothing was restored"
        )
    restored: list[Path] = []
    for source, destination in pairs:
        destination.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.rename(source, destination)
        restored.append(destination)
    _remove_empty_tree(snapshot)
    return restored


def _remove_empty_tree(directory: Path) -> None:
    for current, dirs, _ in os.walk(directory, topdown=False):
        for name in dirs:
            os.rmdir(Path(current) / name)
    os.rmdir(directory)


def snapshot_time(ts: str) -> datetime | None:
    """When a snapshot was taken, from its name; None for a name that is not a stamp."""
    if not SNAPSHOT_RE.match(ts):
        return None
    try:
        return datetime.strptime(ts[:19], "%Y-%m-%dT%H-%M-%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def purge_part(snapshot: Snapshot, relative: Path, *, root: Path) -> bool:
    """Delete ``relative`` (a path relative to the root) from the snapshot for good, then the
    snapshot's folders left empty; True when something was deleted. Only the trash's retention
    deletes (the dream engine's purge): everything else moves files, never deletes them."""
    target = snapshot.path / relative
    if not (target.exists() or target.is_symlink()):
        return False
    assert_inside(target, root)  # fails closed on a link out of the root
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)  # never follows the links inside
    else:
        target.unlink()
    for folder in [*target.parents]:
        if folder == snapshot.path.parent:
            break
        try:
            folder.rmdir()
        except OSError:  # not empty: another spec's files are still in this snapshot
            break
    return True


def list_snapshots(trash_dir: Path, *, root: Path) -> list[Snapshot]:
    trash = assert_inside(trash_dir, root)
    if not trash.is_dir():
        return []
    return [
        Snapshot(entry.name, entry)
        for entry in sorted(trash.iterdir(), key=lambda p: p.name)
        if entry.is_dir() and SNAPSHOT_RE.match(entry.name)
    ]
