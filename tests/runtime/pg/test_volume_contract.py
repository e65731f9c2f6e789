"""The ``DocumentVolume`` contract, on files (fast layer) and on PostgreSQL (postgres layer):
the same calls give the same answers, and a mutation under ``locked`` loses no update when two
writers race."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.core.errors import LockTimeoutError  # noqa: E402
from specwire.runtime.core.volume import DocumentVolume  # noqa: E402
from specwire.runtime.fs.volume import FileVolume  # noqa: E402


@pytest.fixture(
    params=["files", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def volumes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A factory of volumes on one store: each call is another worker's view of it."""
    root = tmp_path / ".specwire"
    if request.param == "files":
        yield lambda: FileVolume(root)
        return
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.pg.volume import PostgresVolume

    uri = PostgresServerForTests.fresh_database()
    pool = open_pool(uri, max_size=6)
    try:
        yield lambda: PostgresVolume(pool, root, tenant="acme", spec="demo")
    finally:
        pool.close()
        PostgresServerForTests.drop_database(uri)


@pytest.fixture
def volume(volumes: Any) -> DocumentVolume:
    made: DocumentVolume = volumes()
    return made


def test_a_missing_document_reads_as_none_and_a_written_one_as_its_text(
    volume: DocumentVolume,
) -> None:
    path = volume.root / "state" / "demo" / "focus.md"
    assert volume.read(path) is None
    assert not volume.exists(path)
    volume.write(path, "# Focus\n\nship — ünïcode\n")
    assert volume.read(path) == "# Focus\n\nship — ünïcode\n"
    volume.write(path, "replaced\n")
    assert volume.read(path) == "replaced\n"
    assert volume.exists(path)
    assert volume.key(path) == "state/demo/focus.md"


def test_carriage_returns_read_back_as_a_text_mode_file_reads_them(
    volume: DocumentVolume,
) -> None:
    path = volume.root / "note.md"
    volume.write(path, "a\r\nb\rc\n")
    assert volume.read(path) == "a\nb\nc\n"


def test_folders_exist_while_a_document_is_below_them(volume: DocumentVolume) -> None:
    plans = volume.root / "state" / "demo" / "plans"
    assert volume.names(plans) == []
    assert not volume.is_dir(plans)
    volume.write(plans / "plan-0002-b.md", "b\n")
    volume.write(plans / "plan-0001-a.md", "a\n")
    volume.write(plans / "ACTIVE", "plan-0001\n")
    volume.write(plans / "old" / "x.md", "x\n")
    # A sibling whose name starts like the folder is not inside it.
    volume.write(volume.root / "state" / "demo" / "plans-notes.md", "n\n")
    assert volume.is_dir(plans) and volume.exists(plans)
    assert volume.names(plans) == ["ACTIVE", "old", "plan-0001-a.md", "plan-0002-b.md"]
    assert volume.names(volume.root / "state" / "demo") == ["plans", "plans-notes.md"]
    assert [volume.key(p) for p in volume.documents(plans)] == [
        "state/demo/plans/ACTIVE",
        "state/demo/plans/old/x.md",
        "state/demo/plans/plan-0001-a.md",
        "state/demo/plans/plan-0002-b.md",
    ]


def test_move_renames_a_document_or_a_whole_folder(volume: DocumentVolume) -> None:
    state = volume.root / "state" / "demo"
    volume.write(state / "focus.md", "f\n")
    volume.write(state / "plans" / "plan-0001-a.md", "a\n")
    volume.write(state / "plans" / "ACTIVE", "plan-0001\n")
    trash = volume.root / "trash" / "2026-03-01T09-30-00" / "state" / "demo"
    volume.move(state / "focus.md", trash / "focus.md")
    volume.move(state / "plans", trash / "plans")
    assert volume.read(state / "focus.md") is None
    assert not volume.exists(state / "plans")
    assert volume.read(trash / "focus.md") == "f\n"
    assert volume.names(trash / "plans") == ["ACTIVE", "plan-0001-a.md"]


def test_remove_deletes_a_document_or_a_folder_and_says_whether_one_was_there(
    volume: DocumentVolume,
) -> None:
    snapshot = volume.root / "trash" / "2026-03-01T09-30-00"
    volume.write(snapshot / "state" / "demo" / "focus.md", "f\n")
    volume.write(snapshot / "state" / "other" / "focus.md", "o\n")
    assert volume.remove(snapshot / "state" / "demo")
    assert not volume.remove(snapshot / "state" / "demo")
    assert volume.names(snapshot / "state") == ["other"]
    assert volume.remove(snapshot / "state" / "other" / "focus.md")
    assert volume.names(snapshot) == [] or volume.on_files


def test_a_path_outside_the_root_is_refused(volume: DocumentVolume) -> None:
    from specwire.runtime.core.errors import TenancyError

    with pytest.raises(TenancyError):
        volume.write(volume.root.parent / "elsewhere.md", "x\n")


ROUNDS = 6


def test_a_mutation_under_the_lock_loses_no_update_between_two_writers(volumes: Any) -> None:
    """Two workers (each its own volume object, as two processes would have) each add 6
    lines to one document, read-modify-write under the lock: all 12 lines are there."""
    first: DocumentVolume = volumes()
    path = first.root / "state" / "demo" / "counter.md"
    lock = first.root / "state" / "demo" / ".lock"
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        volume: DocumentVolume = volumes()
        try:
            for i in range(ROUNDS):
                with volume.locked(lock, wait_s=30, what="test store"):
                    text = volume.read(path) or ""
                    volume.write(path, text + f"{name}-{i}\n")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors
    lines = (first.read(path) or "").splitlines()
    expected = [f"{name}-{i}" for name in ("a", "b") for i in range(ROUNDS)]
    assert sorted(lines) == sorted(expected)


def test_a_busy_lock_with_no_wait_is_refused_at_once(volumes: Any) -> None:
    holder: DocumentVolume = volumes()
    other: DocumentVolume = volumes()
    lock = holder.root / "state" / "demo" / ".lock"
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with holder.locked(lock, wait_s=5, what="test store"):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.wait(30)
        with (
            pytest.raises(LockTimeoutError),
            other.locked(lock, wait_s=0.2, what="test store"),
        ):
            pass
    finally:
        release.set()
        thread.join(30)
