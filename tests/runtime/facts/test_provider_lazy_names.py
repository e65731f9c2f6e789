"""The file provider's methods work in a process where nothing has read the request and result
types through ``protocol``'s lazy names yet (``update`` and ``descriptor`` raised NameError there:
a module ``__getattr__`` serves attribute reads, never a function's global lookups)."""

from __future__ import annotations

import pytest

from specwire.runtime.facts.providers import protocol
from specwire.runtime.facts.providers.operations import UpdateRequest
from specwire.runtime.facts.store import FactStore


@pytest.fixture
def fresh_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    """``protocol`` as a fresh process has it: no operation type cached in its globals."""
    for name in protocol._OPERATIONS:
        monkeypatch.delitem(vars(protocol), name, raising=False)


def test_describing_the_file_provider_needs_no_earlier_lookup(
    store: FactStore, fresh_protocol: None
) -> None:
    descriptor = protocol.LocalFactProvider(store, name="main").descriptor()
    assert (descriptor.id, descriptor.kind) == ("main", "file")


def test_updating_through_the_file_provider_needs_no_earlier_lookup(
    store: FactStore, fresh_protocol: None
) -> None:
    fact = store.remember("The staging cluster runs in eu-west-1.")
    provider = protocol.LocalFactProvider(store, name="main")
    result = provider.update(UpdateRequest(fact.id, "The staging cluster runs in eu-west-2."))
    assert result.id == fact.id and result.superseded is not None
