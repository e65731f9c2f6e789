"""What a tenant's usage ledger holds: the turns' totals (``TenantUsage``, what budgets are
enforced from) and, apart, the scheduled dream's (``DreamUsage``: its model phase's calls,
tokens and cost, spent for the tenant but never counted against its turn budget)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from specwire.runtime.models import Usage

# The dream's cost is kept in millionths of a dollar: integers add up exactly.
MICRO_USD: Final = 1_000_000
# The largest count a ledger holds: PostgreSQL's ``bigint`` (``runtime.usage.database``).
MAX_COUNT: Final = 2**63 - 1
DREAM_FIELDS: Final = ("runs", "calls", "input", "output", "cached", "costMicroUsd")


@dataclass(frozen=True)
class TenantUsage:
    input: int = 0
    output: int = 0
    cached: int = 0
    turns: int = 0
    estimated: int = 0

    def plus(self, usage: Usage, estimated: int = 0) -> TenantUsage:
        return TenantUsage(
            self.input + usage.input,
            self.output + usage.output,
            self.cached + usage.cached,
            self.turns + 1,
            self.estimated + estimated,
        )

    def input_overhead(self) -> int | None:
        """The input tokens a recorded turn spent, on average, beyond its message's estimate
        (instructions, tools, recalled memory, history, tool rounds); None before any turn."""
        if not self.turns:
            return None
        return max(0, -(-(self.input - self.estimated) // self.turns))


@dataclass(frozen=True)
class DreamUsage:
    """The dream's model phases run for a tenant: runs that made at least one call, the calls,
    the tokens the model reported (``input`` includes ``cached``) and their cost at the dream's
    price (``cost_micro_usd``; a call that could not be metered counts as its run's budget)."""

    runs: int = 0
    calls: int = 0
    input: int = 0
    output: int = 0
    cached: int = 0
    cost_micro_usd: int = 0

    @property
    def cost_usd(self) -> float:
        return self.cost_micro_usd / MICRO_USD

    def plus(self, other: DreamUsage) -> DreamUsage:
        return DreamUsage(
            self.runs + other.runs,
            self.calls + other.calls,
            self.input + other.input,
            self.output + other.output,
            self.cached + other.cached,
            self.cost_micro_usd + other.cost_micro_usd,
        )

    def to_json(self) -> dict[str, int]:
        return dict(zip(DREAM_FIELDS, self.values(), strict=True))

    def values(self) -> tuple[int, ...]:
        return (self.runs, self.calls, self.input, self.output, self.cached, self.cost_micro_usd)

    @classmethod
    def from_json(cls, data: Any) -> DreamUsage:
        """The dream's totals as a ledger file holds them; ``ValueError`` when damaged."""
        if not isinstance(data, dict):
            raise ValueError("the dream's totals are not an object")
        values = [data.get(name, 0) for name in DREAM_FIELDS]
        if not all(is_count(value) for value in values):
            raise ValueError("the dream's totals are not counts")
        return cls(*values)


def micro_usd(usd: float) -> int:
    """``usd`` in millionths of a dollar, rounded (never negative)."""
    return max(0, round(usd * MICRO_USD))


def is_count(value: object) -> bool:
    """Whether a ledger value is a count: an int (not a bool) from 0 to ``MAX_COUNT``."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT
