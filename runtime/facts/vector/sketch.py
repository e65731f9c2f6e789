"""Sign sketches (SimHash) of fact vectors: a cheap first pass for cosine search on big stores.

A vector's sketch is the signs of ``SKETCH_BITS`` fixed random projections, packed into 64-bit
words. Two vectors' sketches differ in a share of bits close to their angle / pi, so the rows
with the fewest differing bits are the likely nearest ones. Scanning 32 bytes a row instead of
``4 * dim`` is what keeps a query under the memory bandwidth cost of a full float32 scan at a
million facts.

The projections are orthonormal (in blocks of ``dim`` when there are more bits than dimensions):
independent directions make the bits far less redundant than plain Gaussian ones. The pool the
Hamming distance selects is then ranked by ``agreement``, which weighs each bit by how far the
query projects along it (a bit the query barely leans on says little), before the exact rescore.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

SKETCH_BITS = 256
_WORDS = SKETCH_BITS // 64
_SEED = 20261201
# Saved sketches (``vector_snapshot``) are only comparable under the same projections.
IDENTITY = f"orthogonal-simhash-{SKETCH_BITS}-{_SEED}"
_BLOCK = 1 << 15
# Row v: the 8 bits of the byte value v, most significant first (``np.packbits``'s order).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float32)
_POSITION_BASE = 256 * np.arange(SKETCH_BITS // 8, dtype=np.uint16)


def projections(dim: int) -> npt.NDArray[np.float32]:
    """``(dim, SKETCH_BITS)`` projection directions, orthonormal within each block of ``dim``."""
    rng = np.random.default_rng(_SEED + dim)
    blocks: list[npt.NDArray[np.float64]] = []
    while sum(block.shape[1] for block in blocks) < SKETCH_BITS:
        gauss = rng.standard_normal((dim, min(dim, SKETCH_BITS)))
        blocks.append(np.linalg.qr(gauss)[0])
    planes: npt.NDArray[np.float32] = np.concatenate(blocks, axis=1)[:, :SKETCH_BITS].astype(
        np.float32
    )
    return planes


def agreement(
    rows: npt.NDArray[np.uint64], query_projection: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Per sketch row (``(rows, SKETCH_BITS / 64)``), the sum of the query's projections over the
    row's set bits: the larger, the more the row's signs agree with the query where it counts."""
    tables = (query_projection.reshape(-1, 8) @ _BYTE_BITS.T).ravel()  # position-major
    data = np.ascontiguousarray(rows).view(np.uint8).reshape(len(rows), -1)
    index = data + _POSITION_BASE[: data.shape[1]]
    scores: npt.NDArray[np.float32] = np.take(tables, index).sum(axis=1)
    return scores


def sketch(
    vectors: npt.NDArray[np.float32], planes: npt.NDArray[np.float32]
) -> npt.NDArray[np.uint64]:
    """``(rows, SKETCH_BITS / 64)`` packed sign bits of ``vectors @ planes``."""
    bits = np.packbits((vectors @ planes) > 0, axis=1)
    return np.ascontiguousarray(bits).view(np.uint64).reshape(len(vectors), _WORDS)


def differing_bits(
    columns: npt.NDArray[np.uint64], query: npt.NDArray[np.uint64]
) -> npt.NDArray[np.uint16]:
    """Hamming distance of each row's sketch to the query's (one sketch row).

    ``columns`` holds the sketches word-major, ``(SKETCH_BITS / 64, rows)``: each word is then
    one contiguous pass, three times faster than reducing over rows of four words. Rows go in
    blocks that keep the scratch arrays in cache, so memory sees only the sketches stream by;
    each block is one XOR and one popcount over all its words, then the words' counts added.
    """
    words, rows = columns.shape
    total = np.zeros(rows, dtype=np.uint16)
    if words == 0:
        return total
    xor = np.empty((words, min(rows, _BLOCK)), dtype=np.uint64)
    count = np.empty((words, min(rows, _BLOCK)), dtype=np.uint8)
    query_column = query.reshape(words, 1)
    for start in range(0, rows, _BLOCK):
        stop = min(rows, start + _BLOCK)
        xor_, count_, block = xor[:, : stop - start], count[:, : stop - start], total[start:stop]
        np.bitwise_xor(columns[:, start:stop], query_column, out=xor_)
        np.bitwise_count(xor_, out=count_)
        if words == 1:
            block[:] = count_[0]
            continue
        np.add(count_[0], count_[1], out=block, dtype=np.uint16)
        for word in range(2, words):
            np.add(block, count_[word], out=block)
    return total
