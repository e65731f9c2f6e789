"""Model ids ``codegen check`` accepts: a family the runtime has an adapter for, and an id of it
this specwire lists.

The families mirror ``specwire.runtime.models.select.provider_of`` (a test keeps the two in
step; the compiler may not import the runtime's models): ``anthropic/<model>`` and bare
``claude-*``; ``openai/<model>``, bare ``gpt-*`` and ``o<digit>…``; ``openai-compatible/<model>``
(any name: a local server serves what it serves); ``scripted`` and ``scripted/<anything>``.

Anthropic and OpenAI ids must be listed below, so a typo (``claude-sonet-4-5``) is refused with a
did-you-mean instead of failing on the first call. A model released after this specwire is
accepted with the spec's ``allowUnlistedModels: true``: its family is still checked.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from specwire.ir.suggest import did_you_mean
from specwire.ir.values import quote

ModelFamily = Literal["anthropic", "openai", "openai-compatible", "scripted"]

# The top-level key that accepts ids this list does not name (their family is still checked).
UNLISTED_MODELS_KEY: Final = "allowUnlistedModels"

ANTHROPIC_MODELS: Final[tuple[str, ...]] = (
    "claude-3-5-haiku-20241022",
    "claude-3-5-haiku-latest",
    "claude-3-7-sonnet-20250219",
    "claude-3-7-sonnet-latest",
    "claude-3-haiku-20240307",
    "claude-haiku-4-5",
    "claude-haiku-4-5-20251001",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-1-20250805",
    "claude-opus-4-20250514",
    "claude-opus-4-5",
    "claude-opus-4-5-20251101",
    "claude-sonnet-4-0",
    "claude-sonnet-4-20250514",
    "claude-sonnet-4-5",
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-6",
)
OPENAI_MODELS: Final[tuple[str, ...]] = (
    "gpt-3.5-turbo",
    "gpt-4",
    "gpt-4-turbo",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "gpt-4o",
    "gpt-4o-2024-08-06",
    "gpt-4o-2024-11-20",
    "gpt-4o-mini",
    "gpt-5",
    "gpt-5-chat-latest",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5.1",
    "o1",
    "o1-mini",
    "o1-pro",
    "o3",
    "o3-mini",
    "o3-pro",
    "o4-mini",
)
LISTED: Final[dict[str, tuple[str, ...]]] = {
    "anthropic": ANTHROPIC_MODELS,
    "openai": OPENAI_MODELS,
}

_PREFIXED: Final[dict[str, ModelFamily]] = {
    "anthropic": "anthropic",
    "openai": "openai",
    "openai-compatible": "openai-compatible",
    "scripted": "scripted",
}
_OPENAI_BARE: Final = re.compile(r"^(gpt-|o\d)")
_FAMILIES_PROSE: Final = (
    "anthropic/<model> or claude-*, openai/<model>, gpt-* or o<digit>…, "
    "openai-compatible/<model> (a server at OPENAI_BASE_URL), or scripted"
)


def family_of(model_id: str) -> tuple[ModelFamily, str] | None:
    """``(family, the model's name within it)``, or ``None`` when no adapter runs the id."""
    if model_id == "scripted":
        return "scripted", ""
    prefix, slash, rest = model_id.partition("/")
    if slash:
        family = _PREFIXED.get(prefix)
        return (family, rest.strip()) if family is not None and rest.strip() else None
    if model_id.startswith("claude-"):
        return "anthropic", model_id
    if _OPENAI_BARE.match(model_id):
        return "openai", model_id
    return None


def model_id_problem(model_id: str, *, unlisted_ok: bool = False) -> str | None:
    """Why ``model_id`` cannot run, or ``None``. Secret references (``$MODEL_ID``) are read at
    run time and are not looked at here."""
    if model_id.startswith("$") or not model_id.strip() or not model_id.isprintable():
        return None  # a reference, or a value the field's own rules refuse
    found = family_of(model_id)
    if found is None:
        return (
            f"unknown model family in {quote(model_id)}"
            f"{did_you_mean(model_id, _every_spelling())}: specwire runs {_FAMILIES_PROSE}"
        )
    family, name = found
    listed = LISTED.get(family)
    if listed is None or unlisted_ok or name in listed:
        return None
    prefix = "" if name == model_id else f"{family}/"
    suggestion = did_you_mean(model_id, [prefix + known for known in listed])
    return (
        f"unknown {family} model {quote(model_id)}{suggestion}; for a model newer than this "
        f"specwire's list, set {UNLISTED_MODELS_KEY}: true"
    )


def _every_spelling() -> list[str]:
    spellings = ["scripted"]
    for family, names in LISTED.items():
        spellings += names
        spellings += [f"{family}/{name}" for name in names]
    return spellings
