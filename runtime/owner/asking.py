"""Asking the owner before memory changes: a preview, then yes or no (``--yes`` skips it)."""

from __future__ import annotations

import sys


class Declined(Exception):
    """The owner said no (or could not be asked): nothing was changed."""


def confirm(preview: str, *, assume_yes: bool) -> None:
    # The preview goes to stderr: stdout carries the verb's result (JSON with --json).
    sys.stderr.write(preview.rstrip("\n") + "\n")
    if assume_yes:
        return
    if not sys.stdin.isatty():
        raise Declined("not changed: pass --yes to confirm without a terminal")
    sys.stderr.write("Proceed? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise Declined("not changed")
