"""Reading a provider's stream: each failure of the SDK mapped to one ``ModelError``.

Only the SDK's own ``next()`` is guarded: an exception a sink raises while an event is handled
(``StreamCancelled``, or a bug) passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from specwire.runtime.models.errors import ModelError

Item = TypeVar("Item")


def guarded(
    events: Iterable[Item], map_error: Callable[[BaseException], ModelError | None]
) -> Iterator[Item]:
    iterator = iter(events)
    while True:
        try:
            event = next(iterator)
        except StopIteration:
            return
        except Exception as exc:
            mapped = map_error(exc)
            if mapped is None:
                raise
            raise mapped from None
        yield event
