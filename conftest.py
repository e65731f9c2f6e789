"""Every test gets its own build cache: nothing is read from or written to the user's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_build_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    cache = tmp_path_factory.mktemp("specwire-cache")
    monkeypatch.setenv("SPECWIRE_CACHE_DIR", str(cache))
    return cache
