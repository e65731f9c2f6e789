"""The fetch tool decodes ``Content-Encoding`` itself: one gzip or deflate layer, its DECODED size
capped while it streams. Compression bombs (one layer and nested) against a real HTTP server on
127.0.0.1 leave the fetching process small and end in a clear error result."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_fetch import Route, Site, framed_body, run, serve

from specwire.runtime.tools.content_encoding import EncodingRefused, decoded_body, encoding_layers
from specwire.runtime.tools.fetch import fetch_tool

ROOT = Path(__file__).resolve().parents[3]
BOMB_DECODED_MIB = 512  # past the 300 MB the fetching process must stay under
RSS_LIMIT_BYTES = 300 * 1024 * 1024
TEXT = "the quick brown fox jumps over the lazy dog\n" * 200


def _zeros_gzip(mib: int) -> bytes:
    packer = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    return b"".join([packer.compress(block) for _ in range(mib)] + [packer.flush()])


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    single = _zeros_gzip(BOMB_DECODED_MIB)
    return {"single": single, "nested": gzip.compress(single, 9)}


@pytest.fixture
def site() -> Iterator[Site]:
    with serve({}) as running:
        yield running


def encoded(site: Site, path: str, body: bytes, encoding: str) -> str:
    site.routes[path] = Route(body, headers={"content-encoding": encoding})
    return site.url(path)


# -- decoding ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gzip", "x-gzip", "GZIP", "identity, gzip"])
def test_a_gzip_body_is_decoded(site: Site, name: str) -> None:
    url = encoded(site, "/g", gzip.compress(TEXT.encode()), name)
    result = run(fetch_tool([site.origin]), url)
    assert not result.is_error, result.text
    assert framed_body(result) == TEXT


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS], ids=["zlib", "raw"])
def test_a_deflate_body_is_decoded_wrapped_or_raw(site: Site, wbits: int) -> None:
    packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
    url = encoded(site, "/d", packer.compress(TEXT.encode()) + packer.flush(), "deflate")
    result = run(fetch_tool([site.origin]), url)
    assert not result.is_error, result.text
    assert framed_body(result) == TEXT


@pytest.mark.parametrize("name", ["br", "zstd", "compress", "gzip, gzip", "deflate, gzip"])
def test_other_or_stacked_encodings_are_refused_by_name(site: Site, name: str) -> None:
    url = encoded(site, "/e", gzip.compress(gzip.compress(TEXT.encode())), name)
    result = run(fetch_tool([site.origin]), url)
    assert result.is_error
    assert f"the response is encoded {name!r}; only one layer of gzip or deflate" in result.text
    assert url in result.text


def test_a_corrupt_or_cut_gzip_body_is_an_error(site: Site) -> None:
    whole = gzip.compress(TEXT.encode())
    tool = fetch_tool([site.origin])
    corrupt = run(tool, encoded(site, "/bad", whole[:10] + b"\xff" * 40, "gzip"))
    assert corrupt.is_error and "the gzip-encoded body is corrupt" in corrupt.text
    cut = run(tool, encoded(site, "/cut", whole[: len(whole) // 2], "gzip"))
    assert cut.is_error and "ends before its compressed stream does" in cut.text


def test_data_after_the_gzip_stream_is_refused(site: Site) -> None:
    body = gzip.compress(b"one") + gzip.compress(b"two")
    result = run(fetch_tool([site.origin]), encoded(site, "/two", body, "gzip"))
    assert result.is_error and "has data after its end" in result.text


def test_an_encoded_body_past_the_cap_is_refused_not_truncated(site: Site) -> None:
    url = encoded(site, "/big", gzip.compress(b"a" * 5_000), "gzip")
    at_cap = run(fetch_tool([site.origin], max_bytes=5_000), url)
    assert not at_cap.is_error and framed_body(at_cap) == "a" * 5_000
    over = run(fetch_tool([site.origin], max_bytes=4_999), url)
    assert over.is_error
    assert "decodes to more than 4999 bytes (the fetch limit)" in over.text


def test_decoding_holds_at_most_one_step_past_the_cap_whatever_the_chunking() -> None:
    bomb = _zeros_gzip(64)
    for size in (1, 7, 65_536, len(bomb)):
        chunks = (bomb[i : i + size] for i in range(0, min(len(bomb), 4096 * size), size))
        with pytest.raises(EncodingRefused, match="decodes to more than 100000 bytes"):
            decoded_body(chunks, "gzip", 100_000)


def test_encoding_layers_reads_the_header_in_order() -> None:
    assert encoding_layers(None) == ()
    assert encoding_layers(" Identity ") == ()
    assert encoding_layers("gzip, identity,BR") == ("gzip", "br")


# -- bombs, measured in a process of their own -------------------------------------------------

_PROBE = """
import json, sys
from specwire.runtime.tools.fetch import fetch_tool
from specwire.runtime.core.tool_types import ToolContext
ctx = ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_0123456789abcdef")
result = fetch_tool([sys.argv[1]]).invoke({"url": sys.argv[2]}, ctx)
# VmHWM is this process's own high-water mark; ru_maxrss would carry the parent's from before exec.
with open("/proc/self/status") as status:
    peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) * 1024
print(json.dumps({"error": result.is_error, "text": result.text, "peak": peak}))
"""


@pytest.mark.parametrize("kind", ["single", "nested"])
def test_a_gzip_bomb_leaves_the_process_small_and_is_a_clear_error(
    site: Site, bombs: dict[str, bytes], kind: str
) -> None:
    encoding = "gzip" if kind == "single" else "gzip, gzip"
    url = encoded(site, f"/{kind}", bombs[kind], encoding)
    env = {**os.environ, "PYTHONPATH": str(ROOT / ".typing")}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, site.origin, url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["error"] is True
    assert report["text"].startswith("fetch failed: ")
    if kind == "single":
        assert "decodes to more than 2000000 bytes" in report["text"]
        assert "possible compression bomb" in report["text"]
    else:
        assert "encoded 'gzip, gzip'; only one layer of gzip or deflate" in report["text"]
    assert report["peak"] < RSS_LIMIT_BYTES, report["peak"]
