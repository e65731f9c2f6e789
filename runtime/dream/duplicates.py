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

Only plain facts (no key) of one scope key are ever grouped together: a fact never folds into
another person's, conversation's or role's fact, and keyed facts are replaced by key, not folded.

Candidates come from prefix filtering (rarest tokens first; two sets with Jaccard ≥ t share a
token among the first ``|x| - ceil(t·|x|) + 1`` of either), so a large store is not compared
pair by pair.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.model import Fact
from specwire.runtime.facts.text import normalize_text, words

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
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def _meaningful(token: str) -> bool:
    return token in NEGATIONS or any(ch.isdigit() for ch in token)


def near_duplicates(a: Fact, b: Fact, threshold: float) -> bool:
    return _similar(
        normalize_text(a.text),
        token_set(a.text),
        normalize_text(b.text),
        token_set(b.text),
        threshold,
    )


def _similar(
    norm_a: str, ta: frozenset[str], norm_b: str, tb: frozenset[str], threshold: float
) -> bool:
    if norm_a == norm_b:
        return True
    if not ta or not tb:
        return False
    if min(len(ta), len(tb)) < threshold * max(
        len(ta), len(tb)
    ):  # Jaccard ≤ |small| / |large|: no need to intersect
        return False
    if jaccard(ta, tb) < threshold:
        return False
    return not any(_meaningful(token) for token in ta ^ tb)


def survivor_order(fact: Fact) -> tuple[bool, float]:
    return (not fact.has_evidence, fact.created_at.timestamp())


def group_duplicates(facts: Sequence[Fact], threshold: float) -> list[DuplicateGroup]:
    """The groups of two or more near-duplicates among ``facts`` (live facts), in survivor
    order; a fact belongs to at most one group, and a group to one scope key."""
    by_key: dict[ScopeKey, list[Fact]] = defaultdict(list)
    for fact in facts:
        if fact.key is None:
            by_key[fact.scope].append(fact)
    groups = [group for same in by_key.values() for group in _groups_of(same, threshold)]
    if len(by_key) > 1:
        position = {id(fact): index for index, fact in enumerate(facts)}
        groups.sort(key=lambda g: (survivor_order(g.survivor), position[id(g.survivor)]))
    return groups


def _groups_of(facts: Sequence[Fact], threshold: float) -> list[DuplicateGroup]:
    ordered = sorted(facts, key=survivor_order)  # stable: ties keep the order given
    tokens = [token_set(fact.text) for fact in ordered]
    norms = [normalize_text(fact.text) for fact in ordered]
    frequency = Counter(token for each in tokens for token in each)
    prefixes = [_prefix(each, frequency, threshold) for each in tokens]
    index: dict[str, list[int]] = defaultdict(list)
    by_text: dict[str, list[int]] = defaultdict(list)
    for position, prefix in enumerate(prefixes):
        by_text[norms[position]].append(position)
        for token in prefix:
            index[token].append(position)
    taken = [False] * len(ordered)
    groups: list[DuplicateGroup] = []
    for position, fact in enumerate(ordered):
        if taken[position]:
            continue
        candidates = set(by_text[norms[position]])
        for token in prefixes[position]:
            candidates.update(index[token])
        # An earlier fact still free was a survivor that did not take this one: not similar.
        # Sizes outside [t·n, n/t] cannot reach Jaccard t (checked before intersecting).
        size = len(tokens[position])
        low, high = threshold * size, size / threshold
        members: list[int] = []
        for other in candidates:
            if other <= position or taken[other]:
                continue
            if not low <= len(tokens[other]) <= high and norms[other] != norms[position]:
                continue
            if _similar(norms[position], tokens[position], norms[other], tokens[other], threshold):
                members.append(other)
        members.sort()
        if not members:
            continue
        taken[position] = True
        for other in members:
            taken[other] = True
        groups.append(DuplicateGroup(fact, tuple(ordered[other] for other in members)))
    return groups


def _prefix(tokens: frozenset[str], frequency: Counter[str], threshold: float) -> list[str]:
    """The rarest ``|x| - ceil(t·|x|) + 1`` tokens: two sets with Jaccard ≥ t share one."""
    rare_first = sorted(tokens, key=lambda token: (frequency[token], token))
    return rare_first[: max(len(rare_first) - math.ceil(threshold * len(rare_first)) + 1, 0)]
