"""``hash/<dim>``: feature hashing of words and character trigrams, no model, no download.

Each lowercased word and each trigram of ``#word#`` is hashed with BLAKE2b (never ``hash()``, which
``PYTHONHASHSEED`` salts per process) to a bucket and a sign. Vectors relate texts that share
words or word fragments ("deployments" and "deploy"), never synonyms ("Kubernetes" and "container
orchestration"): that takes a trained model (``local/…``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from specwire.runtime.core.patterns import LazyPattern

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_WORD = LazyPattern(r"\w+")
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5


class HashEmbedder:
    """``hash/<dim>``; numpy is imported by the first ``embed``, not with the embedder (a
    bundle that recalls nothing before its first prompt never loads it)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.id = f"hash/{dim}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                buckets, weights = _word_features(word, self.dim)
                np.add.at(out[row], buckets, weights)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


@lru_cache(maxsize=65536)
def _word_features(word: str, dim: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    import numpy as np

    padded = f"#{word}#"
    features = [("w", word, _WORD_WEIGHT)] + [
        ("c", padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2)
    ]
    buckets = np.empty(len(features), dtype=np.intp)
    weights = np.empty(len(features), dtype=np.float32)
    for i, (kind, feature, weight) in enumerate(features):
        digest = hashlib.blake2b(f"{kind}:{feature}".encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        buckets[i] = value % dim
        weights[i] = weight if (value >> 63) & 1 == 0 else -weight
    return buckets, weights
