"""FactStore: writes, TTL, supersede, forget, sweep, persistence, failure atomicity, schema."""

from __future__ import annotations

import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from facts_support import DAY_MS, START, FakeClock

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.facts.model import InvalidRequestError, Provenance, Tombstone
from specwire.runtime.facts.sql.schema import SCHEMA_VERSION, migrate
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.text import MAX_QUERY_TERMS


def raw(path: Path) -> sqlite3.Connection:
    """A plain second connection, to look at (or tamper with) what the store wrote."""
    return sqlite3.connect(str(path), isolation_level=None)


def statuses(store: FactStore) -> dict[str, str]:
    return {entry.fact.text: entry.status for entry in store.list_facts()}


# -- opening ---------------------------------------------------------------------------------


def test_open_creates_the_directory_lazily_and_a_private_wal_database(db_path: Path) -> None:
    assert not db_path.parent.exists()
    with FactStore.open(db_path) as store:
        store.remember("first fact")
        assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
        for sidecar in ("-wal", "-shm"):
            side = db_path.with_name(db_path.name + sidecar)
            assert stat.S_IMODE(side.stat().st_mode) == 0o600, sidecar
        assert store.schema_version == SCHEMA_VERSION == 6
    conn = raw(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_open_fails_cleanly_when_the_directory_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "facts"
    blocker.write_text("a file where the directory should be")
    with pytest.raises(StoreError, match="cannot create the fact store"):
        FactStore.open(blocker / "spec.sqlite3")


def test_a_newer_schema_is_refused(db_path: Path) -> None:
    with FactStore.open(db_path) as store:
        store.remember("written at the current version")
    raw(db_path).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer than this runtime supports"):
        FactStore.open(db_path)


def test_migration_hook_runs_missing_steps_and_stamps_the_version(db_path: Path) -> None:
    with FactStore.open(db_path) as store:
        store.remember("written at the current version")
    conn = raw(db_path)

    def add_pinned(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE pinned (id TEXT PRIMARY KEY REFERENCES facts(id))")

    after = SCHEMA_VERSION + 1
    before = migrate(conn, {after: add_pinned}, target=after)
    assert before == SCHEMA_VERSION
    assert conn.execute("PRAGMA user_version").fetchone()[0] == after
    assert conn.execute("SELECT count(*) FROM pinned").fetchone()[0] == 0


def test_a_failing_migration_step_leaves_the_old_version_intact(db_path: Path) -> None:
    with FactStore.open(db_path) as store:
        store.remember("keep me")
    conn = raw(db_path)

    def broken(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half_done (x)")
        c.execute("THIS IS NOT SQL")

    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, {SCHEMA_VERSION + 1: broken}, target=SCHEMA_VERSION + 1)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables
    with FactStore.open(db_path) as store:
        assert [f.fact.text for f in store.list_facts()] == ["keep me"]


# -- remember / get ----------------------------------------------------------------------------


def test_remember_records_text_tags_time_and_provenance(store: FactStore) -> None:
    fact = store.remember(
        "  Deploys go out on Tuesdays  ",
        ["ops", "ops", " release "],
        provenance=Provenance("sess_0123456789abcdef", ("tu_a", "tu_b", "tu_a")),
    )
    assert MEMORY_ID_RE.match(fact.id)
    assert fact.text == "Deploys go out on Tuesdays"
    assert fact.tags == ("ops", "release")
    assert fact.created_at == START and fact.expires_at is None
    assert fact.provenance == Provenance("sess_0123456789abcdef", ("tu_a", "tu_b"))
    got = store.get(fact.id)
    assert got is not None and got.status == "live" and got.fact == fact
    assert store.get("mem_0000000000000000") is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": ""}, "non-empty text"),
        ({"text": " \n\t "}, "non-empty text"),
        ({"text": "x" * 2001}, "too long"),
        ({"text": "ok", "ttl_ms": 0}, "ttl_ms"),
        ({"text": "ok", "ttl_ms": -5}, "ttl_ms"),
        ({"text": "ok", "tags": [""]}, "non-empty string"),
        ({"text": "ok", "tags": [f"t{i}" for i in range(9)]}, "too many tags"),
        ({"text": "ok", "tags": "ops"}, "list of strings"),
        ({"text": "ok", "provenance": Provenance(None, ("",))}, "tool-use ids"),
    ],
)
def test_remember_refuses_malformed_input(
    store: FactStore, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidRequestError, match=message) as caught:
        store.remember(**kwargs)  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError)
    assert store.list_facts() == []


# -- TTL and sweep ---------------------------------------------------------------------------


def test_a_fact_expires_exactly_when_now_reaches_expires_at(
    store: FactStore, clock: FakeClock
) -> None:
    fact = store.remember("short-lived promo code SUMMER", ttl_ms=1000)
    assert fact.expires_at is not None
    assert (fact.expires_at - fact.created_at).total_seconds() == 1.0
    clock.advance(milliseconds=999)
    assert [h.fact.id for h in store.recall("promo code")] == [fact.id]
    assert store.size() == 1
    clock.advance(milliseconds=1)
    assert store.recall("promo code") == []
    assert store.size() == 0
    got = store.get(fact.id)
    assert got is not None and got.status == "expired" and got.tombstone is None  # not swept
    assert store.sweep().swept == 1
    swept = store.get(fact.id)
    assert swept is not None and swept.tombstone == Tombstone("expired", clock.moment)


def test_sweep_tombstones_each_expired_fact_once(
    store: FactStore, clock: FakeClock, db_path: Path
) -> None:
    store.remember("expires soon", ttl_ms=DAY_MS)
    forgotten = store.remember("forgotten before it expires", ttl_ms=DAY_MS)
    store.forget(forgotten.id)
    store.remember("stays")
    assert store.sweep().swept == 0
    clock.advance(days=2)
    first = store.sweep()
    assert (first.swept, first.live) == (1, 1)
    second = store.sweep()
    assert (second.swept, second.live) == (0, 1)
    rows = raw(db_path).execute("SELECT kind, count(*) FROM tombstones GROUP BY kind").fetchall()
    assert dict(rows) == {"expired": 1, "forgotten": 1}
    assert statuses(store) == {
        "expires soon": "expired",
        "forgotten before it expires": "forgotten",
        "stays": "live",
    }


def test_an_expired_tombstone_is_authoritative_even_if_the_clock_goes_back(
    store: FactStore, clock: FakeClock
) -> None:
    fact = store.remember("ephemeral", ttl_ms=10)
    clock.advance(milliseconds=10)
    assert store.sweep().swept == 1
    clock.advance(milliseconds=-10)
    got = store.get(fact.id)
    assert got is not None and got.status == "expired"
    assert store.recall("ephemeral") == []


# -- supersede -------------------------------------------------------------------------------


def test_supersede_writes_a_replacement_and_a_tombstone(
    store: FactStore, clock: FakeClock, db_path: Path
) -> None:
    old = store.remember("customer plan is Pro", ["billing"])
    clock.advance(minutes=5)
    new = store.supersede(
        old.id, "customer plan is Enterprise", ["billing"], reason="upgraded in July"
    )
    assert new.id != old.id and new.created_at == START.replace(minute=5)
    old_status = store.get(old.id)
    assert old_status is not None and old_status.status == "superseded"
    assert old_status.fact.superseded_by == new.id
    assert old_status.fact.text == "customer plan is Pro"  # the row stays
    assert old_status.tombstone == Tombstone(
        "superseded", START.replace(minute=5), "upgraded in July", new.id
    )
    assert [h.fact.id for h in store.recall("customer plan")] == [new.id]
    tomb = raw(db_path).execute("SELECT kind, target, reason, superseded_by FROM tombstones")
    assert tomb.fetchall() == [("superseded", old.id, "upgraded in July", new.id)]


def test_supersede_refuses_a_fact_that_is_not_live(store: FactStore, clock: FakeClock) -> None:
    old = store.remember("v1")
    store.supersede(old.id, "v2")
    with pytest.raises(StoreError, match=f"cannot supersede {old.id}: it is superseded"):
        store.supersede(old.id, "v3")
    gone = store.remember("to forget")
    store.forget(gone.id)
    with pytest.raises(StoreError, match="it is forgotten"):
        store.supersede(gone.id, "again")
    short = store.remember("brief", ttl_ms=5)
    clock.advance(milliseconds=5)
    with pytest.raises(StoreError, match="it is expired"):
        store.supersede(short.id, "later")
    with pytest.raises(StoreError, match="no memory with id mem_0000000000000000"):
        store.supersede("mem_0000000000000000", "x")
    with pytest.raises(InvalidRequestError, match="not a memory id"):
        store.supersede("v1", "x")
    assert [f.fact.text for f in store.list_facts()] == ["v1", "v2", "to forget", "brief"]


# -- forget ----------------------------------------------------------------------------------


def test_forget_by_id_forgets_only_that_id(store: FactStore, db_path: Path) -> None:
    target = store.remember("the office wifi password rotates monthly")
    twin = store.remember("the office wifi password rotates monthly")
    other = store.remember("office wifi is on floor two")
    forgotten = store.forget(target.id, reason="asked to")
    assert [f.id for f in forgotten] == [target.id]
    by_id = {e.fact.id: e.status for e in store.list_facts()}
    assert by_id == {target.id: "forgotten", twin.id: "live", other.id: "live"}
    got = store.get(target.id)
    assert got is not None and got.tombstone == Tombstone("forgotten", START, "asked to")
    assert store.forget(target.id) == []  # already gone: nothing, no error
    rows = raw(db_path).execute("SELECT kind, target, reason FROM tombstones").fetchall()
    assert rows == [("forgotten", target.id, "asked to")]


def test_an_id_shaped_argument_never_falls_back_to_text(store: FactStore) -> None:
    mention = store.remember("ticket mem_0123456789abcdef was escalated")
    assert store.forget("mem_0123456789abcdef") == []
    assert store.forget("  mem_0123456789abcdef  ") == []
    got = store.get(mention.id)
    assert got is not None and got.status == "live"


def test_forget_by_query_forgets_the_whole_live_match_set(store: FactStore) -> None:
    a = store.remember("customer plan is Enterprise")
    b = store.remember("customer prefers email")
    c = store.remember("deploys happen on Tuesday")
    forgotten = store.forget("the customer")
    assert {f.id for f in forgotten} == {a.id, b.id}
    assert store.size() == 1 and store.recall("customer") == []
    assert store.forget("what is the") == []  # only stop words: nothing
    assert store.forget("") == []
    got = store.get(c.id)
    assert got is not None and got.status == "live"


def test_forget_by_query_needs_every_word_to_match(store: FactStore) -> None:
    billing = store.remember("the customer's billing plan is Enterprise")
    project = store.remember("our project plan is due Friday")
    forgotten = store.forget("billing plan")
    assert [f.id for f in forgotten] == [billing.id]
    got = store.get(project.id)
    assert got is not None and got.status == "live"
    # Stop words do not count as words that must match; word order does not matter.
    assert store.forget("the plan for Monday") == []  # "monday" is in no memory
    assert store.forget("what is the Friday plan?") == [project]
    # Recall stays OR: one shared word is enough to be found.
    store.remember("the plan is approved")
    assert [h.fact.text for h in store.recall("billing plan")] == ["the plan is approved"]


def test_forget_by_query_refuses_more_words_than_it_can_require(store: FactStore) -> None:
    kept = store.remember("alpha beta")
    words = " ".join(f"w{i}" for i in range(MAX_QUERY_TERMS + 1))
    with pytest.raises(InvalidRequestError, match="too many distinct words"):
        store.forget(f"alpha beta {words}")
    assert store.size() == 1 and store.get(kept.id) is not None


def test_facts_and_tombstones_can_never_be_deleted_or_edited(
    store: FactStore, db_path: Path
) -> None:
    fact = store.remember("permanent record")
    store.forget(fact.id)
    conn = raw(db_path)
    for statement in (
        "DELETE FROM facts",
        "UPDATE facts SET text = 'rewritten'",
        "DELETE FROM tombstones",
        "UPDATE tombstones SET kind = 'expired'",
    ):
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(statement)
    assert [e.fact.text for e in store.list_facts()] == ["permanent record"]


# -- find_same_text / remember_if_new ----------------------------------------------------------


def test_find_same_text_matches_normalized_text_among_live_facts(store: FactStore) -> None:
    fact = store.remember("The Customer  plan is\nEnterprise")
    assert store.find_same_text("the customer plan is enterprise") == fact
    assert store.find_same_text("the customer plan is enterprise.") is None
    assert store.find_same_text("   ") is None
    store.forget(fact.id)
    assert store.find_same_text("the customer plan is enterprise") is None


def test_remember_if_new_returns_the_existing_fact(store: FactStore) -> None:
    first, created = store.remember_if_new("Standup is at 9:30")
    assert created
    again, created_again = store.remember_if_new("standup IS at 9:30", ["dup"])
    assert (again, created_again) == (first, False)
    assert store.size() == 1


# -- persistence and failures ---------------------------------------------------------------


def test_everything_survives_a_reopen(db_path: Path, clock: FakeClock) -> None:
    with FactStore.open(db_path, now=clock) as store:
        kept = store.remember("kept", ["a"], ttl_ms=DAY_MS, provenance=Provenance("s1", ("tu_1",)))
        old = store.remember("old")
        store.supersede(old.id, "new")
        store.forget(store.remember("dropped").id)
        before = store.list_facts()
    with FactStore.open(db_path, now=clock) as store:
        assert store.list_facts() == before
        assert [h.fact for h in store.recall("kept")] == [kept]
        assert store.size() == 2


def test_a_failed_supersede_leaves_previous_data_intact(store: FactStore, db_path: Path) -> None:
    old = store.remember("customer plan is Pro")
    raw(db_path).execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON tombstones "
        "BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
    )
    with pytest.raises(StoreError, match="cannot supersede: disk says no"):
        store.supersede(old.id, "customer plan is Enterprise")
    [entry] = store.list_facts()  # the replacement insert was rolled back with the rest
    assert entry.fact == old and entry.status == "live"
    assert [h.fact.id for h in store.recall("customer plan")] == [old.id]
    assert store.remember("the store still works").text == "the store still works"


def test_a_forget_that_fails_midway_forgets_nothing(store: FactStore, db_path: Path) -> None:
    first = store.remember("alpha project deadline")
    second = store.remember("alpha project budget")
    raw(db_path).execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON tombstones WHEN new.target = "
        f"'{second.id}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(StoreError, match="refused"):
        store.forget("alpha project")
    assert {e.fact.id: e.status for e in store.list_facts()} == {
        first.id: "live",
        second.id: "live",
    }
    assert len(store.recall("alpha")) == 2  # the FTS index was rolled back too


def test_a_closed_store_refuses_work_and_keeps_its_data(db_path: Path) -> None:
    store = FactStore.open(db_path)
    store.remember("before close")
    store.close()
    store.close()  # idempotent
    assert store.closed
    for call in (
        lambda: store.remember("after close"),
        lambda: store.recall("before"),
        lambda: store.forget("before"),
        store.size,
    ):
        with pytest.raises(StoreError, match="closed"):
            call()
    with FactStore.open(db_path) as reopened:
        assert [e.fact.text for e in reopened.list_facts()] == ["before close"]


def test_writes_into_a_removed_file_are_refused_not_silently_lost(db_path: Path) -> None:
    with FactStore.open(db_path) as store:
        store.remember("written before removal")
        shutil.rmtree(db_path.parent)
        with pytest.raises(StoreError, match="removed while open"):
            store.remember("would vanish")


@pytest.mark.parametrize("text", ["a\x00b", "\x00ab", "lone \ud800 surrogate"])
def test_the_store_refuses_text_it_cannot_store_whoever_calls(tmp_path: Path, text: str) -> None:
    from specwire.runtime.core.errors import StoreError
    from specwire.runtime.facts.store import FactStore

    store = FactStore.open(tmp_path / "facts.sqlite3")
    try:
        with pytest.raises(StoreError):
            store.remember(text)
        assert store.size() == 0
    finally:
        store.close()
