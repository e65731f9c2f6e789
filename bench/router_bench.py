"""recall@5 through the router (``memory.providers``), on the paraphrase set, beside one store.

A benchmark, not a test: it prints tables and never asserts.

The corpus is ``hybrid_bench``'s quality set: the 60 hand-written facts of
``paraphrase_set.tsv``, each with a question that asks for it in other words, mixed into 2,000
generated distractors. recall@5 is the share of questions whose fact is among the top 5.

Rows, for each embedder (none: BM25 alone; ``hash/256``; ``local/all-minilm-l6-v2`` when
``specwire[embed-local]`` is installed):

- **one store**: every fact in the embedded store, recalled through ``LocalFactProvider`` (what
  a spec without ``memory.providers`` does): the baseline.
- **vault alone**: every fact a note of a Markdown vault (``MarkdownVaultProvider``).
- **router, rrf / score / primary-first**: the facts split in two, the even-numbered paraphrase
  facts and the first half of the distractors in the store (the primary), the rest as vault
  notes; recall through ``FactRouter`` with each fusion of ``routing.rerank`` (``rrf`` is the
  one the runtime uses; ``score`` trusts the providers' own scores as if comparable;
  ``primary-first`` lists the primary's hits before the vault's).

Latency (p50 / p95 over 3 passes of the 60 questions, after one warm-up pass) for the baseline
and the router (rrf), and their ratio: what fanning out to a second provider on a thread costs.

Run from the repository root:

    .venv/bin/python bench/router_bench.py            # BM25, hash/256, all-MiniLM
    .venv/bin/python bench/router_bench.py --quick    # BM25 and hash/256 only
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hybrid_bench import bulk_load, timed  # noqa: E402
from recall_bench import Latency, generate_corpus  # noqa: E402

from specwire.runtime.embedders import Embedder, load_embedder  # noqa: E402
from specwire.runtime.facts.providers.protocol import (  # noqa: E402
    FactProvider,
    LocalFactProvider,
    RecallRequest,
)
from specwire.runtime.facts.routing.rerank import Method  # noqa: E402
from specwire.runtime.facts.routing.router import FactRouter, RoutedProvider  # noqa: E402
from specwire.runtime.facts.store import FactStore  # noqa: E402
from specwire.runtime.facts.vault.provider import MarkdownVaultProvider  # noqa: E402

K = 5
DISTRACTORS = 2000
SEED = 7
PASSES = 3
PARAPHRASES = Path(__file__).with_name("paraphrase_set.tsv")
METHODS: tuple[Method, ...] = ("rrf", "score", "primary-first")

Item = tuple[str, tuple[str, ...]]  # a fact's text and tags


def paraphrases() -> list[tuple[str, str]]:
    pairs = []
    for line in PARAPHRASES.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            fact, question = line.split("\t")
            pairs.append((fact, question))
    return pairs


def fill_store(path: Path, items: Sequence[Item], embedder: Embedder | None) -> FactStore:
    """Written in bulk as ``remember`` would (``hybrid_bench.bulk_load``), vectors included."""
    bulk_load(path, items, embedder or load_embedder("hash/256"))
    return FactStore.open(path, embedder=embedder)


def fill_vault(folder: Path, items: Sequence[Item]) -> None:
    folder.mkdir(parents=True)
    for number, (text, tags) in enumerate(items):
        matter = f"---\ntags: [{', '.join(tags)}]\n---\n" if tags else ""
        (folder / f"n{number:05d}.md").write_text(f"{matter}{text}\n", encoding="utf-8")


def recall_at_5(provider: FactProvider, pairs: Sequence[tuple[str, str]]) -> float:
    found = 0
    for fact, question in pairs:
        texts = [hit.text for hit in provider.recall(RecallRequest(question, K)).hits]
        found += fact in texts
    return found / len(pairs)


def latency(call: Callable[[str], object], questions: Sequence[str]) -> Latency:
    for question in questions:
        call(question)  # warm
    return timed(call, questions, PASSES)


def measure(embedder: Embedder | None, root: Path) -> list[str]:
    name = embedder.id if embedder is not None else "none (BM25)"
    tag = name.replace("/", "-").split(" ")[0]
    pairs = paraphrases()
    distractors: list[Item] = [(f.text, f.tags) for f in generate_corpus(DISTRACTORS, SEED + 1)]
    every: list[Item] = distractors + [(fact, ()) for fact, _ in pairs]
    half = DISTRACTORS // 2
    in_store = distractors[:half] + [(fact, ()) for fact, _ in pairs[0::2]]
    in_vault = distractors[half:] + [(fact, ()) for fact, _ in pairs[1::2]]

    _progress(f"{name}: one store")
    whole = fill_store(root / f"{tag}-all.sqlite3", every, embedder)
    baseline = LocalFactProvider(whole)
    rows = [(f"one store ({len(every)} facts)", recall_at_5(baseline, pairs))]

    _progress(f"{name}: vault alone")
    fill_vault(root / f"{tag}-vault-all", every)
    vault_all = MarkdownVaultProvider(root, f"{tag}-vault-all", name="notes", embedder=embedder)
    rows.append((f"vault alone ({len(every)} notes)", recall_at_5(vault_all, pairs)))

    _progress(f"{name}: router")
    split = fill_store(root / f"{tag}-split.sqlite3", in_store, embedder)
    fill_vault(root / f"{tag}-vault-split", in_vault)
    vault = MarkdownVaultProvider(root, f"{tag}-vault-split", name="notes", embedder=embedder)
    primary = RoutedProvider("primary", "file", LocalFactProvider(split), 0.0)
    others = [RoutedProvider("notes", "markdown", vault, 10.0)]
    routers = {method: FactRouter(primary, others, method=method) for method in METHODS}
    label = f"router: store {len(in_store)} + vault {len(in_vault)}"
    for method, router in routers.items():
        rows.append((f"{label}, {method}", recall_at_5(router, pairs)))

    questions = [question for _, question in pairs]
    base = latency(lambda q: baseline.recall(RecallRequest(q, K)), questions)
    routed = latency(lambda q: routers["rrf"].recall(RecallRequest(q, K)), questions)
    whole.close()
    split.close()
    lines = [f"### embedder {name}", "", "| corpus and recall | recall@5 |", "|---|---:|"]
    lines += [f"| {what} | {score:.0%} |" for what, score in rows]
    lines += [
        "",
        "| latency, ms | p50 | p95 |",
        "|---|---:|---:|",
        f"| one store | {base.p50_ms:.2f} | {base.p95_ms:.2f} |",
        f"| router (store + vault, rrf) | {routed.p50_ms:.2f} | {routed.p95_ms:.2f} |",
        f"| router / one store | {routed.p50_ms / base.p50_ms:.2f}x "
        f"| {routed.p95_ms / base.p95_ms:.2f}x |",
        "",
    ]
    return lines


def embedders(quick: bool) -> list[Embedder | None]:
    found: list[Embedder | None] = [None, load_embedder("hash/256")]
    if not quick and all(importlib.util.find_spec(m) for m in ("onnxruntime", "tokenizers")):
        found.append(load_embedder("local/all-minilm-l6-v2"))
    return found


def _progress(line: str) -> None:
    print(f"[router_bench] {line}", file=sys.stderr, flush=True)


def main() -> None:
    lines = [
        f"recall@{K} on the paraphrase set ({len(paraphrases())} questions, "
        f"{DISTRACTORS:,} distractors)",
        "",
    ]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for embedder in embedders("--quick" in sys.argv[1:]):
            print("\n".join(measure(embedder, Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
