"""Near-duplicate live facts, grouped around one survivor each. Pure: reads nothing, writes
nothing.

Two facts are near-duplicates when

- their normalized texts are equal (lowercase, whitespace collapsed), or
- the Jaccard similarity of their token sets (``runtime.facts.text.words``: folded runs of
  letters and digits, stop words kept, so "is" vs "is not" still differ) is at least the
  threshold, **and** the tokens they do not share hold no number and no negation word: "port
  8080" never absorbs "port 8081", nor "… is enabled" "… is not enabled", however long the rest.

Survivor choice is deterministic: a fact backed by evidence before one that is not, then the
oldest, then the first in the order given (``FactStore.list_facts``: the order of writing).
Facts are taken in that order; each one not yet grouped becomes a survivor and takes every
not-yet-grouped fact that is a near-duplicate **of it** (so every superseded fact is similar to
its own survivor, never only through a chain).

Candidates come from prefix filtering (rarest tokens first; two sets with Jaccard ≥ t share a
token among the first ``|x| - ceil(t·|x|) + 1`` of either), so a large store is not compared
pair by pair.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from runtime.facts.model import Fact
from runtime.facts.text import normalize_text, words

NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nor", "neither", "nothing", "nobody", "cannot", "without"}
    # "t" is what "don't", "isn't", "can't" leave once split ("don", "t").
    | {"t", "nt", "dont", "doesnt", "isnt", "cant", "wont", "shouldnt"}
)


@dataclass(frozen=True)
class DuplicateGroup:
    survivor: Fact
    duplicates: tuple[Fact, ...]


def token_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _meaningful(token: str) -> bool:
    return token in NEGATIONS or any(ch.isdigit() for ch in token)


def near_duplicates(a: Fact, b: Fact, threshold: float) -> bool:
    if normalize_text(a.text) == normalize_text(b.text):
        return True
    ta, tb = token_set(a.text), token_set(b.text)
    if not ta or not tb or jaccard(ta, tb) < threshold:
        return False
    return not any(_meaningful(token) for token in ta ^ tb)


def survivor_order(fact: Fact) -> tuple[bool, float]:
    return (not fact.has_evidence, fact.created_at.timestamp())


def group_duplicates(facts: Sequence[Fact], threshold: float) -> list[DuplicateGroup]:
    """The groups of two or more near-duplicates among ``facts`` (live facts), in survivor
    order; a fact belongs to at most one group."""
    ordered = sorted(facts, key=survivor_order)  # stable: ties keep the order given
    tokens = [token_set(fact.text) for fact in ordered]
    frequency = Counter(token for each in tokens for token in each)
    index: dict[str, list[int]] = defaultdict(list)
    by_text: dict[str, list[int]] = defaultdict(list)
    for position, (fact, each) in enumerate(zip(ordered, tokens, strict=True)):
        by_text[normalize_text(fact.text)].append(position)
        rare_first = sorted(each, key=lambda token: (frequency[token], token))
        prefix = len(rare_first) - math.ceil(threshold * len(rare_first)) + 1
        for token in rare_first[: max(prefix, 0)]:
            index[token].append(position)
    taken = [False] * len(ordered)
    groups: list[DuplicateGroup] = []
    for position, fact in enumerate(ordered):
        if taken[position]:
            continue
        candidates = set(by_text[normalize_text(fact.text)])
        rare_first = sorted(tokens[position], key=lambda token: (frequency[token], token))
        prefix = len(rare_first) - math.ceil(threshold * len(rare_first)) + 1
        for token in rare_first[: max(prefix, 0)]:
            candidates.update(index[token])
        members = [
            other
            for other in sorted(candidates)
            if other != position
            and not taken[other]
            and near_duplicates(fact, ordered[other], threshold)
        ]
        if not members:
            continue
        taken[position] = True
        for other in members:
            taken[other] = True
        groups.append(DuplicateGroup(fact, tuple(ordered[other] for other in members)))
    return groups
