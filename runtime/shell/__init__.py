"""The sandboxed shell behind the ``bash`` tool."""

from runtime.shell.tool import (
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
    "run_bash",
]
