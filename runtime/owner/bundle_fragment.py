"""The memory fragment of a generated bundle, read from its ``agent.py`` without running it.

Every generated bundle with memory defines ``MEMORY_FRAGMENT`` as a literal (the compiler's
output); ``ast.literal_eval`` reads it, so an owner's command never executes bundle code.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specwire.runtime.owner.selection import SelectionError
from specwire.runtime.safety.secrets import SecretRef

# The constant a generated ``agent.py`` holds its fragment in (``runtime.hosts.preflight``
# names the same one; the owner layer does not import the hosts).
FRAGMENT_NAME = "MEMORY_FRAGMENT"


def read_bundle_fragment(path: Path) -> Mapping[str, Any]:
    """The fragment literal of ``path`` (an ``agent.py``, or the folder holding one)."""
    for node in _statements(path):
        target = _assigned_name(node)
        if target == FRAGMENT_NAME and isinstance(node, ast.Assign | ast.AnnAssign):
            try:
                value = ast.literal_eval(node.value) if node.value is not None else None
            except ValueError:
                value = None
            if isinstance(value, Mapping):
                return value
            raise SelectionError(f"--bundle {path}: {FRAGMENT_NAME} is not a literal mapping")
    raise SelectionError(f"--bundle {path}: no {FRAGMENT_NAME} (a bundle without memory)")


def _statements(path: Path) -> list[ast.stmt]:
    """The top-level statements of ``path``'s ``agent.py`` (parsed, never run)."""
    agent = path / "agent.py" if path.is_dir() else path
    try:
        return ast.parse(agent.read_text(encoding="utf-8"), filename=str(agent)).body
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise SelectionError(f"--bundle {path}: cannot read a bundle ({exc})") from None


def _assigned_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    elif isinstance(node, ast.AnnAssign):
        target = node.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


# The constant a generated ``agent.py`` names its model in: a literal id, or
# ``SecretRef("VAR")`` for an id read from the environment.
MODEL_NAME = "MODEL"


def read_bundle_model(path: Path) -> str | SecretRef | None:
    """The model ``path``'s bundle names (``MODEL``), read without running it; None when the
    bundle names none this way (a crew's roles each name theirs)."""
    for node in _statements(path):
        if _assigned_name(node) != MODEL_NAME:
            continue
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "SecretRef"
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], ast.Constant)
            and isinstance(value.args[0].value, str)
        ):
            return SecretRef(value.args[0].value)
        return None
    return None
