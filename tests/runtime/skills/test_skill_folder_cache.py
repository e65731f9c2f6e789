"""Skill and command folders are parsed again only when a file in them changed."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import specwire.runtime.skills.loader as loader
from specwire.runtime.fs.safe_open import read_regular_text
from specwire.runtime.skills.folder_cache import FolderCache
from specwire.runtime.skills.loader import Entry, load_commands, load_skills


@dataclass
class Folders:
    """The test's own folder caches; files written by a test are seconds old at most, so they
    trust timestamps at once (``racy_ns=0``) unless a test says otherwise."""

    skills: FolderCache[Entry] = field(
        default_factory=lambda: FolderCache(inner_file="SKILL.md", racy_ns=0)
    )
    commands: FolderCache[Entry] = field(default_factory=lambda: FolderCache(racy_ns=0))


@pytest.fixture
def folders() -> Folders:
    return Folders()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every file the loader opens, by path."""
    opened: list[str] = []
    real = read_regular_text

    def counting(path: Path, *, follow_symlinks: bool) -> str:
        opened.append(str(path))
        return real(path, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(loader, "read_regular_text", counting)
    yield opened


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def bump(path: Path, text: str) -> None:
    """Rewrite with the same size and the same mtime: only the ctime says it changed."""
    before = os.stat(path)
    assert len(text.encode()) == before.st_size
    while True:
        path.write_text(text)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        if os.stat(path).st_ctime_ns != before.st_ctime_ns:
            return
        time.sleep(0.01)  # the file system's clock has not ticked since the first write


def commands(tmp_path: Path, folders: Folders) -> dict[str, str]:
    found = load_commands(set(), cwd=tmp_path, home_dir=None, folders=folders.commands)
    return {name: command.body for name, command in found.items()}


def skills(tmp_path: Path, folders: Folders) -> list[str]:
    return [
        skill.body
        for skill in load_skills(set(), cwd=tmp_path, home_dir=None, folders=folders.skills)
    ]


def test_an_unchanged_folder_is_not_read_again(
    folders: Folders, tmp_path: Path, reads: list[str]
) -> None:
    write(tmp_path / ".specwire" / "commands" / "triage.md", "---\ndescription: t\n---\nOne\n")
    write(tmp_path / ".specwire" / "skills" / "tone" / "SKILL.md", "---\nname: t\n---\nBe kind\n")
    assert commands(tmp_path, folders) == {"triage": "One\n"}
    assert skills(tmp_path, folders) == ["Be kind\n"]
    first = len(reads)
    assert commands(tmp_path, folders) == {"triage": "One\n"}
    assert skills(tmp_path, folders) == ["Be kind\n"]
    assert len(reads) == first


def test_an_edited_command_is_seen_on_the_next_call(folders: Folders, tmp_path: Path) -> None:
    path = tmp_path / ".specwire" / "commands" / "triage.md"
    write(path, "One\n")
    assert commands(tmp_path, folders) == {"triage": "One\n"}
    write(path, "Two, longer\n")
    assert commands(tmp_path, folders) == {"triage": "Two, longer\n"}
    bump(path, "Six, longer\n")
    assert commands(tmp_path, folders) == {"triage": "Six, longer\n"}


def test_an_edited_skill_is_seen_on_the_next_call(folders: Folders, tmp_path: Path) -> None:
    path = tmp_path / ".specwire" / "skills" / "tone" / "SKILL.md"
    write(path, "Be kind\n")
    assert skills(tmp_path, folders) == ["Be kind\n"]
    bump(path, "Be calm\n")
    assert skills(tmp_path, folders) == ["Be calm\n"]


def test_added_removed_and_renamed_files_are_seen(folders: Folders, tmp_path: Path) -> None:
    folder = tmp_path / ".specwire" / "commands"
    assert commands(tmp_path, folders) == {}
    write(folder / "a.md", "A\n")
    assert commands(tmp_path, folders) == {"a": "A\n"}
    write(folder / "b.md", "B\n")
    assert commands(tmp_path, folders) == {"a": "A\n", "b": "B\n"}
    (folder / "a.md").rename(folder / "c.md")
    assert commands(tmp_path, folders) == {"b": "B\n", "c": "A\n"}
    (folder / "b.md").unlink()
    assert commands(tmp_path, folders) == {"c": "A\n"}


def test_a_skill_folder_swapped_for_another_is_seen(folders: Folders, tmp_path: Path) -> None:
    link = tmp_path / ".specwire" / "skills"
    write(tmp_path / "one" / "tone" / "SKILL.md", "Be kind\n")
    write(tmp_path / "two" / "tone" / "SKILL.md", "Be calm\n")
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "one")
    assert skills(tmp_path, folders) == ["Be kind\n"]
    link.unlink()
    link.symlink_to(tmp_path / "two")
    assert skills(tmp_path, folders) == ["Be calm\n"]


def test_a_recently_changed_file_is_read_every_time(tmp_path: Path, reads: list[str]) -> None:
    folders = Folders(commands=FolderCache(racy_ns=3600 * 10**9))
    write(tmp_path / ".specwire" / "commands" / "triage.md", "One\n")
    commands(tmp_path, folders)
    commands(tmp_path, folders)
    assert reads.count(str(tmp_path / ".specwire" / "commands" / "triage.md")) == 2


def test_warnings_are_repeated_when_a_folder_is_reused(
    folders: Folders, tmp_path: Path, reads: list[str]
) -> None:
    write(tmp_path / ".specwire" / "commands" / "broken.md", "---\nkey: [unclosed\n---\nx\n")
    write(tmp_path / ".specwire" / "commands" / "help.md", "reserved\n")
    first: list[str] = []
    second: list[str] = []
    load_commands(set(), cwd=tmp_path, home_dir=None, warn=first.append, folders=folders.commands)
    opened = len(reads)
    load_commands(set(), cwd=tmp_path, home_dir=None, warn=second.append, folders=folders.commands)
    assert len(reads) == opened
    assert len(first) == 2 and second == first
