"""What is being erased: a literal text or a regular expression, both case-insensitive.

A literal subject matches across any separator between its words (spaces, line breaks, ``.``,
``-``, ``_``: "Alice Smith" also finds ``alice.smith``, ``alice-smith``, ``ALICE\\nSMITH``) and
also in folded form: NFKC + casefold with separators collapsed, so full-width or compatibility
letters (``Ａｌｉｃｅ Ｓｍｉｔｈ``) are found too. Text is redacted to ``[erased]``; a line that
holds the subject only in folded form is replaced whole. Names and slugs are redacted to
``erased``. Slugs are matched in the form the runtime gives them too: plan and article slugs
keep only ASCII letters and digits (``Zoë Müller`` → ``zo-m-ller``), and a slug a model wrote
may be transliterated (``zoe-muller``); both forms are found and redacted wherever they stand
as a slug. The subject itself is never written anywhere: a receipt holds a keyed hash of it
(``runtime.erasure.receipt``), never a plain one a list of candidate names could be checked
against.

``check_structure`` refuses a subject that matches part of the stores' own structure (ids such
as ``plan-0001``, markers such as ``<!-- specwire:handoff -->``, JSON syntax, folder and spec
names): erasing it would break the files instead of removing a person from them.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

REDACTED: Final = "[erased]"
REDACTED_SLUG: Final = "erased"
MIN_SUBJECT_CHARS: Final = 3
_SEPARATOR: Final = r"[\s\W_]{1,3}"
_NOT_WORD: Final = re.compile(r"[\W_]+")
# What the stores' own files are made of: a subject matching any of it is refused.
STRUCTURE: Final = (
    '{"key": ["value", 1, true, null]}, --- # ## Steps ## Sources ## Focus ## Handoff '
    "<!-- specwire:handoff --> 1. [proven] [claimed] [open] [done] plan-0001 ACTIVE "
    "sess_0123456789abcdef mem_0123456789abcdef tu_0123456789abcdef gap-x "
    "createdAt updatedAt supersedes verified confidence status version slug title "
    ".md .json .jsonl .yaml .sqlite3 .lexical .vectors .swept .evidence.key "
    "facts state sessions plans articles versions wiki trash tenants usage erasures "
    "goals focus handoff ledger requirements retention [erased] erased"
)


class SubjectError(ValueError):
    """The subject cannot be erased safely (too short, empty match, bad regex, structural)."""


@dataclass(frozen=True)
class Subject:
    pattern: re.Pattern[str]
    byte_patterns: tuple[re.Pattern[bytes], ...]
    folded: str | None  # the literal subject folded (None for a regex)
    identity: str  # what a receipt's keyed hash is computed over; never written itself
    kind: str  # "literal" | "regex"
    # The subject's slug forms (the runtime's and a transliterated one) where they differ from
    # what ``pattern`` finds; matched only where they stand whole between non-slug characters.
    slug_pattern: re.Pattern[str] | None = None
    # An identifier's forms without the whole-id boundaries, for binary files (a SQLite record
    # stores its columns back to back: ``userU0123`` is the scope beside the subject).
    binary_pattern: re.Pattern[bytes] | None = None
    # An identifier as a scope key's subject holds it: hosts key "Ana" and "ana" apart (their
    # folders and summaries are two people's), so a key's subject matches with its exact case.
    key_pattern: re.Pattern[str] | None = None

    @classmethod
    def literal(cls, text: str) -> Subject:
        text = " ".join(text.split())
        if len(_fold(text)) < MIN_SUBJECT_CHARS:
            raise SubjectError(
                f"the subject must have at least {MIN_SUBJECT_CHARS} letters or digits (a "
                "shorter one would erase far more than meant)"
            )
        words = [word for word in _NOT_WORD.split(text) if word]
        if not words:
            raise SubjectError("the subject has no letters or digits")
        pattern = re.compile(_SEPARATOR.join(re.escape(word) for word in words), re.IGNORECASE)
        raw = [_SEPARATOR.encode().join(re.escape(word.encode("utf-8")) for word in words)]
        escaped = json.dumps(text)[1:-1]  # as JSON written with ensure_ascii spells it
        if escaped != text:
            raw.append(re.escape(escaped.encode("ascii")))
        slugs = _slug_forms(text, pattern)
        slug_pattern = None
        if slugs:
            source = _SLUG_WHOLE.format("|".join(re.escape(slug) for slug in slugs))
            slug_pattern = re.compile(source, re.IGNORECASE)
            raw.append(source.encode("ascii"))
        return cls(
            pattern,
            tuple(re.compile(item, re.IGNORECASE) for item in raw),
            _fold(text),
            f"literal:{text}",
            "literal",
            slug_pattern,
        )

    @classmethod
    def identifier(cls, subject_id: str, identity: str) -> Subject:
        """A host's id for a subject (a Slack user id, a managed ``user``, a conversation key):
        matched exactly (without ASCII case: ``BOB`` is bob, ``ſam`` is not sam) and only
        whole, so erasing ``bob`` leaves ``bobby``, ``bob.smith`` and ``bob-2`` alone but finds
        ``webhook:user:bob`` and ``"user": "bob"``.
        ``identity`` is what the receipt's keyed hash covers (``user:bob``).

        A key the hosts namespace (``slack:<team>:<id>``, ``webhook:<id>``) is also matched as
        the bare id the host received and logs in each session's info (``"user": "U0123"``)."""
        ids = [subject_id, *host_local_ids(subject_id)]
        for one in ids:
            if len(_fold(one)) < MIN_SUBJECT_CHARS:
                raise SubjectError(
                    f"the id must have at least {MIN_SUBJECT_CHARS} letters or digits to be "
                    "searched for in logs (a shorter one would erase far more than meant)"
                )
        forms: list[str] = []
        for one in ids:
            forms.append(one)
            escaped = json.dumps(one)[1:-1]
            if escaped != one:
                forms.append(escaped)
        # Without ASCII case only, as the byte patterns below match: Unicode's case folding
        # would take another person's look-alike id for this one (``ſam`` for ``sam``).
        source = _WHOLE_ID.format("|".join(_ascii_caseless(form) for form in forms))
        pattern = re.compile(source)
        alternatives = "|".join(re.escape(form.encode("utf-8")).decode("latin-1") for form in forms)
        raw = re.compile(_WHOLE_ID.format(alternatives).encode("latin-1"), re.IGNORECASE)
        loose = re.compile(alternatives.encode("latin-1"), re.IGNORECASE)
        exact = re.compile(_WHOLE_ID.format("|".join(re.escape(form) for form in forms)))
        return cls(
            pattern,
            (raw,),
            None,
            identity,
            "identifier",
            binary_pattern=loose,
            key_pattern=exact,
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
        return cls(pattern, (raw,), None, f"regex:{source}", "regex")

    def check_structure(self, names: Iterable[str] = ()) -> None:
        """Refuse a subject that matches the stores' own structure or one of ``names`` (specs,
        tenants): erasing it would damage the files rather than remove a person from them."""
        probe = " ".join([STRUCTURE, *sorted(names)])
        found = self.pattern.search(probe)
        if found is None and self.slug_pattern is not None:
            found = self.slug_pattern.search(probe)
        if found is None and self.folded is not None and f" {self.folded} " in f" {_fold(probe)} ":
            found = re.search(re.escape(self.folded), _fold(probe))
        if found is not None:
            raise SubjectError(
                f'the subject matches part of the stores\' own structure ("{found.group(0)}": '
                "ids, markers, folder or spec names); erase something more specific"
            )

    def matches(self, text: str) -> bool:
        if self.pattern.search(text) is not None:
            return True
        if self.slug_pattern is not None and self.slug_pattern.search(text) is not None:
            return True
        return self.folded is not None and self.folded in _fold(text)

    def names_key(self, scope_subject: str) -> bool:
        """Whether a scope key's subject (``user:<id>``'s id, a conversation key holding the
        person's id) is the subject's: an identifier with its exact case, anything else as
        ``matches``."""
        if self.key_pattern is not None:
            return self.key_pattern.search(scope_subject) is not None
        return self.matches(scope_subject)

    def redact(self, text: str) -> str:
        text = self.pattern.sub(lambda found: _replacement(found, text), text)
        if self.slug_pattern is not None:
            text = self.slug_pattern.sub(REDACTED_SLUG, text)
        if self.folded is None or self.folded not in _fold(text):
            return text
        # Only the folded form is left (other letter forms): the lines holding it go whole.
        return "".join(
            (REDACTED + line[len(line.rstrip("\r\n")) :]) if self.folded in _fold(line) else line
            for line in text.splitlines(keepends=True)
        )

    def redact_name(self, name: str) -> str:
        """A file or folder name without the subject (slug-shaped: no brackets, no spaces)."""
        name = self.pattern.sub(REDACTED_SLUG, name)
        if self.slug_pattern is not None:
            name = self.slug_pattern.sub(REDACTED_SLUG, name)
        if self.folded is not None and self.folded.replace(" ", "-") in name.lower():
            name = name.lower().replace(self.folded.replace(" ", "-"), REDACTED_SLUG)
        return name

    def count_in(self, data: bytes) -> int:
        """Occurrences in raw bytes: the patterns (ASCII letters without case), and the folded
        form in the bytes read as UTF-8 (other letter forms, split words)."""
        if self.binary_pattern is not None and b"\x00" in data:
            # Binary: no boundaries to rely on, so any occurrence counts (a longer id that
            # starts with this one too: verification errs towards "remains").
            return len(self.binary_pattern.findall(data))
        found = sum(len(pattern.findall(data)) for pattern in self.byte_patterns)
        if found or self.folded is None:
            return found
        return _fold(data.decode("utf-8", "ignore")).count(self.folded)


# The namespaces the hosts give subjects (``runtime.hosts.http``): a Slack id is qualified by
# its workspace, a webhook caller's by the webhook; their logs record the id as received.
_HOST_NAMESPACED: Final = (re.compile(r"^slack:[^:]+:([^:]+)$"), re.compile(r"^webhook:(.+)$"))


def _ascii_caseless(text: str) -> str:
    """A pattern matching ``text`` exactly but for the case of its ASCII letters."""
    return "".join(
        f"[{char.lower()}{char.upper()}]" if char.isascii() and char.isalpha() else re.escape(char)
        for char in text
    )


def host_local_ids(subject_id: str) -> list[str]:
    """The id as a host received it, for a subject the host namespaced (``slack:T1:U0123`` →
    ``U0123``); empty otherwise."""
    for namespace in _HOST_NAMESPACED:
        found = namespace.fullmatch(subject_id)
        if found is not None:
            return [found.group(1)]
    return []


def _replacement(found: re.Match[str], text: str) -> str:
    """``erased`` where the match is a slug (lower-case words joined by ``-``, or the target of
    a ``[[link]]``), so links and plan slugs stay well-formed; ``[erased]`` elsewhere."""
    matched = found.group(0)
    in_link = text[max(0, found.start() - 2) : found.start()] == "[["
    if in_link or ("-" in matched and _SLUG.fullmatch(matched)):
        return REDACTED_SLUG
    return REDACTED


_SLUG: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _fold(text: str) -> str:
    """NFKC, casefold, every run of non-letters/digits one space."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.split(folded)).strip()


_SLUG_WHOLE: Final = r"(?<![a-z0-9])(?:{})(?![a-z0-9])"
# An id stands whole: no word character, nor an id's own punctuation followed by one, on
# either side (``bob`` is not in ``bobby``, ``bob.smith`` or ``ann-bob``; it is in ``user:bob``
# and at a sentence's end, ``bob.``).
_WHOLE_ID: Final = r"(?<!\w)(?<!\w[.@+-])(?:{})(?!\w)(?![.@+-]\w)"


def _slug(text: str) -> str:
    """A text as the runtime slugs it (plans, wiki articles): ASCII letters and digits only."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _slug_forms(text: str, pattern: re.Pattern[str]) -> list[str]:
    """The subject's slug forms ``pattern`` does not already find, each with enough letters to
    be specific: the runtime's (non-ASCII letters dropped) and a transliterated one (accents
    removed by NFKD)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    forms = dict.fromkeys([_slug(text), _slug(ascii_text)])
    return [
        form
        for form in forms
        if len(form.replace("-", "")) >= MIN_SUBJECT_CHARS and pattern.fullmatch(form) is None
    ]
