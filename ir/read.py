"""Reading a spec file's bytes, bounded: the first step of ``load_spec``, kept free of pydantic
so a build served from the cache reads (and hashes) its specs without building any model."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from specwire.ir.errors import ROOT_KEY, ROOT_MARK, SpecError, SpecIssue
from specwire.ir.limits import MAX_SPEC_BYTES, size_text


def read_spec_bytes(path: Path, display_path: str) -> bytes:
    """The file's bytes, or a ``SpecError`` (unreadable, or larger than a spec may be)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)  # never more: the file may be huge or endless
            size = _file_size(handle.fileno())
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SpecError([root_issue(display_path, f"cannot read the file: {reason}")]) from None
    if len(raw) > MAX_SPEC_BYTES or (size is not None and size > MAX_SPEC_BYTES):
        raise too_large(display_path, size)
    return raw


def decode_spec(raw: bytes, display_path: str) -> str:
    """UTF-8 text, or a ``SpecError`` located at the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        issue = SpecIssue(display_path, line, col, ROOT_KEY, "the file is not valid UTF-8 text")
        raise SpecError([issue]) from None


def _file_size(fd: int) -> int | None:
    info = os.fstat(fd)
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def too_large(display_path: str, size: int | None) -> SpecError:
    """``size`` is ``None`` when the file is not a regular file (its size is unknown)."""
    shown = f" ({size:,} bytes)" if size is not None else ""
    message = f"the file is too large{shown}: a spec may be at most {size_text(MAX_SPEC_BYTES)}"
    return SpecError([root_issue(display_path, message)])


def root_issue(display_path: str, message: str) -> SpecIssue:
    return SpecIssue(display_path, ROOT_MARK.line, ROOT_MARK.col, ROOT_KEY, message)
