"""``load_embedder``: resolve ``provider/model`` to an embedder, with one-line errors."""

from __future__ import annotations

import os

from runtime.embedders.base import Embedder, EmbedderError
from runtime.fragment import EMBEDDER_EXTRAS, embedder_problem

OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"
OPENAI_API_KEY_ENV = "OPENAI_API_KEY"


def load_embedder(spec: str) -> Embedder:
    """The embedder ``spec`` names; raises ``EmbedderError`` saying what to fix."""
    problem = embedder_problem(spec)
    if problem is not None:
        raise EmbedderError(f"memory.embedder: {problem}")
    provider, _, model = spec.partition("/")
    _require("numpy", "numpy", provider)
    if provider == "hash":
        from runtime.embedders.hashing import HashEmbedder

        return HashEmbedder(int(model))
    if provider == "local":
        _require("onnxruntime", "onnxruntime", provider)
        _require("tokenizers", "tokenizers", provider)
        from runtime.embedders.local import load_local

        return load_local(model)
    _require("openai", "openai", provider)
    from runtime.embedders.remote import OpenAIEmbedder

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
