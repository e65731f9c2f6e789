"""``python agent.py --dream``: the bundle's own dream, run now by its owner.

The spec's ``memory.dream`` settings, its memory and its model: the deterministic phase, then,
with ``mode: full``, a ``budget_usd`` and a priced model (``runtime.models.prices``: the spec's
``prices``, then ``SPECWIRE_PRICES_FILE``, then the dated list prices), one bounded session of
the model acting through the memory tools only (``runtime.hosts.dream_session``) that stops at
the budget. The usage and cost land in the run's record (``codegen dream status``) and in the
agent's usage ledger as the dream's kind (``runtime.hosts.dream_ledger``; ``codegen memory
usage``). A window
that already had a run is skipped unless ``--force``.

Exit status as ``codegen dream run``: 0 done (or skipped), 2 the run could not start (one line),
3 a step failed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.fragment_data import FragmentShapeError, read_fragment
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.dream import DreamOutcome, run_dream
from specwire.runtime.dream.model_phase import spec_prices
from specwire.runtime.dream.outcome import model_phase_line
from specwire.runtime.dream.schedule import dream_settings
from specwire.runtime.hosts.dream_ledger import recorded
from specwire.runtime.hosts.dream_session import memory_session
from specwire.runtime.models import Model
from specwire.runtime.models.prices import PriceTableError, price_lookup
from specwire.runtime.wiring import dream_facts, state_volume


def run_bundle_dream(
    fragment: Mapping[str, Any] | None,
    model: Model,
    *,
    spec_name: str,
    cwd: Path,
    force: bool,
    log: Callable[[str], None],
) -> int:
    try:
        parsed = read_fragment(fragment) if fragment is not None else None
    except FragmentShapeError as exc:
        log(f"{spec_name}: --dream: invalid memory fragment: {exc}\n")
        return 2
    dream = parsed.memory.dream if parsed is not None and parsed.memory is not None else None
    if parsed is None or dream is None:
        log(f"{spec_name}: --dream: this spec has no memory.dream\n")
        return 2
    try:
        settings = dream_settings(dream)
        prices = price_lookup(spec_prices(dream.prices))
        layout = StoreLayout.for_cwd(cwd, parsed.spec_name)
        # memory.state: postgres: the dream's record, continuity and wiki are the database's,
        # and memory.backend: postgres: so are the facts it consolidates (no file written).
        volume = state_volume(parsed, layout, None)
        outcome = run_dream(
            layout,
            settings,
            log=log,
            proof_mode=parsed.continuity.proof if parsed.continuity is not None else "ladder",
            model_id=model.model_id,
            price_of=prices,
            force=force,
            # Its spend in the agent's usage ledger, as a managed tenant's scheduled dream's.
            model_session=recorded(
                memory_session(parsed, model, cwd=cwd, log=log), parsed, layout, None, log
            ),
            facts=dream_facts(parsed, None),
            volume=volume,
        )
    except (PriceTableError, StoreError, MemoryServiceError, OSError, ValueError) as exc:
        log(f"{spec_name}: --dream: {exc}\n")
        return 2
    sys.stdout.write(outcome_text(outcome))
    return 3 if outcome.status == "partial" else 0


def outcome_text(outcome: DreamOutcome) -> str:
    """The run in a few lines: status, then the model phase and what it used."""
    lines = [f"dream {outcome.spec}: {outcome.status} (window {outcome.window_key})"]
    if outcome.note:
        lines.append(f"  {outcome.note}")
        return "\n".join(lines) + "\n"
    lines.append(f"model phase: {model_phase_line(asdict(outcome.model))}")
    lines += [f"error: {error}" for error in outcome.errors]
    return "\n".join(lines) + "\n"
