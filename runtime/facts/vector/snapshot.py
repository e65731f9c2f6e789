"""The cosine index saved beside the database, so a large store opens without re-reading it.

Rebuilding the index reads every ``fact_vectors`` row and recomputes every sign sketch (tens of
seconds at a million facts); loading the snapshot maps the file (milliseconds), and its matrix
stays in the page cache, out of the process's private heap. One file, ``<database>.vectors``
(and, while it is written, a temporary ``<database>.vectors.<random>.tmp``); erasing a store
deletes ``<database>.vectors*``. It is derived data: written atomically (temporary, fsync,
rename; mode 0600), only trusted after checks, and any problem means "rebuild from SQLite".

Layout: ``MAGIC``, an 8-byte little-endian header length, a JSON header, then 64-byte aligned
raw arrays (``_DTYPES``). The header names the embedder and dimension, and the database position
the index reflects (``Position``), which the loader checks against the database. Checks: every
array but the matrix carries a checksum checked at load (a wrapping sum of its 64-bit words:
cheap, and it catches damage, not tampering); the matrix (most of the bytes) carries one
checksum per row (``row_sums``), checked the first time a query scores that row
(``vector_matrix``), and a sample of rows is compared with SQLite at load.
"""

from __future__ import annotations

import json
import os
import secrets
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MAGIC = b"specwire-vectors\x00\x01"
FORMAT = 1
_ALIGN = 64
_DTYPES: dict[str, type[np.generic]] = {
    "matrix": np.float32,  # (rows, dim), not summed at load: see ``row_sums``
    "sketches": np.uint64,  # (SKETCH_BITS / 64, rows), word-major
    # (dim, SKETCH_BITS): the projections the sketches were made with, so rows added later are
    # sketched with the very same floats (a library computing them a hair differently elsewhere
    # could otherwise flip a sign)
    "planes": np.float32,
    "row_sums": np.uint64,  # per row, ``vector_matrix.row_sums`` of its vector
    "seqs": np.int64,
    "alive": np.bool_,
    "expires": np.int64,
    "proven": np.bool_,
    "sorted_seqs": np.int64,  # seqs ascending, and the row of each: tombstones find rows
    "sorted_rows": np.int64,
}
_UNSUMMED = frozenset({"matrix"})


class SnapshotError(Exception):
    """The snapshot cannot be trusted (damaged, foreign, or of another format)."""


@dataclass(frozen=True)
class Position:
    """What the index holds and where in the database it stands."""

    schema_version: int
    embedder: str
    dim: int
    sketch: str  # ``sketch.IDENTITY``: sketches of another projection are not comparable
    rows: int
    vector_cursor: int  # the last ``fact_vectors.rowid`` read
    vector_fact_id: str | None  # the id of that row's fact
    tomb_cursor: int  # the last ``tombstones.seq`` read
    tomb_target: str | None
    checked_seq: int  # every fact up to here has a vector of this embedder or is dead


@dataclass(frozen=True)
class Snapshot:
    """A vector snapshot mapped from disk, and the store position it matches."""

    position: Position
    arrays: dict[str, npt.NDArray[Any]]  # read-only views of the mapped file


def snapshot_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".vectors")


def checksum(array: npt.NDArray[Any]) -> int:
    """A wrapping sum of the array's bytes read as little-endian 64-bit words (zero-padded)."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    whole = len(raw) // 8 * 8
    total = int(raw[:whole].view("<u8").sum(dtype=np.uint64))
    rest = bytes(raw[whole:]) + b"\0" * (8 - (len(raw) - whole)) if len(raw) > whole else b""
    if rest:
        total += int.from_bytes(rest, "little")
    return total & 0xFFFFFFFFFFFFFFFF


def save(path: Path, position: Position, sections: dict[str, list[npt.NDArray[Any]]]) -> None:
    """Write ``sections`` (each array given as parts, written one after the other) atomically."""
    layout: dict[str, list[Any]] = {}
    offset = 0
    for name in _DTYPES:
        parts = sections[name]
        nbytes = sum(part.nbytes for part in parts)
        count = sum(part.size for part in parts)
        total = None if name in _UNSUMMED else checksum(_joined(parts))
        layout[name] = [offset, count, total]
        offset = _aligned(offset + nbytes)
    header = {"format": FORMAT, "position": asdict(position), "sections": layout}
    head = json.dumps(header).encode("utf-8")
    start = _aligned(len(MAGIC) + 8 + len(head))
    # Named with the snapshot's prefix, so erasing ``<database>.vectors*`` takes a leftover too.
    temp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(head)) + head)
            for name in _DTYPES:
                out.write(b"\0" * (start + layout[name][0] - out.tell()))
                for part in sections[name]:
                    out.write(np.ascontiguousarray(part).data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def load(path: Path) -> Snapshot:
    """The mapped snapshot; ``SnapshotError`` when it cannot be trusted, ``FileNotFoundError``
    when there is none. The caller still checks the position against the database."""
    try:
        return _parse(np.memmap(path, dtype=np.uint8, mode="r"))
    except SnapshotError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"malformed: {exc}") from exc


def _parse(data: npt.NDArray[np.uint8]) -> Snapshot:
    if len(data) < len(MAGIC) + 8 or bytes(data[: len(MAGIC)]) != MAGIC:
        raise SnapshotError("not a vector index snapshot")
    (head_len,) = struct.unpack("<Q", bytes(data[len(MAGIC) : len(MAGIC) + 8]))
    head_end = len(MAGIC) + 8 + head_len
    if head_end > len(data):
        raise SnapshotError("truncated header")
    header = json.loads(bytes(data[len(MAGIC) + 8 : head_end]).decode("utf-8"))
    if header.get("format") != FORMAT:
        raise SnapshotError(f"format {header.get('format')!r}, expected {FORMAT}")
    position = Position(**header["position"])
    start = _aligned(head_end)
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, dtype in _DTYPES.items():
        offset, count, total = header["sections"][name]
        nbytes = int(count) * np.dtype(dtype).itemsize
        if offset < 0 or count < 0 or start + offset + nbytes > len(data):
            raise SnapshotError(f"section {name} out of bounds")
        # A plain ndarray view of the mapping (a memmap's per-slice overhead adds up per query).
        array = np.asarray(data[start + offset : start + offset + nbytes]).view(dtype)
        if total is not None and checksum(array) != total:
            raise SnapshotError(f"section {name} fails its checksum")
        arrays[name] = array
    _check_shapes(position, arrays)
    return Snapshot(position, arrays)


def _check_shapes(position: Position, arrays: dict[str, npt.NDArray[Any]]) -> None:
    rows, dim = position.rows, position.dim
    if rows < 0 or dim < 1 or arrays["matrix"].size != rows * dim:
        raise SnapshotError("matrix shape disagrees")
    arrays["matrix"] = arrays["matrix"].reshape(rows, dim)
    sketches = arrays["sketches"]
    if rows == 0 or sketches.size % rows:
        raise SnapshotError("sketch shape disagrees")
    arrays["sketches"] = sketches.reshape(sketches.size // rows, rows)
    bits = 64 * arrays["sketches"].shape[0]
    if arrays["planes"].size != dim * bits:
        raise SnapshotError("projections disagree")
    arrays["planes"] = arrays["planes"].reshape(dim, bits)
    per_row = ("row_sums", "seqs", "alive", "expires", "proven", "sorted_seqs", "sorted_rows")
    if any(len(arrays[name]) != rows for name in per_row):
        raise SnapshotError("per-row arrays disagree")
    # The contents are the writer's (checksums vouch for them), so only the shapes are checked
    # here: a pass over every row would cost most of what loading saves.


def _joined(parts: list[npt.NDArray[Any]]) -> npt.NDArray[np.uint8]:
    return np.concatenate([np.ascontiguousarray(p).reshape(-1).view(np.uint8) for p in parts])


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN
