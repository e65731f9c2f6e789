"""Every generated file of every example, pinned as a single-file snapshot.

Layout: ``snapshots/<example stem>/<file>`` (e.g. ``snapshots/support-bot/agent.py``), so a
reviewer reads a bundle diff as code. After an intended change, regenerate with the command in
``REGENERATE`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from emitter_cases import EXAMPLE_STEMS, ROOT
from syrupy.assertion import SnapshotAssertion
from syrupy.data import Snapshot, SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import AGENT_FILE, README_FILE

SNAPSHOT_ROOT = ROOT / "snapshots"
REGENERATE = ".venv/bin/pytest tests/emitters/test_snapshots.py --snapshot-update"
BUNDLE_FILES = (AGENT_FILE, README_FILE)
TEST_NAME = "test_bundle_file_matches_snapshot"


def snapshot_name(location: Path) -> str:
    """``test_bundle_file_matches_snapshot[<example>/<file>]``: relatable to the test."""
    return f"{TEST_NAME}[{location.parent.name}/{location.name}]"


class BundleFileSnapshot(SingleFileSnapshotExtension):
    """One generated file at ``snapshots/<example>/<file>``, byte for byte (text, no newline
    translation either way)."""

    _write_mode = WriteMode.TEXT
    file_extension = ""
    example: ClassVar[str] = ""
    filename: ClassVar[str] = ""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_ROOT / cls.example)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        return snapshot_name(SNAPSHOT_ROOT / cls.example / cls.filename)

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index: Any) -> str:
        return cls.filename

    def read_snapshot_collection(self, *, snapshot_location: str) -> SnapshotCollection:
        collection = SnapshotCollection(location=snapshot_location)
        collection.add(Snapshot(name=snapshot_name(Path(snapshot_location))))
        return collection

    @classmethod
    def matches_test_location(
        cls, *, test_location: PyTestLocation, snapshot_location: str
    ) -> bool:
        return Path(snapshot_location) == SNAPSHOT_ROOT / cls.example / cls.filename

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> str | None:
        try:
            with open(snapshot_location, encoding="utf-8", newline="") as handle:
                return handle.read()
        except FileNotFoundError:
            return None

    @classmethod
    def write_snapshot_collection(cls, *, snapshot_collection: Any, name_order: Any = None) -> None:
        data = next(iter(snapshot_collection)).data
        with open(snapshot_collection.location, "w", encoding="utf-8", newline="") as handle:
            handle.write(data)


def bundle_file_snapshot(example: str, filename: str) -> type[BundleFileSnapshot]:
    name = f"BundleFileSnapshot[{example}/{filename}]"
    return type(name, (BundleFileSnapshot,), {"example": example, "filename": filename})


@pytest.mark.parametrize("filename", BUNDLE_FILES)
@pytest.mark.parametrize("example", EXAMPLE_STEMS)
def test_bundle_file_matches_snapshot(
    example: str, filename: str, example_bundles: dict[str, Bundle], snapshot: SnapshotAssertion
) -> None:
    bundle = example_bundles[example]
    assert tuple(bundle) == BUNDLE_FILES
    pinned = snapshot.use_extension(bundle_file_snapshot(example, filename))
    assert pinned == bundle[filename], (
        f"snapshots/{example}/{filename} is out of date; if the change is intended, run:\n"
        f"    {REGENERATE}\nand review the diff"
    )


def test_no_stale_snapshot_files(example_bundles: dict[str, Bundle]) -> None:
    expected = {
        f"{example}/{path}" for example, bundle in example_bundles.items() for path in bundle
    }
    found = {
        path.relative_to(SNAPSHOT_ROOT).as_posix()
        for path in SNAPSHOT_ROOT.rglob("*")
        if path.is_file() and path.parent != SNAPSHOT_ROOT and "__pycache__" not in path.parts
    }
    assert found - expected == set(), "stale snapshot files: delete them (no example emits them)"
    assert expected - found == set(), f"missing snapshots; run:\n    {REGENERATE}"


def test_snapshots_are_lf_only_with_one_trailing_newline() -> None:
    # Importing a golden bundle leaves a __pycache__ beside it where bytecode is written.
    for path in sorted(SNAPSHOT_ROOT.glob("*/*")):
        if path.name == "__pycache__":
            continue
        data = path.read_bytes()
        assert b"\r" not in data, path
        assert data.endswith(b"\n") and not data.endswith(b"\n\n"), path
