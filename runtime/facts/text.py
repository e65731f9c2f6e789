"""Text handling shared by the store, capture and tools: tokens, stop words, normalization.

One tokenizer for both sides: documents are indexed pre-tokenized (``document_terms``) and queries
are built from the same tokens (``query_terms`` / ``match_expression``), so what a query can match
never depends on FTS5's own tokenizer or on FTS5 query syntax in user text.

Tokens (``tokenize``): the text is NFKC-normalized and casefolded, then every maximal run of
letters, combining marks and digits of any script is a word (``Zürich`` → ``zürich``, ``Straße``
→ ``strasse``, ``٣٤`` and ``हिन्दी`` stay whole); everything else separates words. Han, kana and
Hangul are written without spaces between words, so a run of them is indexed as its single
characters *and* its adjacent pairs (``東京都`` → ``東 東京 京 京都 都``): a query finds a word
inside a sentence without a dictionary. A query uses the pairs of such a run (or the character
alone when the run is one character long), which are always among the indexed tokens: every query
term of a text is one of that text's document terms.

A token never contains an ASCII character other than ``[a-z0-9]``, so the FTS5 ``ascii``
tokenizer (which only splits on ASCII separators) sees exactly these tokens on both sides.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator

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

# A recall query keeps at most this many distinct terms (a long seed such as the spec instructions
# stays a bounded OR query). Forget-by-query refuses a longer query instead of dropping terms.
MAX_QUERY_TERMS = 64
# The longest query every provider takes (the HTTP contract's limit; a fact's text limit).
MAX_QUERY_CHARS = 2000

# Scripts written without spaces between words: Hangul Jamo, CJK radicals, the iteration marks and
# ideographic zero, kana, Hangul compatibility Jamo and syllables, CJK ideographs (with the
# compatibility block and the supplementary planes) and halfwidth katakana. Compiled on first use
# (a couple of milliseconds: the supplementary planes make a large set): ASCII words never need it.
_SPACELESS = (
    "([\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003ffff]+)"
)


@functools.cache
def _spaceless() -> re.Pattern[str]:
    return re.compile(_SPACELESS)


_ASCII_WORD = re.compile("[a-z0-9]+")
_WORD_CATEGORIES = frozenset("LNM")  # letters, digits/numbers, combining marks
_SEPARATOR = ord(" ")
_CACHE_LIMIT = 1 << 16


class _WordTable(dict[int, int]):
    """A ``str.translate`` table: word characters map to themselves, the rest to a space.

    Filled on demand from the Unicode database (bounded, so hostile input cannot grow it).
    """

    def __missing__(self, codepoint: int) -> int:
        category = unicodedata.category(chr(codepoint))
        mapped = codepoint if category[0] in _WORD_CATEGORIES else _SEPARATOR
        if len(self) < _CACHE_LIMIT:
            self[codepoint] = mapped
        return mapped


_WORD_TABLE = _WordTable()


def fold(text: str) -> str:
    """NFKC, casefold, NFKC again (casefolding can un-normalize): the form tokens are cut from."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def words(text: str) -> list[str]:
    """The folded runs of letters, marks and digits of ``text``, in order."""
    if text.isascii():
        # The same result, faster: ASCII is NFKC-stable, casefolds to lower case, and its only
        # letters and digits are [a-z0-9] once lowered.
        return _ASCII_WORD.findall(text.lower())
    return fold(text).translate(_WORD_TABLE).split()


def tokenize(text: str) -> list[str]:
    """The indexed tokens of ``text``, in order (see the module docstring)."""
    if text.isascii():
        return words(text)
    return [token for word in words(text) for token in _pieces(word, for_query=False)]


def document_terms(text: str, tags: Iterable[str]) -> str:
    """The indexed form of a fact: the tokens of ``text + " " + tags`` joined by spaces."""
    return " ".join(tokenize(" ".join([text, *tags])))


def query_terms(query: str, *, limit: int | None = MAX_QUERY_TERMS) -> list[str]:
    """Distinct non-stop-word terms of a query, in order of first appearance.

    At most ``limit`` terms (``None``: all of them).
    """
    seen: dict[str, None] = {}
    for word in words(query):
        for term in _pieces(word, for_query=True):
            if term not in STOP_WORDS and term not in seen:
                seen[term] = None
                if limit is not None and len(seen) == limit:
                    return list(seen)
    return list(seen)


def match_expression(terms: Iterable[str], *, every: bool = False) -> str | None:
    """An FTS5 MATCH string; every term quoted. None when there is no term.

    OR semantics by default (recall); ``every=True`` requires all terms (forget-by-query).
    """
    quoted = [f'"{term}"' for term in terms]
    return (" AND " if every else " OR ").join(quoted) if quoted else None


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


def _pieces(word: str, *, for_query: bool) -> Iterator[str]:
    """A word's tokens: itself, unless it holds runs of a spaceless script (cut into n-grams)."""
    if word.isascii() or _spaceless().search(word) is None:
        yield word
        return
    for index, part in enumerate(_spaceless().split(word)):
        if not part:
            continue
        # split() with a group alternates other text (even index) and spaceless runs (odd).
        if index % 2 == 0 or len(part) == 1:
            yield part
        else:
            for start in range(len(part) - 1):
                if not for_query:
                    yield part[start]
                yield part[start : start + 2]
            if not for_query:
                yield part[-1]


def clip_query(query: str) -> str:
    """At most ``MAX_QUERY_CHARS`` characters, cut at a space: a long message, a long set of
    instructions or a long tool query stays a valid recall query for every provider."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    cut = query[:MAX_QUERY_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > MAX_QUERY_CHARS // 2 else cut


def fingerprint(text: str) -> str:
    """A content fingerprint for deduplication across providers: equal for texts that differ
    only in case, Unicode compatibility form and whitespace."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()[:32]
