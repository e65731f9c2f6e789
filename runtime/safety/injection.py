"""The prompt-injection scanner every memory write and every read into the prompt goes through.

``scan(text)`` returns the first rule that fires, or None. The rule set is Crewship's
(``prompt_injection``, ``exfiltration``, ``persistence``, ``invisible_unicode``,
``base64_obfuscation``) with its passes, in its order, plus the evasions it learned later:

1. invisible characters: any Unicode format (Cf) character or Hangul filler, except a zero-width
   joiner inside an emoji sequence (family emoji are text people write);
2. the rules on the raw text;
3. the rules again after NFKD, dropping combining marks and folding Cyrillic/Greek look-alikes
   to Latin (rule suffix ``_homoglyph``);
4. compact forms: letters and digits only, lower case, so ``i-g-n-o-r-e``, a phrase split across
   lines or padded with punctuation still reads as itself (suffix ``_compact``);
5. base64 (20+ chars) and hex (24+ digits) blocks that decode to text, at most 256 of them,
   re-scanned whole (category ``base64_obfuscation``, suffix ``_base64`` / ``_hex``).

Passes 2-4 also run the plain-English paraphrase rules of ``injection_paraphrases`` (instruction
override, authority spoofing, exfiltration, command coercion), after the canonical ones.

A hit names its rule and category only: callers show labels, never the matched text.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass, replace
from typing import Final

from specwire.runtime.safety.injection_paraphrases import (
    COMPACT_PARAPHRASES,
    PARAPHRASES,
    Paraphrase,
)

MAX_SCAN_CHARS: Final = 200_000
MAX_DECODED_BLOCKS: Final = 256


@dataclass(frozen=True)
class InjectionHit:
    """The rule the scanner flagged a text with."""

    rule: str  # e.g. "ignore_previous_instructions_homoglyph"
    category: str  # prompt_injection | exfiltration | persistence | invisible_unicode | …

    @property
    def label(self) -> str:
        return f"{self.category}/{self.rule}"


class _LazyPattern:
    """A rule's regex, compiled on its first search: compiling every rule costs more than the
    rest of this module's import, and most processes (a bundle's first turn) never scan."""

    __slots__ = ("source", "_compiled")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:  # a race compiles twice, harmlessly
            self._compiled = re.compile(self.source, re.IGNORECASE | re.DOTALL)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled().search(text)


@dataclass(frozen=True)
class _Rule:
    """One scanner rule: its name, category, pattern and the words it needs."""

    name: str
    category: str
    pattern: _LazyPattern
    # Words the pattern cannot match without (each group: one of them), tested on the casefolded
    # text first: substring tests cost ~50x less than the regexes on a 2,000-character fact.
    needs: tuple[tuple[str, ...], ...] = ()
    # Of those, the ones the pattern only matches as a whole word (between \b): tested against
    # the text's words, which is far more selective than a substring ("sh", "rm", "you").
    # In ``needs`` they are written with a leading NUL so they never stand for a substring hit.
    whole_words: frozenset[str] = frozenset()

    def may_match(self, present: frozenset[str]) -> bool:
        """Whether every group of needed words has one in ``present`` (the words found)."""
        return all(not present.isdisjoint(group) for group in self.needs)


_WORD: Final = re.compile(r"\w+")
_WHOLE: Final = "\0"
# ASCII bytes that are not word characters, as blanks: translate and split on bytes is ~3x
# faster than a regex for the words of a 2,000-character text.
_ASCII_WORD_BLANKS: Final = bytes(
    code if code < 128 and (chr(code).isalnum() or chr(code) == "_") else 0x20
    for code in range(256)
)


def _words(cased: str) -> list[str]:
    """The words (``\\w+`` runs) of ``cased``."""
    if cased.isascii():
        return cased.encode("ascii").translate(_ASCII_WORD_BLANKS).decode("ascii").split()
    return _WORD.findall(cased)


class _Gate:
    """The rules a text may trip, from which of their needed words it contains.

    One substring test per distinct substring word and one set intersection with the text's
    words, then one dictionary lookup: texts that contain the same needed words (most benign
    ones: none) share the answer. Whole-word hits are kept apart from substring hits (``nc``
    found inside "since" lets no rule through that needs the word ``nc``).
    """

    _MAX_REMEMBERED: Final = 4096

    def __init__(self, rules: tuple[_Rule, ...]) -> None:
        self._rules = rules
        self._substrings = tuple(
            sorted(
                {
                    word
                    for rule in rules
                    for group in rule.needs
                    for word in group
                    if not word.startswith(_WHOLE)
                }
            )
        )
        self._whole_words = frozenset(word for rule in rules for word in rule.whole_words)
        self._by_words: dict[frozenset[str], tuple[_Rule, ...]] = {}

    def rules_for(self, cased: str) -> tuple[_Rule, ...]:
        found = [word for word in self._substrings if word in cased]
        if self._whole_words:
            found += [_WHOLE + word for word in self._whole_words.intersection(_words(cased))]
        present = frozenset(found)
        rules = self._by_words.get(present)
        if rules is None:
            rules = tuple(rule for rule in self._rules if rule.may_match(present))
            if len(self._by_words) < self._MAX_REMEMBERED:
                self._by_words[present] = rules
        return rules


def _rule(name: str, category: str, pattern: str) -> _Rule:
    return _Rule(name, category, _LazyPattern(pattern))


# No "my" or "our": a customer asking the business to ignore their own earlier instructions
# about a delivery is an ordinary note.
_ANY = r"(?:(?:all|any|every|each|of|the|your|these|those|earlier|other)\s+)*"
_RULES: Final = (
    _rule(
        "ignore_previous_instructions",
        "prompt_injection",
        rf"\b(?:ignore|forget|override|bypass)\s+{_ANY}(?:previous|prior|above|preceding|former|"
        r"earlier|system|original|developer)\s+(?:instructions?|prompts?|rules|directions|"
        r"directives|guidelines|messages|context)\b",
    ),
    _rule(
        "ignore_all_instructions",
        "prompt_injection",
        rf"\b(?:ignore|forget|disregard)\s+(?:all|everything|any)\s+{_ANY}"
        r"(?:instructions?|rules|you\s+(?:were|have\s+been)\s+told)\b",
    ),
    _rule(
        "disregard_rules",
        "prompt_injection",
        r"\bdisregard\s+(?:(?:all|any|your|the|of)\s+)*(?:rules|instructions|guidelines|"
        r"the\s+(?:above|system|previous))\b",
    ),
    _rule(
        "you_are_now",
        "prompt_injection",
        r"\byou\s+are\s+now\s+(?:(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|"
        r"evil|rogue|free|different|new)\b|in\s+(?:developer|dan|god|jailbreak)\s+mode|"
        r"no\s+longer|dan\b|acting\s+as|an?\s+ai\s+(?:without|with\s+no))",
    ),
    _rule(
        "new_system_prompt",
        "prompt_injection",
        r"(?:^|\n)\s*(?:new\s+)?(?:system\s+(?:prompt|message|instructions?)|"
        r"new\s+instructions?)\s*:",
    ),
    _rule(
        "reveal_system_prompt",
        "exfiltration",
        r"\b(?:reveal|print|show|output|repeat|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system|hidden|"
        r"initial|original)\s+(?:prompt|instructions?)\b",
    ),
    _rule(
        "html_ignore_comment",
        "prompt_injection",
        r"<!--.*?\b(?:ignore|system|instructions?|assistant|developer)\b.*?-->",
    ),
    _rule(
        "ignore_the_above",
        "prompt_injection",
        r"\b(?:ignore|disregard|forget|dismiss)\s+(?:all\s+|everything\s+)?(?:of\s+)?"
        r"(?:the\s+above|everything\s+(?:above|before\s+(?:this|now|here)|you\s+(?:know|were\s+told))|"
        r"your\s+(?:instructions|rules|guidelines|programming|system\s+prompt|training))\b",
    ),
    _rule(
        "pretend_unrestricted",
        "prompt_injection",
        r"\b(?:pretend|act\s+as\s+if|imagine)\s+(?:that\s+)?you\s+(?:are|have|were)\b"
        r"[^\n]{0,60}\b(?:no|without|free\s+of)\s+(?:restrictions|limits|rules|filters|"
        r"guidelines|limitations)",
    ),
    _rule(
        "chat_role_tag",
        "prompt_injection",
        r"<\|?\s*/?\s*(?:system|im_start|im_end|assistant)\s*\|?>",
    ),
    _rule(
        "curl_with_token",
        "exfiltration",
        r"(?:curl|wget)[^\n]*\$\{?(?:[A-Z_]*_)?(?:TOKEN|API_KEY|SECRET|PASSWORD|CREDENTIALS?|AUTH)",
    ),
    _rule(
        "cat_env_pipe_network",
        "exfiltration",
        r"\b(?:cat|printenv|env|set)\b[^\n|]*(?:\|\s*(?:base64\s*\|\s*)?)(?:curl|wget|nc|ncat|"
        r"netcat|socat)\b",
    ),
    _rule(
        "read_secret_files",
        "exfiltration",
        r"\b(?:cat|print|read|send|upload|show|dump|exfiltrate)\b[^\n]{0,40}(?:~|\$HOME|/root|"
        r"/home/\w+)?/\.(?:ssh|aws|gnupg|netrc|docker/config)",
    ),
    _rule(
        "aws_s3_exfil_ssh",
        "exfiltration",
        r"\baws\s+s3\s+(?:cp|sync|mv)\b[^\n]*(?:\.ssh|\.aws|id_rsa|credentials)",
    ),
    _rule(
        "authorized_keys_append", "persistence", r">>\s*~?/?(?:[\w./-]*/)?\.ssh/authorized_keys\b"
    ),
    _rule("crontab_register", "persistence", r"\|\s*crontab\s+-(?:\s|$)"),
    _rule(
        "url_exfil_query_token",
        "exfiltration",
        r"https?://\S*[?&](?:token|api_?key|secret|password|passwd|auth|session|cookie|key)="
        r"(?:\$\{?[A-Z_]+|\{\{)",
    ),
    _rule(
        "url_exfil_path_token",
        "exfiltration",
        r"https?://\S*/\$\{?(?:[A-Z_]*_)?(?:TOKEN|API_KEY|SECRET|PASSWORD|KEY)\b",
    ),
)

# The same phrases with every non-alphanumeric character removed (pass 4).
_COMPACT_RULES: Final = (
    _rule(
        "ignore_previous_instructions",
        "prompt_injection",
        r"(?:ignore|forget|disregard|override)(?:all|any|the|your|of|every)*(?:previous|prior|"
        r"above|preceding|earlier|system|original)(?:instructions?|prompts?|rules|directions|"
        r"guidelines)",
    ),
    _rule(
        "ignore_all_instructions",
        "prompt_injection",
        r"(?:ignore|forget|disregard)(?:all|everything)(?:the|your|of)*(?:instructions?|rules|"
        r"youweretold)",
    ),
    _rule("you_are_now", "prompt_injection", r"youarenow(?:dan|jailbroken|unrestricted|nolonger)"),
    _rule(
        "reveal_system_prompt",
        "exfiltration",
        r"(?:reveal|print|show|leak|repeat)(?:me)?(?:your|the)(?:system|hidden|initial)"
        r"(?:prompt|instructions?)",
    ),
    _rule("authorized_keys_append", "persistence", r"sshauthorizedkeys"),
)

_NEEDS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "ignore_previous_instructions": (("ignore", "forget", "override", "bypass"),),
    "ignore_all_instructions": (("ignore", "forget", "disregard"),),
    "disregard_rules": (("disregard",),),
    "you_are_now": (("you",), ("are",), ("now",)),
    "new_system_prompt": ((":",), ("system", "instruction")),
    "reveal_system_prompt": (
        ("reveal", "print", "show", "output", "repeat", "leak"),
        ("prompt", "instruction"),
    ),
    "html_ignore_comment": (
        ("<!--",),
        ("ignore", "system", "instruction", "assistant", "developer"),
    ),
    "ignore_the_above": (("ignore", "disregard", "forget", "dismiss"),),
    # Single words: the pattern allows any whitespace inside "act as if" and "free of".
    "pretend_unrestricted": (("pretend", "act", "imagine"), ("no", "without", "free")),
    "chat_role_tag": (("<",), ("system", "im_start", "im_end", "assistant")),
    "curl_with_token": (("curl", "wget"),),
    "cat_env_pipe_network": (("|",), ("curl", "wget", "nc", "socat")),
    "read_secret_files": (("/.",), ("ssh", "aws", "gnupg", "netrc", "docker")),
    "aws_s3_exfil_ssh": (("aws",), ("s3",)),
    "authorized_keys_append": ((">>",), ("authorized_keys",)),
    "crontab_register": (("crontab",),),
    "url_exfil_query_token": (("http",), ("=",)),
    "url_exfil_path_token": (("http",), ("$",)),
}
_COMPACT_NEEDS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "ignore_previous_instructions": (("ignore", "forget", "disregard", "override"),),
    "ignore_all_instructions": (("ignore", "forget", "disregard"),),
    "you_are_now": (("youarenow",),),
    "reveal_system_prompt": (("reveal", "print", "show", "leak", "repeat"),),
    "authorized_keys_append": (("sshauthorizedkeys",),),
}


def _paraphrase_rules(entries: tuple[Paraphrase, ...]) -> tuple[_Rule, ...]:
    """Paraphrase needs are whole words unless marked ``~`` (a substring)."""
    rules = []
    for name, category, pattern, needs in entries:
        groups = tuple(
            tuple(word[1:] if word.startswith("~") else _WHOLE + word for word in group)
            for group in needs
        )
        whole = frozenset(word for group in needs for word in group if not word.startswith("~"))
        rules.append(replace(_rule(name, category, pattern), needs=groups, whole_words=whole))
    return tuple(rules)


# The canonical phrases first (their labels are what older quarantine entries carry), then the
# plain-English paraphrases.
_SCREENED_RULES: Final = _Gate(
    tuple(replace(rule, needs=_NEEDS[rule.name]) for rule in _RULES)
    + _paraphrase_rules(PARAPHRASES)
)
_SCREENED_COMPACT: Final = _Gate(
    tuple(replace(rule, needs=_COMPACT_NEEDS[rule.name]) for rule in _COMPACT_RULES)
    + _paraphrase_rules(COMPACT_PARAPHRASES)
)

# Pass 1: invisible characters. Hangul fillers are letters (Lo), used as blanks by evaders.
_HANGUL_FILLERS: Final = frozenset("\u115f\u1160\u3164\uffa0")
_ZWJ: Final = "\u200d"
_SCRIPT_JOINERS: Final = frozenset("\u200c\u200d")
_SOFT_HYPHEN: Final = "\u00ad"
_DIRECTION_MARKS: Final = frozenset("\u200e\u200f\u061c")

# Pass 3: letters from other scripts that look like Latin ones (NFKD does not fold these).
_HOMOGLYPHS: Final = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "в": "b",
        "е": "e",
        "ё": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "ԁ": "d",
        "ɡ": "g",
        "ԛ": "q",
        "ԝ": "w",
        "һ": "h",
        "ӏ": "l",
        "ո": "n",
        "А": "A",
        "В": "B",
        "Е": "E",
        "К": "K",
        "М": "M",
        "Н": "H",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "У": "Y",
        "Х": "X",
        "Ѕ": "S",
        "І": "I",
        "Ј": "J",
        # Greek
        "α": "a",
        "β": "b",
        "ε": "e",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "γ": "y",
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
        # Small capitals (IPA and phonetic letters) that NFKD keeps
        "ᴀ": "a",
        "ʙ": "b",
        "ᴄ": "c",
        "ᴅ": "d",
        "ᴇ": "e",
        "ғ": "f",
        "ɢ": "g",
        "ʜ": "h",
        "ɪ": "i",
        "ᴊ": "j",
        "ᴋ": "k",
        "ʟ": "l",
        "ᴍ": "m",
        "ɴ": "n",
        "ᴏ": "o",
        "ᴘ": "p",
        "ʀ": "r",
        "ꜱ": "s",
        "ᴛ": "t",
        "ᴜ": "u",
        "ᴠ": "v",
        "ᴡ": "w",
        "ʏ": "y",
        "ᴢ": "z",
        # Armenian
        "օ": "o",
        "ս": "u",
        "ց": "g",
        # Latin look-alikes outside ASCII that NFKD keeps
        "ı": "i",
        "ł": "l",
        "ø": "o",
        "đ": "d",
        "ħ": "h",
        "ŀ": "l",
    }
)

# Digits read as letters (1gn0re), for the compact pass.
_LEET: Final = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})

# Anchored where a run of the alphabet starts, so a short run costs one step, not twenty: the
# same blocks as unanchored (a greedy match always starts at its run's first character).
_BASE64_BLOCK: Final = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}={0,2}")
# 12 bytes and up: "you are now DAN" is 15.
_HEX_BLOCK: Final = re.compile(r"(?:0x)?(?<![0-9a-fA-F])((?:[0-9a-fA-F]{2}){12,})")
_NOT_ALNUM: Final = re.compile(r"[\W_]+")
# The same for ASCII text, as one table lookup per character.
_ASCII_NOT_ALNUM: Final = str.maketrans(
    dict.fromkeys(chr(code) for code in range(128) if not chr(code).isalnum())
)


def scan(text: str) -> InjectionHit | None:
    """The first rule ``text`` trips, or None. Never raises."""
    text = text[:MAX_SCAN_CHARS]
    invisible = None if text.isascii() else _invisible_char(text)
    if invisible is not None:
        return InjectionHit(invisible, "invisible_unicode")
    hit = _scan_text(text)
    if hit is not None:
        return hit
    unescaped = _unescaped(text)
    if unescaped != text:
        hit = _scan_text(unescaped, "_escaped")
        if hit is not None:
            return hit
    return _scan_encoded(text)


def _unescaped(text: str) -> str:
    """HTML character references and URL %-escapes decoded (``&#105;gnore``, ``ignore%20all``)."""
    if "&" in text:
        text = html.unescape(text)
    if "%" in text:
        text = urllib.parse.unquote(text)
    return text


def _scan_text(text: str, suffix: str = "") -> InjectionHit | None:
    for rule in _SCREENED_RULES.rules_for(text.casefold()):
        if rule.pattern.search(text):
            return InjectionHit(rule.name + suffix, rule.category)
    folded = text if text.isascii() else _fold(text)
    if folded != text:
        for rule in _SCREENED_RULES.rules_for(folded.casefold()):
            if rule.pattern.search(folded):
                return InjectionHit(f"{rule.name}{suffix}_homoglyph", rule.category)
    compact = _compact(folded)
    for rule in _SCREENED_COMPACT.rules_for(compact):
        if rule.pattern.search(compact):
            return InjectionHit(f"{rule.name}{suffix}_compact", rule.category)
    leet = compact.translate(_LEET)
    if leet != compact:
        for rule in _SCREENED_COMPACT.rules_for(leet):
            if rule.pattern.search(leet):
                return InjectionHit(f"{rule.name}{suffix}_leet", rule.category)
    return None


def _compact(text: str) -> str:
    """Letters and digits only, lower case."""
    if text.isascii():
        return text.translate(_ASCII_NOT_ALNUM).lower()
    return _NOT_ALNUM.sub("", text).lower()


def _invisible_char(text: str) -> str | None:
    for index, char in enumerate(text):
        if char in _HANGUL_FILLERS:
            return "hangul_filler"
        if unicodedata.category(char) != "Cf":
            continue
        if char == _ZWJ and _emoji_join(text, index):
            continue
        if _written_use(text, index, char):
            continue
        return "format_character"
    return None


def _written_use(text: str, index: int, char: str) -> bool:
    """Format characters that scripts need, where they need them: a joiner or non-joiner
    between two letters of a non-Latin script (Persian می‌خواهم, Indic conjuncts), a soft hyphen
    inside a word, a left-to-right or right-to-left mark in text with Hebrew or Arabic letters."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    if char in _SCRIPT_JOINERS:
        return _script_letter(before) and _script_letter(after)
    if char == _SOFT_HYPHEN:
        return before.isalpha() and after.isalpha()
    if char in _DIRECTION_MARKS:
        return any("\u0590" <= c <= "\u08ff" or "\ufb1d" <= c <= "\ufdff" for c in text)
    return False


def _script_letter(char: str) -> bool:
    return bool(char) and not char.isascii() and unicodedata.category(char)[0] in "LM"


def _emoji_join(text: str, index: int) -> bool:
    """A zero-width joiner between two pictographs (👨‍👩‍👧), as emoji sequences use it."""
    before = text[index - 1] if index > 0 else ""
    if before == "\ufe0f" and index > 1:  # a variation selector may sit before the joiner
        before = text[index - 2]
    after = text[index + 1] if index + 1 < len(text) else ""
    return _pictograph(before) and _pictograph(after)


def _pictograph(char: str) -> bool:
    return bool(char) and (unicodedata.category(char) == "So" or ord(char) >= 0x1F000)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(char for char in decomposed if not unicodedata.combining(char))
    return stripped.translate(_HOMOGLYPHS)


def _scan_encoded(text: str) -> InjectionHit | None:
    # Both kinds of block are 20+ characters without whitespace: most texts have no such word.
    if all(len(word) < 20 for word in text.split()):
        return None
    blocks = 0
    for match in _BASE64_BLOCK.finditer(text):
        blocks += 1
        if blocks > MAX_DECODED_BLOCKS:
            return None
        decoded = _decode_base64(match.group())
        hit = _scan_decoded(decoded, "_base64")
        if hit is not None:
            return hit
    for match in _HEX_BLOCK.finditer(text):
        blocks += 1
        if blocks > MAX_DECODED_BLOCKS:
            return None
        try:
            decoded = _printable(bytes.fromhex(match.group(1)))
        except ValueError:
            decoded = None
        hit = _scan_decoded(decoded, "_hex")
        if hit is not None:
            return hit
    return None


def _scan_decoded(decoded: str | None, suffix: str) -> InjectionHit | None:
    if not decoded:
        return None
    invisible = _invisible_char(decoded)
    if invisible is not None:
        return InjectionHit(invisible + suffix, "base64_obfuscation")
    hit = _scan_text(decoded, suffix)
    return None if hit is None else InjectionHit(hit.rule, "base64_obfuscation")


def _decode_base64(block: str) -> str | None:
    body = block.rstrip("=")
    alphabet_urlsafe = "-" in body or "_" in body
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = (base64.urlsafe_b64decode if alphabet_urlsafe else base64.b64decode)(padded)
    except (binascii.Error, ValueError):
        return None
    return _printable(raw)


def _printable(raw: bytes) -> str | None:
    """The bytes as text when they are mostly printable UTF-8 (a payload), else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    printable = sum(1 for char in text if char.isprintable() or char in "\n\t")
    return text if printable / len(text) >= 0.9 else None
