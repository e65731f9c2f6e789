"""openai/<model> and openai-compatible/<model> embedders against a fake server on 127.0.0.1."""

from __future__ import annotations

import numpy as np
import pytest
from fake_provider import Body, Reply, serve

from specwire.runtime.embedders import EmbedderError, load_embedder


def embeddings(body: Body) -> Body:
    inputs = body["input"]
    return {
        "object": "list",
        "model": body["model"],
        "data": [
            # Returned out of order: the embedder must sort by index.
            {"object": "embedding", "index": i, "embedding": [float(len(text)), 0.0, 3.0]}
            for i, text in reversed(list(enumerate(inputs)))
        ],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


def test_an_openai_compatible_server_embeds_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from specwire.runtime.embedders.remote import OpenAIEmbedder

    with serve([Reply(body=embeddings)]) as provider:
        monkeypatch.setenv("OPENAI_BASE_URL", provider.url + "/v1")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        embedder = load_embedder("openai-compatible/nomic-embed-text")
        rows = embedder.embed(["abcd", "a", "abcd"])
        small_batches = OpenAIEmbedder(
            "openai-compatible/nomic-embed-text",
            "nomic-embed-text",
            api_key="unused",
            base_url=provider.url + "/v1",
            batch=2,
        )
        assert np.array_equal(small_batches.embed(["abcd", "a", "abcd"]), rows)
    assert embedder.id == "openai-compatible/nomic-embed-text" and embedder.dim == 3
    assert rows.dtype == np.float32 and rows.shape == (3, 3)
    assert np.allclose(rows[0], [0.8, 0.0, 0.6]) and np.allclose(rows[0], rows[2])
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    # The default batch holds all three; ``batch=2`` sends two, then one.
    assert [len(body["input"]) for body in provider.bodies()] == [3, 2, 1]
    assert {body["model"] for body in provider.bodies()} == {"nomic-embed-text"}
    assert provider.requests[0].path == "/v1/embeddings"


def test_a_failing_server_is_an_embedder_error(monkeypatch: pytest.MonkeyPatch) -> None:
    error = {"error": {"message": "bad model", "type": "invalid_request_error"}}
    with serve([Reply(body=error, status=400)]) as provider:
        monkeypatch.setenv("OPENAI_BASE_URL", provider.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        embedder = load_embedder("openai/text-embedding-3-small")
        with pytest.raises(EmbedderError, match="openai/text-embedding-3-small: embedding failed"):
            embedder.embed(["x"])
