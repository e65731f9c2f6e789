"""The injection scanner on wiki articles: a flagged edit is refused, a flagged file is withheld.

An article is read into prompts (wiki recall, search, get), so it is screened like a fact: on
write the edit is refused with the rule that fired and nothing is written; on read (a file
written before a rule existed, or by hand) the article is withheld from every read, as a damaged
file is, until a person fixes it or the agent writes a clean version over it.
"""

from __future__ import annotations

from typing import Final

from specwire.runtime.safety.screening import scan
from specwire.runtime.wiki.article import Article

WITHHELD: Final = "withheld: flagged by the injection scanner"


def screen_article(article: Article) -> str | None:
    """Why the article must be withheld from reads, or None when it is clean."""
    hit = scan(article_text(article))
    return None if hit is None else f"{WITHHELD} ({hit.label})"


def article_text(article: Article) -> str:
    parts = [article.slug, article.title, article.body, article.summary or ""]
    extra = [article.category or "", article.edit_message or ""]
    return "\n".join([*parts, *extra, *article.tags, *article.sources])
