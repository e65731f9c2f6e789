"""Builtin tools a spec may list under ``tools:`` (read, write, ls, grep, bash).

All of them work inside one working directory (``cwd``): a path that resolves outside it
(``..``, an absolute path, a symlink pointing out) is refused. ``write`` also refuses
``.specwire/``, where the agent's memory and session logs live: those change only through their
own tools, so the model cannot forge the evidence the proof ladder reads. Outputs are capped.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runtime.atomic import replace_atomically
from runtime.paths import SPECWIRE_DIRNAME
from runtime.shell import BASH_MAX_OUTPUT_BYTES, BashInput, require_sandbox, run_bash
from runtime.tools import Tool, ToolCatalog, ToolContext, ToolResult

BUILTIN_TOOL_NAMES: tuple[str, ...] = ("bash", "grep", "ls", "read", "write")

READ_MAX_BYTES = 256 * 1024
WRITE_MAX_BYTES = 1024 * 1024
LS_MAX_ENTRIES = 1000
GREP_MAX_MATCHES = 200
GREP_MAX_FILE_BYTES = 1024 * 1024
GREP_MAX_LINE_CHARS = 300
GREP_SKIP_DIRS = frozenset({".git", SPECWIRE_DIRNAME, ".venv", "node_modules", "__pycache__"})


class _Refused(Exception):
    """A request the tool turns down; the message is shown to the model."""


def _inside(cwd: Path, raw: str) -> Path:
    target = (cwd / raw).resolve()
    if target != cwd and cwd not in target.parents:
        raise _Refused(f"{raw!r} is outside the working directory")
    return target


def _relative(cwd: Path, path: Path) -> str:
    return path.relative_to(cwd).as_posix() or "."


def _decode_text(data: bytes) -> str | None:
    """UTF-8 text (an incomplete trailing character is dropped), or None for binary data."""
    if b"\x00" in data:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return None


# -- read ------------------------------------------------------------------------------------


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1, description="A text file, relative to the working directory.")


def _read(cwd: Path, parsed: ReadInput) -> ToolResult:
    target = _inside(cwd, parsed.path)
    if not target.is_file():
        raise _Refused(f"{parsed.path!r} is not a file")
    size = target.stat().st_size
    with target.open("rb") as handle:
        data = handle.read(READ_MAX_BYTES)
    text = _decode_text(data)
    if text is None:
        raise _Refused(f"{parsed.path!r} is not a UTF-8 text file")
    if size > READ_MAX_BYTES:
        text += f"\n[truncated: showing the first {READ_MAX_BYTES} of {size} bytes]"
    return ToolResult(text)


# -- write -----------------------------------------------------------------------------------


class WriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1, description="The file to create or replace.")
    content: str = Field(description="The complete new content of the file (UTF-8 text).")


def _write(cwd: Path, parsed: WriteInput) -> ToolResult:
    target = _inside(cwd, parsed.path)
    relative = _relative(cwd, target)
    if relative.split("/")[0] == SPECWIRE_DIRNAME:
        raise _Refused(
            f"refusing to write under {SPECWIRE_DIRNAME}/: memory, plans and session logs "
            "change only through their own tools"
        )
    if target.is_dir():
        raise _Refused(f"{parsed.path!r} is a directory")
    data = parsed.content.encode("utf-8")
    if len(data) > WRITE_MAX_BYTES:
        raise _Refused(f"content is {len(data)} bytes; the limit is {WRITE_MAX_BYTES}")
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(target, data)
    return ToolResult(f"wrote {len(data)} bytes to {relative}")


# -- ls --------------------------------------------------------------------------------------


class LsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(default=".", description="A directory (default: the working directory).")


def _ls(cwd: Path, parsed: LsInput) -> ToolResult:
    target = _inside(cwd, parsed.path)
    if not target.is_dir():
        raise _Refused(f"{parsed.path!r} is not a directory")
    entries = sorted(
        f"{entry.name}/" if entry.is_dir() else entry.name for entry in target.iterdir()
    )
    if not entries:
        return ToolResult(f"{_relative(cwd, target)}: (empty directory)")
    shown = entries[:LS_MAX_ENTRIES]
    if len(entries) > LS_MAX_ENTRIES:
        shown.append(f"[{len(entries) - LS_MAX_ENTRIES} more entries not shown]")
    return ToolResult("\n".join(shown))


# -- grep ------------------------------------------------------------------------------------


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(min_length=1, description="A Python regular expression.")
    path: str = Field(default=".", description="A file or directory to search (default: all).")


def _candidate_files(cwd: Path, root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in GREP_SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            resolved = path.resolve()
            if resolved.is_file() and (cwd in resolved.parents):
                found.append(path)
    return sorted(found, key=lambda path: path.relative_to(root).as_posix())


def _grep(cwd: Path, parsed: GrepInput) -> ToolResult:
    try:
        regex = re.compile(parsed.pattern)
    except re.error as exc:
        raise _Refused(f"invalid pattern: {exc}") from None
    root = _inside(cwd, parsed.path)
    if not root.exists():
        raise _Refused(f"{parsed.path!r} does not exist")
    matches: list[str] = []
    truncated = False
    for path in _candidate_files(cwd, root):
        if path.stat().st_size > GREP_MAX_FILE_BYTES:
            continue
        text = _decode_text(path.read_bytes())
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                if len(matches) == GREP_MAX_MATCHES:
                    truncated = True
                    break
                shown = line if len(line) <= GREP_MAX_LINE_CHARS else line[:GREP_MAX_LINE_CHARS]
                matches.append(f"{_relative(cwd, path.resolve())}:{number}: {shown}")
        if truncated:
            break
    if not matches:
        return ToolResult(f"no matches for /{parsed.pattern}/ in {parsed.path}")
    if truncated:
        matches.append(f"[output capped at {GREP_MAX_MATCHES} matches; narrow the pattern or path]")
    return ToolResult("\n".join(matches))


# -- the catalog ------------------------------------------------------------------------------

_Run = Callable[[Path, Any], ToolResult]

_SPECS: dict[str, tuple[str, type[BaseModel], _Run, dict[str, Any]]] = {
    "read": (
        f"Read a UTF-8 text file under the working directory (first {READ_MAX_BYTES} bytes).",
        ReadInput,
        _read,
        {"read_only": True},
    ),
    "write": (
        "Create or replace a text file under the working directory (atomic).",
        WriteInput,
        _write,
        {"destructive": True},
    ),
    "ls": (
        "List a directory under the working directory, sorted; directories end with '/'.",
        LsInput,
        _ls,
        {"read_only": True},
    ),
    "grep": (
        f"Search files under the working directory for a regex; at most {GREP_MAX_MATCHES} "
        "matching lines as path:line: text.",
        GrepInput,
        _grep,
        {"read_only": True},
    ),
    "bash": (
        "Run a shell command in the working directory with a timeout; stdout and stderr are "
        f"combined and capped at {BASH_MAX_OUTPUT_BYTES} bytes.",
        BashInput,
        run_bash,
        {"destructive": True, "scope": "external"},
    ),
}


def _tool(name: str, cwd: Path) -> Tool:
    description, input_model, run, flags = _SPECS[name]

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        try:
            return run(cwd, parsed)
        except _Refused as exc:
            return ToolResult(f"{name}: {exc}", True)
        except OSError as exc:
            return ToolResult(f"{name}: {exc.strerror or exc}", True)

    return Tool(name, description, input_model, handle, **flags)


def builtin_catalog(names: Sequence[str], cwd: Path | None = None) -> ToolCatalog:
    """A catalog with the named builtin tools, registered in the given order."""
    unknown = [name for name in names if name not in _SPECS]
    if unknown:
        raise ValueError(
            f"unknown builtin tool(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(BUILTIN_TOOL_NAMES)}"
        )
    root = (cwd if cwd is not None else Path.cwd()).resolve()
    if "bash" in names:
        require_sandbox(root)  # refuse to start rather than run a shell unconfined
    catalog = ToolCatalog()
    for name in names:
        catalog.register(_tool(name, root))
    return catalog
