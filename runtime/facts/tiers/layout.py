"""The seven tiers: their byte caps, their keys and the tier-relative labels notes go by.

A note's label is what Crewship calls its source (``AGENT.md``, ``daily/2026-05-21.md``,
``peers/ana.md``): it is the note's key in the fact store, and never a path on disk. Keys are
checked here, at the boundary, whoever the caller: a key holding ``/``, ``\\`` or ``..`` is
refused (so a label always has the shape of its tier), a ``daily`` key is a calendar date and a
``peers`` key a short slug.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Final, Literal

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.model import TIERS

TierName = Literal["AGENT", "CREW", "PERSONA", "pins", "daily", "peers", "lessons"]
KeyKind = Literal["date", "slug"]

# A write that leaves a note at this share of its cap or more succeeds with a warning.
SOFT_CAP_RATIO: Final = 0.8
# ``memory_search`` returns at most this many hits (Crewship's ``maxSearchLimit``).
MAX_SEARCH_LIMIT: Final = 20
DEFAULT_SEARCH_LIMIT: Final = 10
# A search hit's snippet is at most this many characters (the point read gives the whole note).
MAX_SNIPPET_CHARS: Final = 500
MAX_SLUG_CHARS: Final = 64

_SLUG_RE = re.compile(r"^[^\W_][\w.-]*$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class TierError(StoreError):
    """A tier request that breaks the rules of its tier (the message is safe to show)."""


@dataclass(frozen=True)
class TierSpec:
    name: TierName
    # None: uncapped (``lessons``); every note still stays under MAX_KEYED_TEXT_BYTES.
    cap_bytes: int | None
    # What the key names: a date (``daily``), a person's slug (``peers``), or nothing.
    key: KeyKind | None = None
    # Only a crew has it (its notes live in the crew's scope key).
    crew_only: bool = False
    # The model may write it through the tools (``lessons`` is read-only there).
    writable: bool = True

    def soft_cap_bytes(self) -> int | None:
        return None if self.cap_bytes is None else int(self.cap_bytes * SOFT_CAP_RATIO)


TIER_SPECS: Final[dict[str, TierSpec]] = {
    "AGENT": TierSpec("AGENT", 4000),
    "CREW": TierSpec("CREW", 4000, crew_only=True),
    "PERSONA": TierSpec("PERSONA", 1500),
    "pins": TierSpec("pins", 8000),
    "daily": TierSpec("daily", 30000, key="date"),
    "peers": TierSpec("peers", 1500, key="slug"),
    "lessons": TierSpec("lessons", None, writable=False),
}
assert tuple(TIER_SPECS) == TIERS  # the contract's list, in the same order

WRITABLE_TIERS: Final[tuple[str, ...]] = tuple(
    name for name, spec in TIER_SPECS.items() if spec.writable
)


def tier_spec(tier: str) -> TierSpec:
    spec = TIER_SPECS.get(tier)
    if spec is None:
        raise TierError(f"unknown memory tier {tier!r} (one of {', '.join(TIERS)})")
    return spec


def check_key_text(key: str) -> str:
    """The rule every key obeys, whatever its tier: no path separators, no ``..``."""
    if "/" in key or "\\" in key or ".." in key:
        raise TierError("a memory key must not contain '/', '\\' or '..'")
    return key


def note_key(tier: str, key: str | None, today: date) -> str | None:
    """The checked key of a note of ``tier``: a date for ``daily`` (today when omitted), a slug
    for ``peers`` (required), None for the other tiers (a key given to them is checked and
    ignored, as Crewship does)."""
    spec = tier_spec(tier)
    if key is not None:
        check_key_text(key)
    if spec.key == "date":
        return today.isoformat() if key is None or not key.strip() else _date_key(key.strip())
    if spec.key == "slug":
        if key is None or not key.strip():
            raise TierError("a peers note needs a key: the person's slug (e.g. ana-lopez)")
        return _slug_key(key.strip())
    return None


def _date_key(key: str) -> str:
    if not _DATE_RE.fullmatch(key):
        raise TierError(f"a daily note's key is a date, YYYY-MM-DD (got {key!r})")
    try:
        date.fromisoformat(key)
    except ValueError:
        raise TierError(f"a daily note's key is a date, YYYY-MM-DD (got {key!r})") from None
    return key


def _slug_key(key: str) -> str:
    if len(key) > MAX_SLUG_CHARS or not _SLUG_RE.fullmatch(key):
        raise TierError(
            f"a peers key is a slug of 1-{MAX_SLUG_CHARS} letters, digits, '-', '_' or '.', "
            f"starting with a letter or digit (got {key!r})"
        )
    return key


def label(tier: str, key: str | None) -> str:
    """The note's tier-relative label: ``AGENT.md``, ``daily/<date>.md``, ``peers/<slug>.md``."""
    spec = tier_spec(tier)
    if spec.key is None:
        return f"{tier}.md"
    if key is None:
        raise TierError(f"a {tier} note needs a key")
    return f"{tier}/{key}.md"


def split_label(text: str) -> tuple[str, str | None] | None:
    """``(tier, key)`` of a tier label, or None when ``text`` is not one."""
    if not text.endswith(".md"):
        return None
    stem = text[: -len(".md")]
    tier, slash, key = stem.partition("/")
    spec = TIER_SPECS.get(tier)
    if spec is None or (spec.key is None) == bool(slash):
        return None
    if spec.key is None:
        return tier, None
    try:
        checked = _date_key(key) if spec.key == "date" else _slug_key(check_key_text(key))
    except TierError:
        return None
    return tier, checked


def is_tier_label(key: str) -> bool:
    """Whether a fact key has the shape of a tier label (a plain keyed fact must not take one:
    ``Remember(key="lessons.md")`` would otherwise reach a tier the tools keep read-only)."""
    return split_label(key) is not None


def today_of(moment: datetime) -> date:
    """The calendar date a ``daily`` note is kept under: the clock's UTC date."""
    return moment.astimezone(UTC).date()
