"""The lexical index saved beside the database, so a large store opens without re-reading it.

Rebuilding the index reads and tokenizes every row (seconds at a million facts); loading a
snapshot maps the file and builds the vocabulary dictionary (tens of milliseconds). The file,
``<database>.lexical``, is derived data: it is written atomically (a temporary beside it, fsync,
rename; mode 0600), only ever trusted after checks, and any problem means "rebuild from SQLite".

Layout: ``MAGIC``, an 8-byte little-endian header length, a JSON header, then 64-byte aligned
raw arrays. The header names the database position the index reflects: the last fact seq and
tombstone seq it read, with that fact's id and that tombstone's target, which the loader checks
against the database (a different or rolled-back database does not match; one that moved on is
caught up incrementally from there). Checksums: CRC-32 of every small array (the vocabulary, the
per-fact arrays, offsets) is checked at load; the postings (most of the bytes) carry one CRC-32
per term, checked the first time a query uses that term (``LexicalIndex.postings``), so a flipped
byte anywhere is detected before it could change an answer, without reading 100 MB at open.
"""

from __future__ import annotations

import json
import mmap
import os
import secrets
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from specwire.runtime.facts.lexical.index import IndexArrays, LexicalIndex
from specwire.runtime.facts.lexical.vocab import FrozenVocab

MAGIC = b"specwire-lexical\x00\x01"
# 2: the per-fact group ids (scope keys and tiers) and their labels.
FORMAT = 2
_ALIGN = 64
_SMALL = (
    "indptr",
    "df",
    "doc_len",
    "expires",
    "proven",
    "indexed",
    "group",
    "posting_crcs",
    "vocab_starts",
    "vocab_order",
)
_DTYPES = {
    "indptr": np.int64,
    "docs": np.int32,
    "tfs": np.uint16,
    "df": np.int64,
    "doc_len": np.int32,
    "expires": np.int64,
    "proven": np.bool_,
    "indexed": np.bool_,
    "group": np.int32,
    "posting_crcs": np.uint32,
    "vocab_starts": np.int64,
    "vocab_order": np.int32,
}


class SnapshotError(Exception):
    """The snapshot cannot be trusted (damaged, foreign, or of another format)."""


@dataclass(frozen=True)
class Position:
    """Where in the database the index stands."""

    schema_version: int
    last_fact: int
    last_fact_id: str | None
    last_tombstone: int
    last_tombstone_target: str | None


def snapshot_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".lexical")


def save(path: Path, index: LexicalIndex, position: Position) -> None:
    arrays = index.arrays()
    vocab, vocab_starts, vocab_order = FrozenVocab.of(list(_terms(arrays.vocab))).parts()
    sections: dict[str, npt.NDArray[Any]] = {
        "indptr": arrays.indptr,
        "docs": arrays.docs,
        "tfs": arrays.tfs,
        "df": arrays.df,
        "doc_len": arrays.doc_len,
        "expires": arrays.expires,
        "proven": arrays.proven,
        "indexed": arrays.indexed,
        "group": _groups_of(arrays),
        "posting_crcs": posting_crcs(arrays.indptr, arrays.docs, arrays.tfs),
        "vocab_starts": vocab_starts,
        "vocab_order": vocab_order,
    }
    layout: dict[str, list[Any]] = {}
    offset = 0
    for name, array in sections.items():
        crc = zlib.crc32(array.data) if name in _SMALL else None
        layout[name] = [offset, int(len(array)), crc]
        offset = _aligned(offset + array.nbytes)
    header = {
        "format": FORMAT,
        "position": position.__dict__,
        "n_indexed": arrays.n_indexed,
        "total_tokens": arrays.total_tokens,
        "n_terms": len(vocab_order),
        "group_names": [""] if arrays.group_names is None else arrays.group_names,
        "vocab": [offset, len(vocab), zlib.crc32(vocab)],
        "sections": layout,
    }
    head = json.dumps(header).encode("utf-8")
    start = _aligned(len(MAGIC) + 8 + len(head))
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(head)) + head)
            out.write(b"\0" * (start - out.tell()))
            for name, array in sections.items():
                out.write(b"\0" * (start + layout[name][0] - out.tell()))
                out.write(np.ascontiguousarray(array).data)
            out.write(b"\0" * (start + offset - out.tell()))
            out.write(vocab)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def load(path: Path) -> tuple[LexicalIndex, Position]:
    """The index in the file and the position it reflects; ``SnapshotError`` when it cannot be
    trusted, ``FileNotFoundError`` when there is none."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < len(MAGIC) + 8:
            raise SnapshotError("truncated")
        # A private copy-on-write mapping: the index updates its per-fact arrays in place, and
        # those writes must never reach the file.
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    try:
        return _parse(data)
    except SnapshotError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"malformed: {exc}") from exc


def posting_crcs(
    indptr: npt.NDArray[np.int64], docs: npt.NDArray[np.int32], tfs: npt.NDArray[np.uint16]
) -> npt.NDArray[np.uint32]:
    bounds = indptr.tolist()
    doc_bytes, tf_bytes = docs.data.cast("B"), tfs.data.cast("B")
    crcs = [
        zlib.crc32(tf_bytes[2 * lo : 2 * hi], zlib.crc32(doc_bytes[4 * lo : 4 * hi]))
        for lo, hi in zip(bounds, bounds[1:], strict=False)
    ]
    return np.asarray(crcs, dtype=np.uint32)


def _parse(data: mmap.mmap) -> tuple[LexicalIndex, Position]:
    if data[: len(MAGIC)] != MAGIC:
        raise SnapshotError("not a lexical index snapshot")
    (head_len,) = struct.unpack_from("<Q", data, len(MAGIC))
    head_end = len(MAGIC) + 8 + head_len
    if head_end > len(data):
        raise SnapshotError("truncated header")
    header = json.loads(data[len(MAGIC) + 8 : head_end].decode("utf-8"))
    if header.get("format") != FORMAT:
        raise SnapshotError(f"format {header.get('format')!r}, expected {FORMAT}")
    start = _aligned(head_end)
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, dtype in _DTYPES.items():
        offset, count, crc = header["sections"][name]
        itemsize = np.dtype(dtype).itemsize
        if offset < 0 or count < 0 or start + offset + count * itemsize > len(data):
            raise SnapshotError(f"section {name} out of bounds")
        array: npt.NDArray[Any] = np.frombuffer(
            data, dtype=dtype, count=count, offset=start + offset
        )
        if crc is not None and zlib.crc32(array.data) != crc:
            raise SnapshotError(f"section {name} fails its checksum")
        arrays[name] = array
    v_offset, v_len, v_crc = header["vocab"]
    if start + v_offset + v_len > len(data):
        raise SnapshotError("vocabulary out of bounds")
    raw_vocab = data[start + v_offset : start + v_offset + v_len]
    if zlib.crc32(raw_vocab) != v_crc:
        raise SnapshotError("vocabulary fails its checksum")
    _check_shapes(arrays, len(raw_vocab), header)
    vocab = FrozenVocab(raw_vocab, arrays["vocab_starts"], arrays["vocab_order"])
    index = LexicalIndex(
        IndexArrays(
            vocab=vocab,
            indptr=arrays["indptr"],
            docs=arrays["docs"],
            tfs=arrays["tfs"],
            df=arrays["df"].copy(),
            doc_len=arrays["doc_len"],
            expires=arrays["expires"],
            proven=arrays["proven"],
            indexed=arrays["indexed"],
            n_indexed=int(header["n_indexed"]),
            total_tokens=int(header["total_tokens"]),
            group=arrays["group"],
            group_names=[str(name) for name in header["group_names"]],
        ),
        posting_crcs=arrays["posting_crcs"],
    )
    return index, Position(**header["position"])


def _check_shapes(
    arrays: dict[str, npt.NDArray[Any]], vocab_bytes: int, header: dict[str, Any]
) -> None:
    n_terms = int(header["n_terms"])
    starts, order = arrays["vocab_starts"], arrays["vocab_order"]
    if len(starts) != n_terms + 1 or len(order) != n_terms or starts[0] != 0:
        raise SnapshotError("vocabulary offsets disagree")
    if n_terms and (starts[-1] != vocab_bytes + 1 or bool(np.any(np.diff(starts) < 1))):
        raise SnapshotError("vocabulary offsets disagree")
    if n_terms and bool(np.any(np.bincount(order, minlength=n_terms) != 1)):
        raise SnapshotError("vocabulary order is not a permutation")
    indptr = arrays["indptr"]
    n_docs = len(arrays["doc_len"])
    if len(arrays["df"]) != n_terms:
        raise SnapshotError("vocabulary and term arrays disagree")
    if len(arrays["posting_crcs"]) != n_terms or len(indptr) != n_terms + 1:
        raise SnapshotError("term offsets disagree")
    n_postings = len(arrays["docs"])
    if indptr[0] != 0 or indptr[-1] != n_postings or len(arrays["tfs"]) != n_postings:
        raise SnapshotError("postings and offsets disagree")
    if n_terms and bool(np.any(np.diff(indptr) < 0)):
        raise SnapshotError("term offsets are not ordered")
    if any(len(arrays[name]) != n_docs for name in ("expires", "proven", "indexed", "group")):
        raise SnapshotError("per-fact arrays disagree")
    group = arrays["group"]
    names = header["group_names"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise SnapshotError("group labels are malformed")
    if n_docs and (int(group.min()) < 0 or int(group.max()) >= len(names)):
        raise SnapshotError("group ids out of range")
    if int(np.count_nonzero(arrays["indexed"])) != header["n_indexed"]:
        raise SnapshotError("indexed count disagrees")


def _groups_of(arrays: IndexArrays) -> npt.NDArray[np.int32]:
    if arrays.group is None:
        return np.zeros(len(arrays.doc_len), dtype=np.int32)
    return arrays.group


def _terms(vocab: list[str] | FrozenVocab) -> list[str]:
    return vocab.terms() if isinstance(vocab, FrozenVocab) else vocab


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN
