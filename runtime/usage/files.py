"""A usage ledger on files: ``<tenant root>/usage/<spec>.json``.

``{"input", "output", "cached", "turns", "estimated"}`` are the turns' totals; ``"dream"``
(added with the dream's kind, absent before a dream ran) holds ``DreamUsage``'s. A file that
cannot be read or parsed is an error naming it, never zeros: a budget is not enforced from a
ledger nobody can read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.core.tenancy import assert_inside
from specwire.runtime.usage.totals import DreamUsage, TenantUsage, is_count

USAGE_DIRNAME: Final = "usage"
TURN_FIELDS: Final = ("input", "output", "cached", "turns")
# Added later: a ledger written before it counts as having estimated nothing.
OPTIONAL_FIELDS: Final = ("estimated",)
DREAM_KEY: Final = "dream"


def ledger_path(tenant_root: Path, spec_name: str) -> Path:
    return assert_inside(
        tenant_root / USAGE_DIRNAME / f"{storage_name(spec_name)}.json", tenant_root
    )


def read_ledger(path: Path) -> tuple[TenantUsage, DreamUsage]:
    """The turns' and the dream's totals in the ledger at ``path`` (zeros when there is none
    yet); ``StoreError`` when it cannot be read or is damaged."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return TenantUsage(), DreamUsage()
    except OSError as exc:
        raise StoreError(f"the usage ledger {path} cannot be read: {exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
        values = [data[name] for name in TURN_FIELDS]
        values += [data.get(name, 0) for name in OPTIONAL_FIELDS]
        dream = DreamUsage.from_json(data.get(DREAM_KEY, {}))
    except (ValueError, KeyError, TypeError, AttributeError):
        values, dream = [], DreamUsage()
    if not values or not all(is_count(value) for value in values):
        raise StoreError(
            f"the usage ledger {path} is damaged; the tenant's budget cannot be "
            "enforced until it is fixed or removed"
        )
    return TenantUsage(*values), dream


def ledger_bytes(turns: TenantUsage, dream: DreamUsage) -> bytes:
    """The ledger file's text (the dream's totals only once a dream was recorded: a ledger of
    turns alone keeps its bytes)."""
    payload: dict[str, object] = {
        name: getattr(turns, name) for name in TURN_FIELDS + OPTIONAL_FIELDS
    }
    if dream != DreamUsage():
        payload[DREAM_KEY] = dream.to_json()
    return (json.dumps(payload) + "\n").encode()
