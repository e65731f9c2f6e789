"""Atomic replacement: the old bytes or the new, never a mix; a failed write keeps the old file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specwire.runtime.fs.atomic import has_temps, replace_at, replace_atomically, sweep_temps


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


def test_replace_at_writes_in_the_directory_that_was_opened(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    dir_fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # The path is swapped for a symlink after the directory was opened: the write still
        # lands in the directory that was opened, never through the new link.
        os.rename(work, tmp_path / "moved")
        os.symlink(outside, work)
        replace_at(dir_fd, "notes.md", b"kept inside", mode=0o600)
    finally:
        os.close(dir_fd)
    assert list(outside.iterdir()) == []
    assert (tmp_path / "moved" / "notes.md").read_bytes() == b"kept inside"


def test_replace_at_replaces_a_symlink_rather_than_writing_through_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link.txt").symlink_to(outside)
    replace_atomically(tmp_path / "work" / "link.txt", b"new")
    assert outside.read_text() == "untouched"
    assert not (tmp_path / "work" / "link.txt").is_symlink()


def test_sweep_temps_removes_only_our_leftovers(tmp_path: Path) -> None:
    names = {
        ".focus.md.0123abcd.tmp": True,  # ours
        ".focus.md.ab_cd3fg.tmp": True,  # tempfile.mkstemp's shape (earlier versions)
        ".other.md.0123abcd.tmp": False,  # a target the caller does not own
        ".focus.md.tmp": False,  # not the temporary's shape
        "focus.md": False,
    }
    for name in names:
        (tmp_path / name).write_text("x")
    os.mkfifo(tmp_path / ".focus.md.fifo0000.tmp")  # not a regular file: left alone
    dir_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert has_temps(dir_fd, lambda target: target == "focus.md")
        removed = sweep_temps(dir_fd, lambda target: target == "focus.md")
    finally:
        os.close(dir_fd)
    assert removed == sorted(name for name, ours in names.items() if ours)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*(n for n, ours in names.items() if not ours), ".focus.md.fifo0000.tmp"])
