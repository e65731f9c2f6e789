"""Atomic replacement: the old bytes or the new, never a mix; a failed write keeps the old file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runtime.atomic import replace_atomically


def test_replaces_the_content_and_sets_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("old")
    replace_atomically(target, b"new", mode=0o600)
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]


def test_without_a_mode_the_umask_decides(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        replace_atomically(tmp_path / "a.txt", b"x")
    finally:
        os.umask(previous)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    target.write_text("keep me")
    with pytest.raises(TypeError):
        replace_atomically(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.md"]
