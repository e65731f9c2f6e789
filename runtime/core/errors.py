"""Errors the runtime raises at wiring time and at its boundaries."""

from __future__ import annotations


class MemoryServiceError(Exception):
    """Wiring failed fast: a bad fragment, a missing dependency, an unknown backend."""


class TenancyError(MemoryServiceError):
    """A path escaped its tenant's root. Always fail closed."""


class StoreError(Exception):
    """A store refused an operation; the message is safe to show to the model."""


class RecallUnavailableError(StoreError):
    """Auto-recall failed before a turn: the turn is not answered (an agent answering with
    silently empty memory would contradict what it was told before)."""


class LockTimeoutError(StoreError):
    """Another process holds a store lock past the wait budget."""


class UnsafeFileError(StoreError):
    """A path that is not a plain file where one is expected (a FIFO, a device, a socket, a
    directory) or that is reached through a symbolic link where none may be followed. Refused
    at once, never opened for I/O, so it cannot hang or redirect the caller."""

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(f"{label} {reason}")
        self.label = label
        self.reason = reason  # "is a FIFO (named pipe), not a regular file; …"


class ServeConfigError(Exception):
    """A bundle cannot serve as configured (no channel to serve, no tenant key, a port in use)."""
