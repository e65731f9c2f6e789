"""The README, CONTRIBUTING.md and docs/ stay true: links resolve, module names exist, versions
are the release's, and the README stays a short page whose example is the real example."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from specwire.runtime.core.fragment import SPECWIRE_VERSION

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = sorted([README, REPO / "CONTRIBUTING.md", *(REPO / "docs").glob("*.md")])
# The repository's folder for each part of the one import name (pyproject's package-dir).
PART_FOLDERS = {"ir": "ir", "emitters": "emitters", "runtime": "runtime", "templates": "templates"}

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
_MODULE = re.compile(r"\bspecwire\.(ir|emitters|runtime|templates)((?:\.[a-z_][a-z0-9_]*)*)")
_BARE_RUNTIME = re.compile(r"(?<![\w./-])(?:from |import )?runtime\.[a-z_]+")
_VERSIONED = re.compile(r"specwire(?:==|>=|-)(\d+\.\d+\.\d+)")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip()).lower()
    kept = "".join(
        ch
        for ch in text
        if ch in " -" or unicodedata.category(ch)[0] in ("L", "N")  # letters and digits
    )
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_anchor(h) for h in _HEADING.findall(_FENCE.sub("", _text(page)))}


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_FENCE.sub("", _text(page))):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path_part, _, fragment = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in _anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {linked.name}")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_module_named_exists(page: Path) -> None:
    missing = []
    for part, rest in _MODULE.findall(_text(page)):
        path = REPO / PART_FOLDERS[part] / Path(*rest.split(".")[1:])
        if not (path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()):
            missing.append(f"specwire.{part}{rest}")
    assert missing == []


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_no_page_names_a_top_level_runtime_package(page: Path) -> None:
    # Bundles import specwire.runtime.bundle; `runtime.x` or `from runtime import` is 0.2's layout.
    assert _BARE_RUNTIME.findall(_text(page)) == []
    assert "from runtime import" not in _text(page)


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_versions_cited_are_the_release(page: Path) -> None:
    cited = set(_VERSIONED.findall(_text(page)))
    assert cited <= {SPECWIRE_VERSION}


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_agents_folder_is_named_root(page: Path) -> None:
    # `codegen memory`, `codegen dream` and the memory server take `--root`; `--cwd` is only a
    # hidden alias kept for 0.2's command lines.
    assert "--cwd" not in _text(page)


def test_the_readme_is_short() -> None:
    assert len(_text(README).splitlines()) < 250


def test_the_readme_keeps_its_two_commands_at_the_top() -> None:
    text = _text(README)
    start = text.index("## Two commands")
    section = text[start : text.index("\n## ", start + 1)]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    assert blocks == [
        'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && '
        ".venv/bin/codegen build examples/support-bot.yaml --out build\n",
        ".venv/bin/pytest\n",
    ]


def test_the_readme_spec_is_the_example_it_builds() -> None:
    example = (REPO / "examples" / "support-bot.yaml").read_text(encoding="utf-8")
    assert f"```yaml\n{example}```" in _text(README)


def test_the_readme_links_every_docs_page() -> None:
    linked = set(_LINK.findall(_text(README)))
    pages = {f"docs/{page.name}" for page in (REPO / "docs").glob("*.md")}
    assert pages <= linked
