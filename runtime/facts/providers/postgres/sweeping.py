"""Expired facts swept on PostgreSQL on a schedule, as the file store sweeps
(``runtime.facts.sweeping``): at wiring time, at most once an interval per binding (tenant,
spec, session), in a background thread, so no turn waits for it.

Workers share no disk, so the "last swept" stamp is a row of ``sweeps``: a worker claims a due
sweep by moving its binding's ``swept_at`` forward in one statement (``... WHERE swept_at <=
now - interval``), so of several workers wired at once exactly one sweeps. A sweep tombstones
the expired facts (``PostgresFactProvider.sweep``); the BM25 statistics follow the tombstones
in the same transaction (``term_stats``). A failed sweep is logged and retried at a later
wiring once the interval has passed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from specwire.runtime.facts.providers.postgres import forgetting, term_stats
from specwire.runtime.facts.providers.postgres.binding import Binding
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.sweeping import SWEEP_INTERVAL_S

_running: set[tuple[int, Any]] = set()
_running_lock = threading.Lock()


def sweep_if_due(
    provider: Any, log: Callable[[str], None], *, interval_s: float = SWEEP_INTERVAL_S
) -> threading.Thread | None:
    """Start a background sweep of ``provider``'s binding (a ``PostgresFactProvider``; any
    other provider is left alone); the thread (for tests to join), or None when this process
    already sweeps that binding."""
    from specwire.runtime.facts.providers.postgres.provider import PostgresFactProvider

    if not isinstance(provider, PostgresFactProvider):
        return None
    key = (id(provider.pool), provider.scope)
    with _running_lock:
        if key in _running:
            return None
        _running.add(key)
    thread = threading.Thread(
        target=_sweep,
        args=(provider, key, int(interval_s * 1000), log),
        name="specwire-pg-sweep",
        daemon=True,
    )
    thread.start()
    return thread


def _sweep(
    provider: Any, key: tuple[int, Any], interval_ms: int, log: Callable[[str], None]
) -> None:
    try:
        if provider.claim_sweep(interval_ms):
            swept = provider.sweep()
            if swept:
                log(f"[memory] swept {swept} expired fact(s)\n")
    except Exception as exc:  # retried at a later wiring; never fatal
        log(f"[memory] the expired-fact sweep failed ({exc}); it will be retried\n")
    finally:
        with _running_lock:
            _running.discard(key)


def claim(db: Binding, interval_ms: int) -> bool:
    """Claim this binding's scheduled sweep: True when the last one (by any process) is at
    least ``interval_ms`` old, and it is now stamped as done (``postgres.sweeping``)."""
    with db.transaction("schedule a sweep") as conn:
        row = conn.execute(
            """INSERT INTO sweeps AS s (tenant, spec, session, swept_at)
            VALUES (%(tenant)s, %(spec)s, %(session)s, %(now)s)
            ON CONFLICT (tenant, spec, session) DO UPDATE SET swept_at = EXCLUDED.swept_at
            WHERE s.swept_at <= EXCLUDED.swept_at - %(interval)s
            RETURNING 1""",
            {**db.params(db.now_ms()), "interval": interval_ms},
        ).fetchone()
        return row is not None


def sweep(db: Binding) -> int:
    """Tombstone this scope's expired facts that have none yet; returns how many."""
    with db.transaction("sweep") as conn:
        params = db.params(db.now_ms())
        term_stats.lock_binding(conn, params)
        rows = conn.execute(
            f"""SELECT f.id FROM facts f WHERE {_SCOPE} AND f.superseded_by IS NULL
            AND f.expires_at IS NOT NULL AND f.expires_at <= %(now)s ORDER BY f.seq""",
            params,
        ).fetchall()
        return len(forgetting.tombstone(conn, [row[0] for row in rows], "expired", None, params))
