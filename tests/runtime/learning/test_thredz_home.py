"""Learning into Thredz's wiki (``runtime.learning.thredz_home``): a study pass and an exam
over a server that answers like our wiki tools, and what happens when it cannot be reached.
(Against a real server, ours standing in for Thredz:
tests/e2e/test_tool_servers_channel_managed.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.learning.dataset import ExamSample
from specwire.runtime.learning.exam import run_exam
from specwire.runtime.learning.study import study_pass
from specwire.runtime.learning.thredz_home import ThredzGaps, ThredzWiki
from specwire.runtime.tools.mcp_servers.thredz import ThredzLink

if TYPE_CHECKING:
    from mcp.types import CallToolResult


def _reply(text: str, is_error: bool = False) -> CallToolResult:
    from mcp.types import CallToolResult, TextContent  # the MCP SDK: only these tests use it

    return CallToolResult(content=[TextContent(type="text", text=text)], isError=is_error)


class FakeThredz:
    """A server keeping articles by slug, answering in our tools' words."""

    def __init__(self) -> None:
        self.articles: dict[str, tuple[str, str]] = {}
        self.calls: list[str] = []

    def __call__(self, tool: str, arguments: dict[str, Any], timeout: float) -> CallToolResult:
        self.calls.append(tool)
        if tool == "wiki_get":
            found = self.articles.get(arguments["slug"])
            if found is None:
                return _reply(f"no article {arguments['slug']}", is_error=True)
            return _reply(
                f"{arguments['slug']} v1 · published\n<data>\ntitle: {found[0]}\n\n"
                f"{found[1]}\n</data>"
            )
        if tool == "wiki_write":
            created = arguments["slug"] not in self.articles
            self.articles[arguments["slug"]] = (arguments["title"], arguments["body"])
            return _reply(f"{'created' if created else 'updated'} {arguments['slug']} v1")
        if tool == "wiki_recall":
            words = set(arguments["query"].lower().rstrip("?").split())
            lines = [
                f"[wiki:{slug}] {title} — {body[:40]}"
                for slug, (title, body) in sorted(self.articles.items())
                if words & set(body.lower().split())
            ]
            return _reply("\n".join(lines) or "no wiki articles matched")
        if tool == "log_knowledge_gap":
            return _reply(f'logged knowledge gap "{arguments["topic"]}"')
        return _reply("unknown tool", is_error=True)


LISTED = frozenset({"wiki_get", "wiki_write", "wiki_recall", "log_knowledge_gap"})


def _source(tmp_path: Path) -> str:
    (tmp_path / "ops.md").write_text("# Deploys\n\nDeploys go out on fridays.\n", encoding="utf-8")
    return "ops.md"


def test_a_study_pass_writes_through_thredz_once(tmp_path: Path) -> None:
    server = FakeThredz()
    wiki = ThredzWiki(ThredzLink("thredz", server, LISTED, lambda _line: None))
    ref = _source(tmp_path)
    first = study_pass(wiki, [ref], tmp_path)
    assert first.count("created") == 1
    [(title, body)] = server.articles.values()
    assert title == "Deploys" and "fridays" in body and "## Sources" in body
    assert study_pass(wiki, [ref], tmp_path).count("unchanged") == 1
    assert server.calls.count("wiki_write") == 1


def test_the_exam_recalls_whole_articles_and_logs_gaps_on_thredz(tmp_path: Path) -> None:
    server = FakeThredz()
    link = ThredzLink("thredz", server, LISTED, lambda _line: None)
    wiki = ThredzWiki(link)
    study_pass(wiki, [_source(tmp_path)], tmp_path)
    samples = [
        ExamSample("q1", "When do deploys go out?", "fridays"),
        ExamSample("q2", "Who owns billing?", "finance"),
    ]
    report = run_exam(wiki, samples, ("contains",), recall_k=6, gaps=ThredzGaps(link))
    assert [result.passed for result in report.results] == [True, False]
    assert report.results[1].gap == 'logged knowledge gap "Who owns billing?"'


def test_with_thredz_unreachable_a_source_fails_and_the_exam_recalls_nothing(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    link = ThredzLink("thredz", None, frozenset(), lines.append, why="did not start")
    wiki = ThredzWiki(link)
    studied = study_pass(wiki, [_source(tmp_path)], tmp_path)
    assert studied.count("failed") == 1 and "Thredz is unavailable" in studied.sources[0].detail
    assert wiki.recall_texts("deploys", 6) == []
    assert len(lines) == 1  # the one degraded line
