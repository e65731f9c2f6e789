"""A response body's ``Content-Encoding``, undone by hand with a cap on the DECODED size.

httpx decodes ``gzip``/``deflate``/``br``/``zstd`` transparently (even after asking for
``Accept-Encoding: identity``) and a size cap counted on its output comes too late: a 1.8 kB
body encoded ``gzip, gzip`` inflated to 2 GB before the first decoded chunk was counted. So the
fetch reads raw bytes and decodes them here, at most one layer of ``gzip`` or ``deflate``, never
holding more than ``max_bytes`` + one chunk of decoded output: ``zlib``'s ``max_length`` bounds
every step, and the input it has not consumed yet waits in ``unconsumed_tail``.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Final

DECODED_ENCODINGS: Final = ("gzip", "deflate")
_GZIP_NAMES: Final = frozenset({"gzip", "x-gzip"})
_STEP: Final = 64 * 1024  # decoded bytes produced per zlib call


class EncodingRefused(Exception):
    """The body's encoding is not one this fetch decodes, or its decoded form is too large or
    corrupt. The message is one line naming what was refused."""


def encoding_layers(header: str | None) -> tuple[str, ...]:
    """The ``Content-Encoding`` header's codings in the order they were applied, lower-case,
    ``identity`` dropped."""
    if not header:
        return ()
    return tuple(
        name for part in header.split(",") if (name := part.strip().lower()) not in ("", "identity")
    )


class _Inflater:
    """One ``gzip`` or ``deflate`` layer. ``deflate`` is meant as zlib-wrapped data, but some
    servers send raw deflate: the first bytes decide which."""

    def __init__(self, coding: str) -> None:
        self._gzip = coding in _GZIP_NAMES
        self._inflater: zlib._Decompress | None = (
            zlib.decompressobj(16 + zlib.MAX_WBITS) if self._gzip else None
        )
        self._pending = b""

    def _started(self, data: bytes) -> zlib._Decompress | None:
        if self._inflater is not None:
            return self._inflater
        self._pending += data
        if len(self._pending) < 2:
            return None
        first = self._pending[:2]
        wrapped = (first[0] & 0x0F) == 8 and int.from_bytes(first, "big") % 31 == 0
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return self._inflater

    def feed(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decoded output of ``data``, in steps, stopping once more than ``room`` bytes came out
        (the caller refuses the body then)."""
        inflater = self._started(data)
        if inflater is None:
            return
        if self._pending:
            data, self._pending = self._pending, b""
        produced = 0
        while produced <= room:
            limit = min(_STEP, room - produced + 1)
            out = inflater.decompress(data, limit)
            produced += len(out)
            if out:
                yield out
            data = inflater.unconsumed_tail
            if inflater.eof:
                if data or inflater.unused_data:
                    # Concatenated gzip members are legal but rare; a second member is also how
                    # a bomb would hide more data: refuse rather than guess.
                    raise EncodingRefused("the encoded body has data after its end")
                return
            if not data and len(out) < limit:
                return  # this input is used up; zlib holds no output back

    def finish(self) -> None:
        if self._pending or (self._inflater is not None and not self._inflater.eof):
            raise EncodingRefused("the encoded body ends before its compressed stream does")


def decoded_body(raw: Iterable[bytes], header: str | None, max_bytes: int) -> tuple[bytes, bool]:
    """The body ``raw`` yields, with its ``Content-Encoding`` (``header``) undone, and whether it
    was cut at ``max_bytes``.

    An unencoded body is cut at ``max_bytes`` (the caller marks it truncated). An encoded body
    whose decoded size passes ``max_bytes`` is refused instead: its size on the wire says nothing
    about what it inflates to (a compression bomb), and reading on would only spend memory.

    Raises ``EncodingRefused`` for a coding other than one ``gzip`` or ``deflate`` layer (``br``,
    ``zstd``, ``compress``, stacked codings), a corrupt stream or a decoded body over the cap.
    """
    layers = encoding_layers(header)
    if not layers:
        return _capped(raw, max_bytes)
    if len(layers) > 1 or layers[0] not in _GZIP_NAMES | {"deflate"}:
        shown = ", ".join(layers)[:80]
        raise EncodingRefused(
            f"the response is encoded {shown!r}; only one layer of gzip or deflate is decoded"
        )
    inflater = _Inflater(layers[0])
    chunks: list[bytes] = []
    size = 0
    try:
        for data in raw:
            for out in inflater.feed(data, max_bytes - size):
                size += len(out)
                if size > max_bytes:
                    raise EncodingRefused(
                        f"the {layers[0]}-encoded body decodes to more than {max_bytes} bytes "
                        "(the fetch limit); refused as a possible compression bomb"
                    )
                chunks.append(out)
        inflater.finish()
    except zlib.error as exc:
        raise EncodingRefused(f"the {layers[0]}-encoded body is corrupt ({exc})") from None
    return b"".join(chunks), False


def _capped(raw: Iterable[bytes], max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in raw:
        room = max_bytes - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False
