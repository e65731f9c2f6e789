"""Erasing a subject from the runtime's files: session logs, continuity, wiki, trash.

- Session logs (``sessions/sess_*.jsonl``) are redacted in place through ``rewrite_log``: every
  string of every event, host-written lines sealed again, order and sequence numbers kept.
- JSON files are parsed and every string *value* redacted (keys are structure; the file stays
  valid JSON); JSON Lines line by line; YAML files the runtime wrote are JSON and handled so;
  markdown and text files (focus, handoff, plans, wiki articles and their versions) as text.
  Each file is replaced atomically. Only these kinds are edited: hidden files (the evidence key,
  stamps), SQLite files (the fact tier's) and anything else are left alone, and the
  verification pass reports them if they hold the subject.
- Only slugs are renamed: a plan file's slug (``plan-0001-<slug>.md``), an article's file and its
  versions folder (``articles/<slug>.md``, ``versions/<slug>/``), numbered when taken. Ids,
  folders, spec names and extensions never change (``Subject.check_structure`` refuses a
  subject that would touch them); links to a renamed article are redacted the same way.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from specwire.runtime.erasure.subject import Subject
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.sessions.log import rewrite_log

_SQLITE_SUFFIXES = (".sqlite3", ".sqlite3-wal", ".sqlite3-shm", ".sqlite3-journal")
_MAX_TEXT_BYTES = 64 << 20
_TEXT_SUFFIXES = frozenset({".md", ".json", ".jsonl", ".yaml", ".yml", ".txt"})
_PLAN_FILE = re.compile(r"^(plan-\d+)-(.+)\.md$")


def is_database_file(path: Path) -> bool:
    return path.name.endswith(_SQLITE_SUFFIXES) or ".sqlite3." in path.name


def redact_files(root: Path, subject: Subject) -> dict[str, int]:
    """Redact every text file under ``root``; counts of files edited and paths renamed."""
    counts = {"sessionLogs": 0, "sessionLines": 0, "files": 0, "renamed": 0}
    for path in regular_files(root):
        if is_database_file(path) or path.name.startswith(".") or path.suffix not in _TEXT_SUFFIXES:
            continue
        if _is_session_log(path):
            lines = rewrite_log(path, subject.redact)
            counts["sessionLines"] += lines
            counts["sessionLogs"] += lines > 0
            continue
        counts["files"] += _redact_file(path, subject)
    counts["renamed"] = _rename_paths(root, subject)
    return counts


def _is_session_log(path: Path) -> bool:
    return (
        path.parent.name == "sessions" and path.name.startswith("sess_") and path.suffix == ".jsonl"
    )


def regular_files(root: Path) -> list[Path]:
    """Every regular file under ``root`` (symbolic links are neither followed nor listed)."""
    found: list[Path] = []
    for directory, _, names in os.walk(root, followlinks=False):
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink():
                found.append(path)
    return sorted(found)


def _redact_file(path: Path, subject: Subject) -> bool:
    try:
        if path.stat().st_size > _MAX_TEXT_BYTES:
            return False
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if not subject.matches(text) and not subject.count_in(data):
        return False
    edited = _redact_text(path, text, subject)
    if edited == text:
        return False
    replace_atomically(path, edited.encode("utf-8"), mode=path.stat().st_mode & 0o777)
    return True


def _redact_text(path: Path, text: str, subject: Subject) -> str:
    if path.suffix in (".json", ".yaml", ".yml"):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return subject.redact(text)  # hand-written YAML: text (the subject is no syntax)
        return json.dumps(_redact_value(value, subject), ensure_ascii=False, indent=2) + "\n"
    if path.suffix == ".jsonl":
        return "".join(_redact_json_line(line, subject) for line in text.splitlines(True))
    return subject.redact(text)


def _redact_json_line(line: str, subject: Subject) -> str:
    body = line.rstrip("\n")
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return subject.redact(line)
    ending = line[len(body) :]
    return json.dumps(_redact_value(value, subject), ensure_ascii=False) + ending


def _redact_value(value: Any, subject: Subject) -> Any:
    if isinstance(value, str):
        return subject.redact(value)
    if isinstance(value, dict):
        return {key: _redact_value(item, subject) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_value(item, subject) for item in value]
    return value


def _rename_paths(root: Path, subject: Subject) -> int:
    """Rename the slugs that hold the subject (plans, articles, article versions)."""
    renamed = 0
    for directory, folders, names in sorted(os.walk(root), key=lambda e: -len(Path(e[0]).parts)):
        parent = Path(directory)
        for name in [*names, *folders]:
            new_name = _renamed_slug(parent.name, name, (parent / name).is_dir(), subject)
            if new_name is None or new_name == name:
                continue
            (parent / name).rename(_free_name(parent, new_name))
            renamed += 1
    return renamed


def _renamed_slug(folder: str, name: str, is_dir: bool, subject: Subject) -> str | None:
    if folder == "plans" and not is_dir:
        plan = _PLAN_FILE.match(name)
        if plan is None:
            return None
        return f"{plan.group(1)}-{subject.redact_name(plan.group(2))}.md"
    if folder == "articles" and not is_dir and name.endswith(".md"):
        return subject.redact_name(name[: -len(".md")]) + ".md"
    if folder == "versions" and is_dir:
        return subject.redact_name(name)
    return None


def _free_name(directory: Path, name: str) -> Path:
    target = directory / name
    stem, dot, suffix = name.partition(".")
    number = 2
    while target.exists():
        target = directory / f"{stem}-{number}{dot}{suffix}"
        number += 1
    return target
