"""The ``bash`` tool's limits: its description and input model name them without importing
the sandbox."""

from __future__ import annotations

BASH_DEFAULT_TIMEOUT_MS = 30_000
BASH_MAX_TIMEOUT_MS = 600_000
BASH_MAX_OUTPUT_BYTES = 32 * 1024
