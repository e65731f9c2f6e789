"""Helpers shared by the facts tests (imported by name; the test dir is on sys.path)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

START = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
DAY_MS = 86_400_000


class FakeClock:
    """A clock tests move by hand; never the wall clock."""

    def __init__(self, start: datetime = START) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)


class ConceptEmbedder:
    """A test embedder with hand-made meaning: each word maps to a concept axis, so
    "container orchestration" and "Kubernetes" share a direction while sharing no letters."""

    CONCEPTS = {
        "kubernetes": 0,
        "container": 0,
        "orchestration": 0,
        "k8s": 0,
        "cat": 1,
        "kitten": 1,
        "pet": 1,
        "invoice": 2,
        "billing": 2,
        "payment": 2,
    }

    def __init__(self, model: str = "concepts", dim: int = 8) -> None:
        self.id = f"test/{model}"
        self.dim = dim
        self.calls: list[list[str]] = []
        self.fail = False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.fail:
            raise RuntimeError("the embedding service is down")
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                axis = self.CONCEPTS.get(word)
                if axis is not None:
                    out[row, axis] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
