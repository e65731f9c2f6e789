"""Errors the runtime raises at wiring time and at its boundaries."""

from __future__ import annotations


class MemoryServiceError(Exception):
    """Wiring failed fast: a bad fragment, a missing dependency, an unknown backend."""


class TenancyError(MemoryServiceError):
    """A path escaped its tenant's root. Always fail closed."""


class StoreError(Exception):
    """A store refused an operation; the message is safe to show to the model."""


class LockTimeoutError(StoreError):
    """Another process holds a store lock past the wait budget."""
