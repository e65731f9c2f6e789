"""The entry point every generated bundle runs under: failures become one clear line.

A bundle wires memory and opens its session log before its host starts, so a read-only
directory, a corrupt fact store, a fragment the runtime refuses or a missing secret surface
here. They are the user's to fix, not bugs: print ``<spec>: <what went wrong>`` on stderr and
exit with status 2, never a traceback. ``SPECWIRE_DEBUG=1`` lets the traceback through.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from specwire.runtime.core.errors import MemoryServiceError, ServeConfigError, StoreError
from specwire.runtime.hosts.console import stderr_log
from specwire.runtime.models.errors import ModelError
from specwire.runtime.safety.secrets import MissingSecretError
from specwire.runtime.tools.mcp_servers.errors import McpServerError
from specwire.runtime.tools.shell import SandboxUnavailableError

STARTUP_FAILURES: tuple[type[BaseException], ...] = (
    MemoryServiceError,
    ServeConfigError,
    StoreError,
    MissingSecretError,
    ModelError,
    SandboxUnavailableError,
    McpServerError,
    OSError,
)


def startup_failures() -> tuple[type[BaseException], ...]:
    """``STARTUP_FAILURES`` and ``sqlite3.Error``, once something imported ``sqlite3`` (nothing
    else raises it): a bundle without a fact store never imports it."""
    sqlite3 = sys.modules.get("sqlite3")
    return STARTUP_FAILURES if sqlite3 is None else (*STARTUP_FAILURES, sqlite3.Error)


def run_bundle(spec_name: str, main: Callable[[], int]) -> int:
    try:
        return main()
    except KeyboardInterrupt:
        stderr_log("\ninterrupted\n")
        return 130
    except Exception as exc:
        if not isinstance(exc, startup_failures()) or os.environ.get("SPECWIRE_DEBUG") == "1":
            raise
        stderr_log(f"{spec_name}: {_describe(exc)}\n")
        return 2


def _describe(exc: BaseException) -> str:
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.DatabaseError):
        return (
            f"the fact store cannot be read ({exc}); move the damaged file under .specwire/facts/ "
            "aside to start a new one — nothing was changed"
        )
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror or exc}: {exc.filename}"
    return str(exc) or type(exc).__name__
