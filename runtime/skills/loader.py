"""Skills and slash commands: builtins shipped as package data, overridden by the user's home
(``~/.specwire/``) and then by the project (``<cwd>/.specwire/``).

Each folder is read and parsed again only when a file in it changed (``folder_cache``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from specwire.runtime.core.errors import UnsafeFileError
from specwire.runtime.core.paths import SPECWIRE_DIRNAME
from specwire.runtime.core.seams import Skill, SlashCommand
from specwire.runtime.fs.safe_open import read_regular_text
from specwire.runtime.loop.commands import HOST_COMMANDS
from specwire.runtime.skills.folder_cache import FolderCache
from specwire.runtime.skills.frontmatter import split_front_matter

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

Source = Literal["builtin", "home", "project"]

Warn = Callable[[str], None]

# Commands the host itself answers; a file with one of these names would only shadow it.
RESERVED_COMMANDS = frozenset(HOST_COMMANDS)

# Builtin commands by the feature that must be on for them to be offered.
FOCUS_COMMANDS = frozenset({"focus", "clear-focus"})
# These drive the plan tools, so they are offered only when plans are wired.
PLAN_COMMANDS = frozenset({"plan", "next", "handoff", "clear-plan"})
CONTINUITY_COMMANDS = FOCUS_COMMANDS | PLAN_COMMANDS
FACTS_COMMANDS = frozenset({"forget"})
WIKI_COMMANDS = frozenset({"wiki", "gap"})
# The learning loop's (``learning``); ``exam`` only when the spec has an exam.
LEARNING_COMMANDS = frozenset({"study", "reflect"})
EXAM_COMMANDS = frozenset({"exam"})
# Offered when the spec has ``memory.dream`` (with facts on).
DREAM_COMMANDS = frozenset({"dream"})


# A file in a folder: (name, front matter fields, body).
Entry = tuple[str, Mapping[str, str], str]

# Shared by every wiring in the process (per-turn hosts wire on every turn).
_SKILL_FOLDERS: FolderCache[Entry] = FolderCache(inner_file="SKILL.md")
_COMMAND_FOLDERS: FolderCache[Entry] = FolderCache()


def _builtin_root() -> Traversable:
    # The package's own files, beside this module (as ``tools/schemas.json`` is): importing
    # ``importlib.resources`` to find them cost a memory bundle's start ~8 ms.
    return Path(__file__).parent / "builtin"


def _override_roots(home_dir: Path | None, cwd: Path) -> list[tuple[Source, Path]]:
    roots: list[tuple[Source, Path]] = []
    if home_dir is not None:
        roots.append(("home", home_dir / SPECWIRE_DIRNAME))
    roots.append(("project", cwd / SPECWIRE_DIRNAME))
    return roots


def _ignore(line: str) -> None:
    return None


def _read(entry: Traversable, warn: Warn) -> str | None:
    """The file's text, or None (with a warning) when it cannot be read as UTF-8 text: one bad
    file in a user's folder must not stop every agent from starting."""
    try:
        if isinstance(entry, Path):  # a user's file: a FIFO there must not hang the start
            return read_regular_text(entry, follow_symlinks=True)
        return entry.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, UnsafeFileError) as exc:
        warn(f"[skills] skipped {entry}: {type(exc).__name__}: {exc}\n")
        return None


def _front_matter(entry: Traversable, text: str, warn: Warn) -> tuple[dict[str, str], str] | None:
    try:
        return split_front_matter(text)
    except ValueError as exc:
        warn(f"[skills] skipped {entry}: its front matter {exc}\n")
        return None


def _present(entry: Traversable) -> bool:
    """A file, or anything else that is not a directory: a FIFO or a device where a file
    belongs is reported (and skipped) when it is read, not passed over in silence."""
    if isinstance(entry, Path):
        return entry.exists() and not entry.is_dir()
    return entry.is_file()


def _skill_files(
    root: Traversable, warn: Warn, folders: FolderCache[Entry] | None = None
) -> tuple[Entry, ...]:
    cache = folders if folders is not None else _SKILL_FOLDERS
    return cache.read(root.joinpath("skills"), _read_skills, warn)


def _command_files(
    root: Traversable, warn: Warn, folders: FolderCache[Entry] | None = None
) -> tuple[Entry, ...]:
    cache = folders if folders is not None else _COMMAND_FOLDERS
    return cache.read(root.joinpath("commands"), _read_commands, warn)


def _read_skills(skills: Traversable, warn: Warn) -> Iterator[Entry]:
    if not skills.is_dir():
        return
    for entry in sorted(skills.iterdir(), key=lambda item: item.name):
        skill_file = entry.joinpath("SKILL.md")
        if entry.is_dir() and _present(skill_file):
            text = _read(skill_file, warn)
            parsed = _front_matter(skill_file, text, warn) if text is not None else None
            if parsed is not None:
                yield entry.name, *parsed


def _read_commands(commands: Traversable, warn: Warn) -> Iterator[Entry]:
    if not commands.is_dir():
        return
    for entry in sorted(commands.iterdir(), key=lambda item: item.name):
        if not (_present(entry) and entry.name.endswith(".md")):
            continue
        name = entry.name[: -len(".md")]
        if name in RESERVED_COMMANDS:
            warn(f"[skills] skipped {entry}: /{name} is answered by the host itself\n")
            continue
        text = _read(entry, warn)
        parsed = _front_matter(entry, text, warn) if text is not None else None
        if parsed is not None:
            yield name, *parsed


def _skill(name: str, fields: Mapping[str, str], body: str, source: Source) -> Skill:
    return Skill(fields.get("name", name), fields.get("description", ""), body, source)


def _command(name: str, fields: Mapping[str, str], body: str, source: Source) -> SlashCommand:
    return SlashCommand(
        name, fields.get("description", ""), fields.get("argument-hint", ""), body, source
    )


def load_skills(
    builtin: Collection[str],
    *,
    cwd: Path,
    home_dir: Path | None,
    warn: Warn = _ignore,
    folders: FolderCache[Entry] | None = None,
) -> list[Skill]:
    """Builtin skills named in ``builtin``, then home and project skills overriding by name.

    An override with an empty body disables the skill. The result is sorted by name. Folders are
    read through ``folders`` (the process's cache of skill folders unless a caller passes one).
    """
    found: dict[str, Skill] = {
        name: _skill(name, fields, body, "builtin")
        for name, fields, body in _skill_files(_builtin_root(), warn, folders)
        if name in builtin
    }
    for source, root in _override_roots(home_dir, cwd):
        for name, fields, body in _skill_files(root, warn, folders):
            found[name] = _skill(name, fields, body, source)
    return [found[name] for name in sorted(found) if found[name].body.strip()]


def load_commands(
    allowed_builtin: Collection[str],
    *,
    cwd: Path,
    home_dir: Path | None,
    warn: Warn = _ignore,
    folders: FolderCache[Entry] | None = None,
) -> dict[str, SlashCommand]:
    """Builtin commands gated by ``allowed_builtin``; home and project commands are never
    filtered and override builtins by name. Sorted by name. Folders are read through
    ``folders`` (the process's cache of command folders unless a caller passes one)."""
    found: dict[str, SlashCommand] = {
        name: _command(name, fields, body, "builtin")
        for name, fields, body in _command_files(_builtin_root(), warn, folders)
        if name in allowed_builtin
    }
    for source, root in _override_roots(home_dir, cwd):
        for name, fields, body in _command_files(root, warn, folders):
            found[name] = _command(name, fields, body, source)
    return {name: found[name] for name in sorted(found)}
