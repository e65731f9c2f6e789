"""Text handling shared by the store, capture and tools: tokens, stop words, normalization.

One tokenizer for both sides: documents are indexed pre-tokenized (``document_terms``) and queries
are built from the same tokens (``match_expression``), so what a query can match never depends on
FTS5's own tokenizer or on FTS5 query syntax in user text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SPLIT = re.compile(r"[^a-z0-9]+")

# Words that carry no lexical signal in a question. Kept small on purpose: a word that is here can
# never be searched for. Includes the fragments contractions split into ("customer's" -> "s").
_STOP_WORDS_TEXT = """
    a an the is are was were be been being am do does did what which who whom whose when where
    why how of to in on at by for with from into about as and or but if then than so it its this
    that these those there here i me my we us our you your he him his she her they them their
    can could should would will shall may might must have has had any some tell know please
    s t d ll re ve m
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())

# A query keeps at most this many distinct tokens (a long seed such as the spec instructions
# stays a bounded OR query).
MAX_QUERY_TERMS = 64


def tokenize(text: str) -> list[str]:
    """Lowercase, split on ``[^a-z0-9]+``, drop empty pieces."""
    return [token for token in _SPLIT.split(text.lower()) if token]


def document_terms(text: str, tags: Iterable[str]) -> str:
    """The indexed form of a fact: the tokens of ``text + " " + tags`` joined by spaces."""
    return " ".join(tokenize(" ".join([text, *tags])))


def query_terms(query: str) -> list[str]:
    """Distinct non-stop-word tokens of a query, in order of first appearance, bounded."""
    seen: dict[str, None] = {}
    for token in tokenize(query):
        if token not in STOP_WORDS and token not in seen:
            seen[token] = None
            if len(seen) == MAX_QUERY_TERMS:
                break
    return list(seen)


def match_expression(terms: Iterable[str]) -> str | None:
    """An FTS5 MATCH string with OR semantics; every term quoted. None when there is no term."""
    quoted = [f'"{term}"' for term in terms]
    return " OR ".join(quoted) if quoted else None


def normalize_text(text: str) -> str:
    """Lowercase with whitespace collapsed: the identity used for idempotent capture."""
    return " ".join(text.lower().split())


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, max_len: int) -> str:
    """Cut to ``max_len`` characters, the last one an ellipsis when anything was cut."""
    if len(text) <= max_len:
        return text
    return text[: max_len - 1] + "…"
