"""``specwire-memory-server``, the console script: the memory server when the ``serve`` extra is
installed, else one line saying what to install (the server imports starlette as it loads, so a
base install raised a ModuleNotFoundError traceback). Imports nothing but the standard library
before that check."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

# What ``specwire-memory-server`` needs beyond the base install (the ``serve`` extra's).
NEEDS = ("starlette", "uvicorn")


def main(argv: Sequence[str] | None = None) -> int:
    missing = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        sys.stderr.write(
            f"specwire-memory-server needs {', '.join(missing)}: pip install 'specwire[serve]'\n"
        )
        return 2
    from specwire.runtime.hosts.http.memory_server import main as serve

    return serve(argv)
