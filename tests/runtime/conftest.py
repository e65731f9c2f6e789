"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from specwire.runtime.safety.redaction import forget_registered_secrets


@pytest.fixture(autouse=True)
def _no_secret_leaks_between_tests() -> Iterator[None]:
    """Secret values registered by one test (resolved references) must not redact another's."""
    yield
    forget_registered_secrets()
