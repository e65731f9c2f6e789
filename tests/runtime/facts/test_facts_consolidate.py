"""``FactStore.consolidate``: duplicates folded into one live fact, nothing deleted."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.model import Provenance
from specwire.runtime.facts.store import FactStore

NOW = datetime(2026, 6, 1, tzinfo=UTC)
DAY_MS = 86_400_000


def _store(tmp_path: Path) -> FactStore:
    return FactStore.open(tmp_path / "facts.sqlite3", now=lambda: NOW)


def test_a_survivor_holding_everything_stays_and_the_duplicates_point_at_it(
    tmp_path: Path,
) -> None:
    with _store(tmp_path) as store:
        keep = store.remember("Deploys go out on Fridays", ["ops"])
        dup = store.remember("deploys go out on fridays", ["ops"])
        target = store.consolidate(keep.id, [dup.id], reason="duplicate")
        assert target.id == keep.id
        status = store.get(dup.id)
        assert status is not None and status.status == "superseded"
        assert status.fact.superseded_by == keep.id
        assert status.tombstone is not None and status.tombstone.reason == "duplicate"
        assert len(store.list_facts()) == 2 and store.size() == 1


def test_tags_and_evidence_the_survivor_lacks_go_to_a_merged_replacement(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        keep = store.remember("Invoices go out monthly", ["billing"])
        dup = store.remember(
            "invoices go out monthly", ["finance"], provenance=Provenance("sess_1", ("tu_1",))
        )
        target = store.consolidate(keep.id, [dup.id])
        assert target.id not in (keep.id, dup.id)
        assert target.text == keep.text
        assert target.tags == ("billing", "finance")
        assert target.provenance.evidence == ("tu_1",)
        for old in (keep.id, dup.id):
            status = store.get(old)
            assert status is not None and status.fact.superseded_by == target.id
        assert [s.status for s in store.list_facts()] == ["superseded", "superseded", "live"]


def test_a_permanent_duplicate_is_never_folded_into_a_fact_that_expires(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        keep = store.remember("The VPN needs MFA", ttl_ms=DAY_MS)
        dup = store.remember("the vpn needs mfa")
        target = store.consolidate(keep.id, [dup.id])
        assert target.id != keep.id and target.expires_at is None
        later = store.remember("Standup is at ten", ttl_ms=DAY_MS)
        longer = store.remember("standup is at ten", ttl_ms=3 * DAY_MS)
        target = store.consolidate(later.id, [longer.id])
        assert target.expires_at == longer.expires_at


def test_a_survivor_that_is_not_live_is_refused(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        gone = store.remember("old")
        dup = store.remember("OLD")
        store.forget_id(gone.id)
        with pytest.raises(StoreError, match="not live"):
            store.consolidate(gone.id, [dup.id])
        status = store.get(dup.id)
        assert status is not None and status.status == "live"


def test_compact_on_a_store_without_a_file_creates_nothing(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        assert store.compact() == 0
    assert not (tmp_path / "facts.sqlite3").exists()
