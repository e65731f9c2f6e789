"""The embedder interface every tier codes against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from specwire.runtime.core.errors import MemoryServiceError

if TYPE_CHECKING:
    import numpy
    import numpy.typing as npt


class EmbedderError(MemoryServiceError):
    """An embedder cannot be loaded or cannot embed; one line naming what to fix."""


@runtime_checkable
class Embedder(Protocol):
    """``embed`` returns float32 rows of shape ``(len(texts), dim)``, each L2-normalised (a text
    with no features embeds as a zero row)."""

    @property
    def id(self) -> str:
        """Names the model and its vector space, e.g. ``hash/256``; stored with each vector."""

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[numpy.float32]: ...
