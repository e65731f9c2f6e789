"""What is being erased: a literal text (case-insensitive) or a regular expression.

A literal subject also matches its slug form ("Alice Smith" → ``alice-smith``), the shape it
takes in plan and wiki file names and links. Text is redacted to ``[erased]``; names and slugs
to ``erased``. The subject itself is never written anywhere: a receipt holds its SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Final

REDACTED: Final = "[erased]"
REDACTED_SLUG: Final = "erased"
MIN_SUBJECT_CHARS: Final = 3


class SubjectError(ValueError):
    """The subject cannot be erased safely (too short, empty match, bad regex)."""


@dataclass(frozen=True)
class Subject:
    pattern: re.Pattern[str]
    slug_pattern: re.Pattern[str] | None
    byte_patterns: tuple[re.Pattern[bytes], ...]
    digest: str
    kind: str  # "literal" | "regex"

    @classmethod
    def literal(cls, text: str) -> Subject:
        text = " ".join(text.split())
        if len(text) < MIN_SUBJECT_CHARS:
            raise SubjectError(
                f"the subject must have at least {MIN_SUBJECT_CHARS} characters (a shorter one "
                "would erase far more than meant)"
            )
        words = [re.escape(word) for word in text.split(" ")]
        pattern = re.compile(r"\s+".join(words), re.IGNORECASE)
        slug = _slug(text)
        slug_pattern = re.compile(re.escape(slug), re.IGNORECASE) if len(slug) >= 3 else None
        raw = [rb"\s+".join(re.escape(w.encode("utf-8")) for w in text.split(" "))]
        if slug_pattern is not None:
            raw.append(re.escape(slug.encode("utf-8")))
        escaped = json.dumps(text)[1:-1]  # as JSON written with ensure_ascii spells it
        if escaped != text:
            raw.append(re.escape(escaped.encode("ascii")))
        return cls(
            pattern,
            slug_pattern,
            tuple(re.compile(item, re.IGNORECASE) for item in raw),
            _digest("literal", text),
            "literal",
        )

    @classmethod
    def regex(cls, source: str) -> Subject:
        try:
            pattern = re.compile(source, re.IGNORECASE)
            raw = re.compile(source.encode("utf-8"), re.IGNORECASE)
        except (re.error, UnicodeEncodeError) as exc:
            raise SubjectError(f"--regex: not a valid regular expression ({exc})") from None
        if pattern.search("") is not None or pattern.search(" ") is not None:
            raise SubjectError("--regex matches empty text: it would erase everything")
        return cls(pattern, None, (raw,), _digest("regex", source), "regex")

    def matches(self, text: str) -> bool:
        return self.pattern.search(text) is not None or (
            self.slug_pattern is not None and self.slug_pattern.search(text) is not None
        )

    def redact(self, text: str) -> str:
        text = self.pattern.sub(REDACTED, text)
        if self.slug_pattern is not None:
            text = self.slug_pattern.sub(REDACTED_SLUG, text)
        return text

    def redact_name(self, name: str) -> str:
        """A file or folder name without the subject (slug-shaped: no brackets, no spaces)."""
        name = self.pattern.sub(REDACTED_SLUG, name)
        if self.slug_pattern is not None:
            name = self.slug_pattern.sub(REDACTED_SLUG, name)
        return name

    def count_in(self, data: bytes) -> int:
        """Occurrences in raw bytes (UTF-8 text; ASCII letters compared without case)."""
        return sum(len(pattern.findall(data)) for pattern in self.byte_patterns)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _digest(kind: str, text: str) -> str:
    return "sha256:" + hashlib.sha256(f"{kind}:{text}".encode()).hexdigest()
