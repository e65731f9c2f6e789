"""``FocusNote``: reading and writing ``focus.md`` (its format is ``runtime.continuity.focus``).

A ``focus.md`` without the specwire marker was written by a person: it is shown to the agent
read-only (``view``) and every write to it is refused, naming the file. The active-plan mirror in
the file is refreshed from the plan book's active id whenever the store writes the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from specwire.runtime.continuity.focus import (
    FocusDoc,
    UserFocus,
    check_focus_body,
    is_store_owned,
    parse_focus,
    render_focus,
    user_focus,
)
from specwire.runtime.continuity.state_folder import FOCUS_FILE, StateFolder
from specwire.runtime.core.errors import StoreError


class FocusNote:
    def __init__(
        self,
        folder: StateFolder,
        *,
        max_chars: int,
        active_plan_id: Callable[[], str | None],
    ) -> None:
        self._folder = folder
        self.max_chars = max_chars
        self._active_plan_id = active_plan_id

    @property
    def path(self) -> Path:
        return self._folder.path(FOCUS_FILE)

    def read(self) -> FocusDoc | None:
        """The focus document; an empty one when there is no file; None when user-authored."""
        text = self._folder.read(self.path)
        if text is None:
            return FocusDoc()
        return parse_focus(text)

    def view(self) -> FocusDoc | UserFocus:
        """What the agent sees of focus.md: the store's document (empty when there is no file),
        or the text of a file a person wrote, cut to ``max_chars``."""
        text = self._folder.read(self.path)
        if text is None:
            return FocusDoc()
        doc = parse_focus(text)
        return doc if doc is not None else user_focus(text, self.max_chars)

    def is_user_authored(self) -> bool:
        text = self._folder.read(self.path)
        return text is not None and not is_store_owned(text)

    def for_write(self) -> FocusDoc:
        """The document to change (call under the lock); refused when a person wrote the file."""
        text = self._folder.read(self.path)
        if text is None:
            return FocusDoc()
        doc = parse_focus(text)
        if doc is None:
            raise StoreError(
                "refusing to overwrite a user-authored file: "
                f"{self._folder.relative(self.path)} has no <!-- specwire:focus --> marker on its "
                "first line. Edit it by hand, or move it away (MemoryClear {scope: 'focus'}) and "
                "write the focus again."
            )
        return doc

    def save(self, doc: FocusDoc) -> None:
        """Write ``doc`` with a fresh active-plan mirror (call under the lock)."""
        self._folder.write(
            self.path, render_focus(replace(doc, active_plan=self._active_plan_id()))
        )

    def write(self, body: str) -> FocusDoc:
        """Replace the focus body."""
        try:
            clean = check_focus_body(body, self.max_chars)
        except ValueError as exc:
            raise StoreError(str(exc)) from None
        with self._folder.mutation():
            doc = replace(self.for_write(), body=clean)
            self.save(doc)
        return doc

    def refresh_active_mirror(self) -> None:
        """Rewrite the active-plan mirror, only in a store-owned focus.md that exists."""
        text = self._folder.read(self.path)
        doc = parse_focus(text) if text is not None else None
        if doc is not None:
            self.save(doc)
