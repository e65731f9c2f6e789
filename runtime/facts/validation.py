"""The rules a fact's fields obey, each written once.

The store applies every rule to every write, whoever the caller is (a tool, auto-capture, a
provider request, a future import), so malformed input never reaches SQL. A refusal is an
``InvalidRequestError`` whose message is safe to show to the model.

The tool input models (``runtime.facts.tools``) do not repeat these rules. They declare the same
bounds, from the limits in ``runtime.facts.model``, in the JSON schema the model reads, so pydantic
refuses an out-of-bounds field with its location before the store is called; the one rule a
schema cannot express, ``unstorable``, is attached to them through ``AfterValidator``. What the
schema lets through and a rule refuses (a text of spaces only, say) comes back as the store's
refusal. Who owns what:

- text (stripped, non-empty, ``MAX_TEXT_CHARS``), tags (stripped, non-empty, ``MAX_TAG_CHARS``
  each, distinct, ``MAX_TAGS``), reason (``MAX_REASON_CHARS``), memory id: here; the tools'
  schema declares the bounds;
- storable text (no NUL, no lone surrogate): here, used by the store and by the tool models;
- ttl: here a positive whole number of milliseconds; the one-hour floor and the ten-year ceiling
  of ``ttlDays`` (the contract's bounds) are the ``Remember`` tool's own rule;
- provenance: here only (the tools never take it from the model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import (
    MAX_EVIDENCE,
    MAX_KEYED_TEXT_BYTES,
    MAX_REASON_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TEXT_CHARS,
    InvalidRequestError,
    Provenance,
    check_fact_key,
    check_tier,
)
from specwire.runtime.facts.text import normalize_text
from specwire.runtime.safety.redaction import redact, redactor


def unstorable(value: str) -> str | None:
    """Why SQLite cannot keep ``value`` as UTF-8 text (a NUL character, a lone surrogate), or
    None. (SQLite's ``length()`` stops at a NUL, and a surrogate cannot be encoded.)"""
    if "\x00" in value:
        return "must not contain a NUL character"
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text"
    return None


def _storable(value: str, what: str, hide: Callable[[str], str] = redact) -> str:
    problem = unstorable(value)
    if problem is not None:
        raise InvalidRequestError(f"{what} {problem}")
    return hide(value)  # a secret value never reaches the store (every backend builds here)


def fact_text(text: str, hide: Callable[[str], str] = redact) -> str:
    """The text of a fact: stripped, non-empty, at most ``MAX_TEXT_CHARS``, storable."""
    if not isinstance(text, str) or not (text := text.strip()):
        raise InvalidRequestError("a memory needs non-empty text")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidRequestError(
            f"memory text is too long ({len(text)} characters; at most {MAX_TEXT_CHARS})"
        )
    return _storable(text, "memory text", hide)


def keyed_text(text: str, hide: Callable[[str], str] = redact) -> str:
    """The text of a keyed fact (a tier note): stripped, non-empty, storable, at most
    ``MAX_KEYED_TEXT_BYTES`` UTF-8 bytes."""
    if not isinstance(text, str) or not (text := text.strip()):
        raise InvalidRequestError("a memory needs non-empty text")
    problem = unstorable(text)
    if problem is not None:
        raise InvalidRequestError(f"memory text {problem}")
    size = len(text.encode("utf-8"))
    if size > MAX_KEYED_TEXT_BYTES:
        raise InvalidRequestError(
            f"memory text is too long ({size} bytes; at most {MAX_KEYED_TEXT_BYTES})"
        )
    return hide(text)


def scope_key(value: ScopeKey) -> ScopeKey:
    if not isinstance(value, ScopeKey):
        raise InvalidRequestError("a memory's scope must be a ScopeKey")
    return value


def fact_tags(tags: Sequence[str], hide: Callable[[str], str] = redact) -> tuple[str, ...]:
    """Tags, each stripped, non-empty and storable; duplicates dropped; at most ``MAX_TAGS``."""
    if isinstance(tags, str):
        raise InvalidRequestError("tags must be a list of strings, not one string")
    cleaned: dict[str, None] = {}
    for tag in tags:
        if not isinstance(tag, str) or not (tag := tag.strip()):
            raise InvalidRequestError("every tag must be a non-empty string")
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidRequestError(f"tag is too long (at most {MAX_TAG_CHARS} characters)")
        cleaned[_storable(tag, "a tag", hide)] = None
    if len(cleaned) > MAX_TAGS:
        raise InvalidRequestError(f"too many tags ({len(cleaned)}; at most {MAX_TAGS})")
    return tuple(cleaned)


def ttl_ms(value: int | None) -> int | None:
    """A lifetime in milliseconds: None (the fact never expires) or a positive whole number.

    The store takes any positive lifetime; the floor a model must respect (one hour) is the
    ``Remember`` tool's own rule.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidRequestError(f"ttl_ms must be a positive whole number (got {value!r})")
    return value


def provenance(given: Provenance | None, hide: Callable[[str], str] = redact) -> Provenance:
    """Provenance with a non-empty session id (or none) and distinct, non-empty evidence ids."""
    if given is None or given == _NO_PROVENANCE:
        return _NO_PROVENANCE
    session_id = given.session_id
    if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
        raise InvalidRequestError("provenance.session_id must be a non-empty string")
    if session_id is not None:
        _storable(session_id, "provenance.session_id", hide)
    evidence = tuple(dict.fromkeys(given.evidence))
    if any(not isinstance(ref, str) or not ref.strip() for ref in evidence):
        raise InvalidRequestError("provenance.evidence must hold non-empty tool-use ids")
    for ref in evidence:
        _storable(ref, "provenance.evidence", hide)
    if len(evidence) > MAX_EVIDENCE:
        raise InvalidRequestError(f"too much evidence ({len(evidence)}; at most {MAX_EVIDENCE})")
    return Provenance(session_id, evidence)


_NO_PROVENANCE = Provenance()


def reason(value: str | None) -> str | None:
    """Why a fact stopped being live: stripped (blank is no reason), at most
    ``MAX_REASON_CHARS``, storable."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if len(value) > MAX_REASON_CHARS:
        raise InvalidRequestError(f"reason is too long (at most {MAX_REASON_CHARS} characters)")
    return _storable(value, "the reason")


def memory_id(fact_id: str) -> str:
    """An id of the form ``mem_<16 hex>``."""
    if not isinstance(fact_id, str) or not MEMORY_ID_RE.match(fact_id):
        raise InvalidRequestError(f"not a memory id: {fact_id!r} (expected mem_<16 hex>)")
    return fact_id


class NewFact:
    """A fact about to be written, every field checked by the rules above."""

    __slots__ = ("key", "norm_text", "provenance", "scope", "tags", "text", "tier", "ttl_ms")

    def __init__(
        self,
        text: str,
        tags: Sequence[str] = (),
        ttl: int | None = None,
        source: Provenance | None = None,
        *,
        scope: ScopeKey = AGENT,
        key: str | None = None,
        tier: str | None = None,
    ) -> None:
        """A keyed fact (``key``) may hold up to ``MAX_KEYED_TEXT_BYTES``; a plain one
        ``MAX_TEXT_CHARS``. A ``tier`` needs a ``key``."""
        self.scope = scope_key(scope)
        self.key = None if key is None else check_fact_key(key)
        self.tier = None if tier is None else check_tier(tier)
        if self.tier is not None and self.key is None:
            raise InvalidRequestError("a tier note needs a key")
        hide = redactor()  # the secrets looked up once for the text and every tag
        self.text = fact_text(text, hide) if self.key is None else keyed_text(text, hide)
        self.norm_text = normalize_text(self.text)
        self.tags = fact_tags(tags, hide)
        self.ttl_ms = ttl_ms(ttl)
        self.provenance = provenance(source, hide)
