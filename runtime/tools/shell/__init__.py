"""The sandboxed shell behind the ``bash`` tool.

Names load on first use (PEP 562): listing the ``bash`` tool, or naming its errors, imports
neither the sandbox nor pydantic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from specwire.runtime.tools.shell.errors import SandboxUnavailableError
from specwire.runtime.tools.shell.limits import (
    BASH_DEFAULT_TIMEOUT_MS,
    BASH_MAX_OUTPUT_BYTES,
    BASH_MAX_TIMEOUT_MS,
)

if TYPE_CHECKING:
    from specwire.runtime.tools.shell.inputs import BashInput
    from specwire.runtime.tools.shell.sandbox import require_sandbox
    from specwire.runtime.tools.shell.tool import run_bash

_HOMES = {
    "BashInput": "specwire.runtime.tools.shell.inputs",
    "require_sandbox": "specwire.runtime.tools.shell.sandbox",
    "run_bash": "specwire.runtime.tools.shell.tool",
}

__all__ = [
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_MAX_OUTPUT_BYTES",
    "BASH_MAX_TIMEOUT_MS",
    "BashInput",
    "SandboxUnavailableError",
    "require_sandbox",
    "run_bash",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
