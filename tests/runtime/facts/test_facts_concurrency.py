"""Two connections, threads and processes writing one fact store at once: nothing is lost."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from specwire.runtime.facts.store import FactStore

WRITER = """
import sys
from pathlib import Path
from specwire.runtime.facts.store import FactStore

path, name, count, shared = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
with FactStore.open(path) as store:
    print("ready", flush=True)
    assert sys.stdin.readline().strip() == "go"
    for i in range(count):
        store.remember(f"{name} fact {i}", [name])
        store.remember_if_new(shared)
print("ok")
"""


def test_two_processes_and_this_one_write_concurrently_without_loss(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "facts.sqlite3"  # not created yet: first opens race too
    count = 60
    shared = "everyone agrees the release is on Friday"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, str(count), shared],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    local_ids = []
    with FactStore.open(path) as store:
        # Start all three writers together: each child has opened the store and waits for "go".
        for writer in writers:
            assert writer.stdout is not None and writer.stdin is not None
            assert writer.stdout.readline().strip() == "ready"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        for i in range(count):
            local_ids.append(store.remember(f"gamma fact {i}", ["gamma"]).id)
            store.remember_if_new(shared)
    for writer in writers:
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        assert out.strip() == "ok"

    with FactStore.open(path) as store:
        facts = [entry.fact for entry in store.list_facts()]
        assert len({fact.id for fact in facts}) == len(facts)
        for name in ("alpha", "beta", "gamma"):
            mine = sorted(f.text for f in facts if f.tags == (name,))
            assert mine == sorted(f"{name} fact {i}" for i in range(count)), name
        # The check-and-insert of remember_if_new is one transaction: exactly one copy.
        assert [f.text for f in facts].count(shared) == 1
        assert store.size() == 3 * count + 1
        gamma_hits = {h.fact.id for h in store.recall("gamma", 50)}
        assert len(gamma_hits) == 50 and gamma_hits <= set(local_ids)


def test_two_connections_in_threads_interleave_writes(tmp_path: Path) -> None:
    path = tmp_path / "facts.sqlite3"
    stores = [FactStore.open(path), FactStore.open(path)]
    errors: list[BaseException] = []

    def write(store: FactStore, name: str) -> None:
        try:
            for i in range(30):
                fact = store.remember(f"{name} note {i}")
                if i % 3 == 0:
                    store.supersede(fact.id, f"{name} note {i} revised")
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(store, name))
        for store, name in zip(stores, ("left", "right"), strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for store in stores:
        assert store.size() == 60
        assert len(store.list_facts()) == 80
        store.close()


def test_one_store_shared_by_threads(tmp_path: Path) -> None:
    with FactStore.open(tmp_path / "facts.sqlite3") as store:
        errors: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(25):
                    store.remember(f"thread {n} item {i}")
                    store.recall(f"thread {n}")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert store.size() == 100
