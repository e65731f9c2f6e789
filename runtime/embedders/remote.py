"""``openai/<model>`` and ``openai-compatible/<model>``: embeddings through the official SDK."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from specwire.runtime.embedders.base import EmbedderError

# The API takes up to 2048 inputs per request; smaller batches keep one request short.
_BATCH = 256


class OpenAIEmbedder:
    def __init__(
        self,
        spec: str,
        model: str,
        *,
        api_key: str,
        base_url: str | None,
        batch: int = _BATCH,
    ) -> None:
        """``batch``: at most this many texts per request."""
        import openai

        self.id = spec
        self._model = model
        self._batch = batch
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=2)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import openai

        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            batch = [text or " " for text in texts[start : start + self._batch]]
            try:
                response = self._client.embeddings.create(model=self._model, input=batch)
            except openai.OpenAIError as exc:
                raise EmbedderError(f"{self.id}: embedding failed: {exc}") from exc
            rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        out = np.asarray(rows, dtype=np.float32)
        self._dim = out.shape[1]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
