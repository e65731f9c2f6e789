"""``load_embedder``: resolve ``provider/model`` to an embedder, with one-line errors."""

from __future__ import annotations

import hashlib
import os
import threading

from specwire.runtime.core.fragment import EMBEDDER_EXTRAS, MOCK_EMBEDDER_ALIAS, embedder_problem
from specwire.runtime.embedders.base import Embedder, EmbedderError

OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"
OPENAI_API_KEY_ENV = "OPENAI_API_KEY"


# Loaded embedders, reused by every later wiring in the process: a per-turn host wires memory
# on every turn, and loading a local model (or a client) each time would cost more than the turn.
_loaded: dict[tuple[str, str | None, str | None], Embedder] = {}
_loaded_lock = threading.Lock()


def load_embedder(spec: str) -> Embedder:
    """The embedder ``spec`` names (loaded once per process and settings); raises
    ``EmbedderError`` saying what to fix."""
    key = (spec, os.environ.get(OPENAI_BASE_URL_ENV), _digest(os.environ.get(OPENAI_API_KEY_ENV)))
    with _loaded_lock:
        cached = _loaded.get(key)
    if cached is not None:
        return cached
    embedder = _load(spec)
    with _loaded_lock:
        return _loaded.setdefault(key, embedder)


def _digest(value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(value.encode()).hexdigest()


def _load(spec: str) -> Embedder:
    problem = embedder_problem(spec)
    if problem is not None:
        raise EmbedderError(f"memory.embedder: {problem}")
    provider, _, model = spec.partition("/")
    _require("numpy", "numpy", provider)
    if provider == "mock":  # mock/deterministic: CrewHaus's offline embedder, here hash/256
        provider, _, model = MOCK_EMBEDDER_ALIAS.partition("/")
    if provider == "hash":
        from specwire.runtime.embedders.hashing import HashEmbedder

        return HashEmbedder(int(model))
    if provider == "local":
        _require("onnxruntime", "onnxruntime", provider)
        _require("tokenizers", "tokenizers", provider)
        from specwire.runtime.embedders.local import load_local

        return load_local(model)
    _require("openai", "openai", provider)
    from specwire.runtime.embedders.remote import OpenAIEmbedder

    base_url = os.environ.get(OPENAI_BASE_URL_ENV) or None
    if provider == "openai-compatible" and base_url is None:
        raise EmbedderError(
            f"memory.embedder: {spec} needs the server's address: set {OPENAI_BASE_URL_ENV}"
        )
    api_key = os.environ.get(OPENAI_API_KEY_ENV)
    if not api_key:
        if provider == "openai":
            raise EmbedderError(
                f"memory.embedder: {spec} needs an API key: set {OPENAI_API_KEY_ENV}"
            )
        api_key = "unused"  # a local OpenAI-compatible server often takes none
    return OpenAIEmbedder(spec, model, api_key=api_key, base_url=base_url)


def _require(module: str, package: str, provider: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        extra = EMBEDDER_EXTRAS[provider]
        raise EmbedderError(
            f"memory.embedder: the {provider} embedder needs {package}: "
            f'pip install "specwire[{extra}]"'
        )
