"""The child process of the ``grep`` tool: runs one regular expression over texts it is fed.

Python's ``re`` backtracks, so a pattern such as ``^(a+)+$`` can take exponential time on one
line, and a running match cannot be interrupted from another thread. The tool therefore runs
the match here, in a process it can kill at its deadline, and keeps every line this process
printed before that. Standard library only: it is started with ``python -I -S <this file>``.

Input (stdin): frames of a 4-byte big-endian length and a payload; the first is a JSON header
``{"pattern", "max", "width"}``, each next one the UTF-8 text of one file. Output (stdout), one
line per match, flushed at once: ``<file index>\\t<line number>\\t<line, cut to width>``. Stops
after ``max + 1`` matches (the extra one tells the parent there were more).
"""

from __future__ import annotations

import json
import re
import sys
from typing import BinaryIO


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _read_frame(stream: BinaryIO) -> bytes | None:
    head = _read_exact(stream, 4)
    if head is None:
        return None
    return _read_exact(stream, int.from_bytes(head, "big"))


def main() -> int:
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    raw_header = _read_frame(source)
    if raw_header is None:
        return 2
    header = json.loads(raw_header)
    regex = re.compile(header["pattern"])
    limit = int(header["max"]) + 1
    width = int(header["width"])
    found = 0
    index = 0
    while (frame := _read_frame(source)) is not None:
        text = frame.decode("utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                sink.write(f"{index}\t{number}\t{line[:width]}\n".encode())
                sink.flush()
                found += 1
                if found >= limit:
                    return 0
        index += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
