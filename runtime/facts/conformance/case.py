"""A conformance case, and the catalogues the suite covers.

A case is a function of a target (``target.py``) that returns when the target behaves and
raises otherwise (``AssertionError``, or whatever the provider raised unexpectedly);
``checks.skip`` says it does not apply. ``covers`` names the catalogue entries it checks, so
the runner can show, and a test can check, that every entry has a case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Crewship's edge-case catalogue (``internal/memory/memtest``: ``edge_case_<name>``).
CREWSHIP_EDGE_CASES: dict[str, str] = {
    "empty_recall": "recall over nothing, or over nothing that matches, is empty",
    "oversize_retain": "a write over the limits is refused and stores nothing",
    "provider_timeout": "a hanging backend: health answers in time, reads give up",
    "health_degraded": "a broken backend reports not ok, with a message and no traceback",
    "forget_no_match": "forgetting what is not there removes 0 and is no error",
    "concurrent_retain": "concurrent writes all land, and deduplicated ones once",
    "quarantine_in_recall": "what the injection scanner held is never recalled",
    "unicode_content": "text, tags, subjects and keys round-trip in any script",
    "empty_tier": "a tier with no note reads and searches as empty",
    "workspace_scope_violation": "a request claiming another scope is an error, never a "
    "write elsewhere",
}

# Remem's conformance themes (``docs/provider-interface.md``).
REMEM_THEMES: dict[str, str] = {
    "stable_provenance": "ids, texts, tags and evidence come back the same through every read",
    "scope_filtering": "nothing outside the caller's scopes is returned, read or forgotten",
    "abort_and_timeout": "a recall past its deadline or cancelled gives up, never answers empty",
    "bounded_outputs": "limits, token budgets and catalog sizes are honoured",
    "malformed_data": "malformed requests are refused at the boundary and change nothing",
    "duplicate_ids": "ids are unique, never reused, and a second supersede is refused",
    "content_safe_health": "health, errors and descriptors carry no memory content or credentials",
}

CATALOGUES: dict[str, dict[str, str]] = {
    "crewship": CREWSHIP_EDGE_CASES,
    "remem": REMEM_THEMES,
}


@dataclass(frozen=True)
class Case:
    run: Callable[[Any], None]
    # Catalogue entries it checks, as ``crewship:<edge case>`` or ``remem:<theme>``.
    covers: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.run.__name__

    @property
    def summary(self) -> str:
        """The first line of the case's docstring, or its name in words."""
        doc = (self.run.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else self.name.replace("_", " ")

    def __post_init__(self) -> None:
        for entry in self.covers:
            catalogue, _, item = entry.partition(":")
            if item not in CATALOGUES.get(catalogue, {}):
                raise ValueError(f"{self.name}: {entry!r} is in no catalogue")
