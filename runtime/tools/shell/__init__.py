"""The sandboxed shell behind the ``bash`` tool."""

from specwire.runtime.tools.shell.sandbox import SandboxUnavailableError, require_sandbox
from specwire.runtime.tools.shell.tool import (
    BASH_DEFAULT_TIMEOUT_MS,
    BASH_MAX_OUTPUT_BYTES,
    BASH_MAX_TIMEOUT_MS,
    BashInput,
    run_bash,
)

__all__ = [
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_MAX_OUTPUT_BYTES",
    "BASH_MAX_TIMEOUT_MS",
    "BashInput",
    "SandboxUnavailableError",
    "require_sandbox",
    "run_bash",
]
