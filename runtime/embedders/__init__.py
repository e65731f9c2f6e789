"""Text embedders for hybrid recall, named ``provider/model`` (``hash/256``,
``local/all-minilm-l6-v2``, ``openai/text-embedding-3-small``).

Importing this package loads no numpy and no embedder library: ``load_embedder`` imports the one a
spec asks for.
"""

from __future__ import annotations

from specwire.runtime.embedders.base import Embedder, EmbedderError
from specwire.runtime.embedders.factory import load_embedder

__all__ = ["Embedder", "EmbedderError", "load_embedder"]
