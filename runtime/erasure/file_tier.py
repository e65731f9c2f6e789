"""Erasing a subject from the runtime's files: session logs, continuity, wiki, trash.

- Session logs (``sessions/sess_*.jsonl``) are redacted in place through ``rewrite_log``: every
  string of every event, host-written lines sealed again, order and sequence numbers kept.
- JSON files are parsed and every string redacted (the file stays valid JSON); JSON Lines files
  line by line; any other text file (markdown: focus, handoff, plans, goals, wiki articles and
  their versions) as text. Each file is replaced atomically.
- A file or folder whose name holds the subject (a plan's or an article's slug) is renamed
  without it (``erased``, numbered when taken); plans and articles take their id and slug from
  the file name, and links to a renamed article are redacted the same way.
- Files that are not UTF-8 text are left alone (the verification pass reports them if they
  hold the subject); SQLite files are the fact tier's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from runtime.atomic import replace_atomically
from runtime.erasure.subject import Subject
from runtime.events import rewrite_log

_SQLITE_SUFFIXES = (".sqlite3", ".sqlite3-wal", ".sqlite3-shm", ".sqlite3-journal")
_MAX_TEXT_BYTES = 64 << 20


def is_database_file(path: Path) -> bool:
    return path.name.endswith(_SQLITE_SUFFIXES) or ".sqlite3." in path.name


def redact_files(root: Path, subject: Subject) -> dict[str, int]:
    """Redact every text file under ``root``; counts of files edited and paths renamed."""
    counts = {"sessionLogs": 0, "sessionLines": 0, "files": 0, "renamed": 0}
    for path in _files(root):
        if is_database_file(path):
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


def _files(root: Path) -> list[Path]:
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
    if path.suffix == ".json":
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return subject.redact(text)
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
        return {subject.redact(k): _redact_value(v, subject) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(item, subject) for item in value]
    return value


def _rename_paths(root: Path, subject: Subject) -> int:
    """Rename files and folders whose name holds the subject, deepest first."""
    renamed = 0
    for directory, folders, names in sorted(os.walk(root), key=lambda e: -len(Path(e[0]).parts)):
        for name in [*names, *folders]:
            new_name = subject.redact_name(name)
            if new_name == name:
                continue
            source = Path(directory) / name
            target = _free_name(Path(directory), new_name)
            source.rename(target)
            renamed += 1
    return renamed


def _free_name(directory: Path, name: str) -> Path:
    target = directory / name
    stem, dot, suffix = name.partition(".")
    number = 2
    while target.exists():
        target = directory / f"{stem}-{number}{dot}{suffix}"
        number += 1
    return target
