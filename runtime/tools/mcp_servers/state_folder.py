"""Whether a word names a path inside the workspace's state folder (``.specwire/``).

A stdio server runs in the workspace with the user's rights, so it could read the facts,
sessions and keys kept there. Its command line may not name the folder, and a call whose
arguments name a path inside it (after ``..`` and symlinks are resolved) is refused before it
is sent. This is a fence on what the model asks for; the process itself is confined by the
sandbox (``confinement.py``: the folder is masked). A server the spec marks ``sandbox: false``
has only this fence: walking the workspace on its own (a directory tree of ``.``) it still sees
the folder's names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from specwire.runtime.core.paths import SPECWIRE_DIRNAME

# Longest string read as a path (longer ones are text, not a file name).
_MAX_PATH_CHARS = 4096


def names_state_folder(words: Iterable[str], workspace: Path) -> bool:
    state = (workspace / SPECWIRE_DIRNAME).resolve()
    for word in words:
        for part in word.removeprefix("file://").split("="):
            if not part or len(part) > _MAX_PATH_CHARS or "\x00" in part:
                continue
            candidate = Path(part) if os.path.isabs(part) else workspace / part
            try:
                if candidate.resolve().is_relative_to(state):
                    return True
            except (OSError, ValueError, RuntimeError):
                continue
    return False


def strings_in(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string in a JSON value (keys too), at most 64 levels deep."""
    if depth > 64:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item, depth + 1)
