"""The owner's protocols (``specwire.runtime.facts.conformance.admin_cases``) on every built-in
target; the built-in stores must offer them (the HTTP contract carries none)."""

from typing import Any

import pytest
from conformance_harness import pytest_tests

from specwire.runtime.facts.conformance import admin_cases
from specwire.runtime.facts.conformance.admin_cases import ADMIN_PROTOCOLS

globals().update(pytest_tests(admin_cases.CASES))


def test_the_builtin_stores_offer_every_owner_operation(target: Any) -> None:
    if not getattr(target, "builtin", False):
        pytest.skip("a provider of one's own may offer no owner operations")
    provider = target.provider("tenant-a", "spec-admin")
    offered = {protocol.__name__ for protocol in ADMIN_PROTOCOLS if isinstance(provider, protocol)}
    expected = set() if target.name.startswith("http") else {p.__name__ for p in ADMIN_PROTOCOLS}
    assert offered == expected, target.name
