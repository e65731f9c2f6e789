"""The shell's refusals, in a module of their own: a bundle's entry point names them without
importing the sandbox."""

from __future__ import annotations


class SandboxUnavailableError(RuntimeError):
    """The ``bash`` tool is listed but no sandbox can be set up on this machine."""


class EgressUnavailableError(RuntimeError):
    """``network: outbound`` cannot be given for this call (no proxy, or one the shell could
    touch): the command does not run."""
