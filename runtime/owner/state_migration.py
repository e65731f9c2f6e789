"""The state half of ``codegen memory migrate``: the human-readable documents (continuity,
its trash, the wiki, dream state, the session summaries ``memory.sessionRecall`` recalls,
``retention.json``) moved between the file layout and PostgreSQL (``state_documents``), as they
are.

A spec's documents on files are everything below ``state/<spec>/``, ``wiki/<spec>/``,
``sessions-index/<spec>/`` and ``trash/<ts>/state/<spec>/``, and ``retention.json``; hidden
files (locks, a killed writer's temporaries) are not documents. In the database they are the
rows of the tenant's spec. Each is copied with its exact text under the same relative path
when the target lacks it; one the target holds already is left alone (a second run copies
nothing). Verification compares the sha256 of both sides' sorted ``(path, text)`` pairs.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.fs.fenced import write_atomic

if TYPE_CHECKING:
    from specwire.runtime.pg.volume import PostgresVolume

RETENTION = "retention.json"


def is_spec_document(key: str, spec: str) -> bool:
    """Whether the relative path ``key`` is one of ``spec``'s state documents."""
    name = storage_name(spec)
    parts = key.split("/")
    if any(part.startswith(".") for part in parts):
        return False
    if key == RETENTION:
        return True
    if parts[0] in ("state", "wiki", "sessions-index") and len(parts) > 2 and parts[1] == name:
        return True
    return len(parts) > 4 and parts[0] == "trash" and parts[2] == "state" and parts[3] == name


class FileSide:
    """A spec's documents under a store root (``.specwire`` or a tenant's root)."""

    def __init__(self, root: Path, spec: str) -> None:
        self.root, self.spec = root, spec

    def texts(self) -> dict[str, str]:
        found: dict[str, str] = {}
        if not self.root.is_dir():
            return found
        for current, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not (Path(current) / d).is_symlink())
            for name in files:
                path = Path(current) / name
                key = path.relative_to(self.root).as_posix()
                if path.is_symlink() or not is_spec_document(key, self.spec):
                    continue
                try:
                    found[key] = path.read_bytes().decode("utf-8")
                except UnicodeDecodeError:
                    raise StoreError(f"{key} is not UTF-8 text; nothing was copied") from None
        return found

    def add(self, key: str, text: str) -> None:
        write_atomic(self.root / key, text, root=self.root)


class DatabaseSide:
    def __init__(self, volume: PostgresVolume, spec: str) -> None:
        self.volume, self.spec = volume, spec

    def texts(self) -> dict[str, str]:
        return {
            key: text
            for key, text, _ in self.volume.texts(self.volume.root)
            if is_spec_document(key, self.spec)
        }

    def add(self, key: str, text: str) -> None:
        self.volume.write_many([(key, text)])


Side = FileSide | DatabaseSide


@dataclass(frozen=True)
class StateCopy:
    copied: int
    present: int
    # Documents both sides hold with other texts (never overwritten).
    differing: tuple[str, ...]
    source_sha256: str
    target_sha256: str

    @property
    def verified(self) -> bool:
        return self.source_sha256 == self.target_sha256


def state_digest(texts: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for key in sorted(texts):
        digest.update(key.encode("utf-8") + b"\0" + texts[key].encode("utf-8") + b"\0")
    return digest.hexdigest()


def pending(source: Side, target: Side) -> tuple[dict[str, str], dict[str, str]]:
    """(the source's documents the target lacks, the target's documents)."""
    present = target.texts()
    todo = {key: text for key, text in source.texts().items() if key not in present}
    return todo, present


def copy_state(source: Side, target: Side, todo: dict[str, str], present: int) -> StateCopy:
    if isinstance(target, DatabaseSide):
        target.volume.write_many(sorted(todo.items()))
    else:
        for key, text in sorted(todo.items()):
            target.add(key, text)
    before, after = source.texts(), target.texts()
    differing = tuple(sorted(k for k in before if k in after and after[k] != before[k]))
    return StateCopy(len(todo), present, differing, state_digest(before), state_digest(after))
