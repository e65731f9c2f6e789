"""``HandoffNote``: reading and writing ``handoff.md`` (rendered by ``runtime.continuity.handoff``).

A ``handoff.md`` without the specwire marker was written by a person and is never written over.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from specwire.runtime.continuity.handoff import HandoffView, is_handoff, render_handoff
from specwire.runtime.continuity.state_folder import HANDOFF_FILE, StateFolder
from specwire.runtime.core.errors import StoreError


class HandoffNote:
    def __init__(self, folder: StateFolder) -> None:
        self._folder = folder

    @property
    def path(self) -> Path:
        return self._folder.path(HANDOFF_FILE)

    def write(self, view: Callable[[], HandoffView]) -> Path:
        """Render ``view()`` (taken under the lock) into the note."""
        with self._folder.mutation():
            existing = self._folder.read(self.path)
            if existing is not None and not is_handoff(existing):
                raise StoreError(
                    "refusing to overwrite a user-authored file: "
                    f"{self._folder.relative(self.path)} has no <!-- specwire:handoff --> marker"
                )
            self._folder.write(self.path, render_handoff(view()))
        return self.path

    def read(self) -> str | None:
        """The store-written handoff note, or None (missing or user-authored)."""
        text = self._folder.read(self.path)
        return text if text is not None and is_handoff(text) else None
