"""The labelled injection corpus (``injection_corpus.tsv``): hand-written malicious and benign
facts, each with a category, an evasion transform and a tuning split.

Columns: ``id``, ``label`` (malicious | benign), ``category``, ``transform``, ``split`` (tune |
heldout: the rules were written looking at the ``tune`` items only), ``text``.

``text`` takes the escapes ``\\n``, ``\\t``, ``\\\\``, ``\\uXXXX`` and ``\\UXXXXXXXX`` so invisible
characters stay visible in the file. ``transform`` names an evasion applied when the corpus is
loaded (``none`` for text written as it is scanned); it applies to the part of ``text`` inside
``{{`` ``}}`` when there is one (a payload inside a wrapper), otherwise to the whole text.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

CORPUS_PATH: Final = Path(__file__).with_name("injection_corpus.tsv")
COLUMNS: Final = ("id", "label", "category", "transform", "split", "text")

_ESCAPE: Final = re.compile(r"\\(n|t|\\|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")
_PAYLOAD: Final = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_CYRILLIC: Final = str.maketrans(
    {"o": "о", "e": "е", "a": "а", "i": "і", "c": "с", "p": "р", "y": "у", "x": "х"}
)
_LEET: Final = str.maketrans({"o": "0", "i": "1", "e": "3", "a": "4"})


@dataclass(frozen=True)
class CorpusItem:
    id: str
    malicious: bool
    category: str
    transform: str
    split: str
    text: str  # as scanned: escapes decoded, transform applied


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code in ("n", "t"):
            return "\n" if code == "n" else "\t"
        if code == "\\":
            return "\\"
        return chr(int(code[1:], 16))

    return _ESCAPE.sub(one, text)


def _zero_width(text: str) -> str:
    """A zero-width space after the second letter of every word longer than three letters."""
    return " ".join(
        word[:2] + "\u200b" + word[2:] if len(word) > 3 else word for word in text.split(" ")
    )


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


def _combining(text: str) -> str:
    """A diaeresis on every vowel."""
    return "".join(char + "\u0308" if char in "aeiouAEIOU" else char for char in text)


def _html(text: str) -> str:
    """The first letter of every word as a numeric character reference."""
    return " ".join(f"&#{ord(word[0])};{word[1:]}" if word else word for word in text.split(" "))


TRANSFORMS: Final[dict[str, Callable[[str], str]]] = {
    "none": lambda text: text,
    "base64": lambda text: base64.b64encode(text.encode()).decode(),
    "urlsafe_base64": lambda text: base64.urlsafe_b64encode(text.encode()).decode(),
    "hex": lambda text: text.encode().hex(),
    "cyrillic": lambda text: text.translate(_CYRILLIC),
    "fullwidth": _fullwidth,
    "leet": lambda text: text.translate(_LEET),
    "spaced": lambda text: "   ".join(" ".join(word) for word in text.split(" ")),
    "zw": _zero_width,
    "combining": _combining,
    "html": _html,
    "percent": lambda text: urllib.parse.quote(text, safe=""),
}


def _apply(transform: str, text: str) -> str:
    encode = TRANSFORMS[transform]
    if _PAYLOAD.search(text):
        return _PAYLOAD.sub(lambda match: encode(match.group(1)), text)
    return encode(text)


@cache
def load_corpus(path: Path = CORPUS_PATH) -> tuple[CorpusItem, ...]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if tuple(lines[0].split("\t")) != COLUMNS:
        raise ValueError(f"{path.name}: header is not {COLUMNS}")
    items: list[CorpusItem] = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(COLUMNS):
            raise ValueError(f"{path.name}:{number}: {len(fields)} columns, not {len(COLUMNS)}")
        ident, label, category, transform, split, text = fields
        if label not in ("malicious", "benign") or split not in ("tune", "heldout"):
            raise ValueError(f"{path.name}:{number}: bad label or split")
        if transform not in TRANSFORMS:
            raise ValueError(f"{path.name}:{number}: unknown transform {transform!r}")
        items.append(
            CorpusItem(
                ident,
                label == "malicious",
                category,
                transform,
                split,
                _apply(transform, _unescape(text)),
            )
        )
    return tuple(items)
