"""Every case of the suite, in the order the runner runs them, grouped by part."""

from __future__ import annotations

from specwire.runtime.facts.conformance import (
    admin_cases,
    provider_cases,
    scope_cases,
    theme_cases,
    tier_cases,
    update_cases,
)
from specwire.runtime.facts.conformance.case import CATALOGUES, Case

# part name → its cases; a part's name is the prefix of its cases' ids (``provider/forget_by_id``)
PARTS: dict[str, tuple[Case, ...]] = {
    "provider": provider_cases.CASES,
    "themes": theme_cases.CASES,
    "scopes": scope_cases.CASES,
    "tiers": tier_cases.CASES,
    "admin": admin_cases.CASES,
    "updates": update_cases.CASES,
}


def all_cases() -> list[tuple[str, Case]]:
    """``(part/name, case)`` for every case, in run order."""
    return [(f"{part}/{case.name}", case) for part, cases in PARTS.items() for case in cases]


def coverage() -> dict[str, list[str]]:
    """``catalogue:entry`` → the ids of the cases covering it (every entry is listed)."""
    covered: dict[str, list[str]] = {
        f"{catalogue}:{entry}": [] for catalogue, entries in CATALOGUES.items() for entry in entries
    }
    for case_id, case in all_cases():
        for entry in case.covers:
            covered[entry].append(case_id)
    return covered
