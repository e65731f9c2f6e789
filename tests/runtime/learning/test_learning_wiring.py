"""``wire_memory`` with ``learning``: tools after the wiki's, gated commands, the rendered skill,
and a study pass after each dream run the host starts."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from specwire.runtime.core.fragment import WIKI_TOOL_NAMES
from specwire.runtime.core.fragment_data import LearningData
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.learning.study import study_pass
from specwire.runtime.learning.tools import LearningContext
from specwire.runtime.learning.wiring import study_after_dream
from specwire.runtime.wiring import MemoryDeps, wire_memory

CONTINUITY = {"plan": True, "proof": "ladder", "ledger": True, "handoff": True, "scope": "spec"}
LEARNING = {"domain": "Acme billing", "sources": ["docs/invoices.md"]}


def _wire(tmp_path: Path, learning: dict[str, Any], **fragment: Any) -> tuple[Any, ToolCatalog]:
    (tmp_path / "home").mkdir(exist_ok=True)
    catalog = ToolCatalog()
    data = {
        "spec_name": "kb",
        "version": 6,
        "memory": {"wiki": {"require_sources": True}},
        "learning": learning,
        **fragment,
    }
    deps = MemoryDeps(catalog=catalog, cwd=tmp_path, home_dir=tmp_path / "home", log=lambda _: None)
    return wire_memory(data, deps), catalog


def test_tools_follow_the_wiki_and_exam_commands_need_an_exam(tmp_path: Path) -> None:
    wired, catalog = _wire(tmp_path, LEARNING, continuity=CONTINUITY)
    names = [tool.name for tool in catalog.list()]
    assert names[-len(WIKI_TOOL_NAMES) - 1 :] == [*WIKI_TOOL_NAMES, "study_sources"]
    commands = wired.options["slash_commands"]
    assert {"study", "reflect"} <= set(commands) and "exam" not in commands
    [skill] = [s for s in wired.options["skills"] if s.name == "learning-loop"]
    assert "# Learning loop: Acme billing" in skill.body and "- docs/invoices.md" in skill.body

    exam = {**LEARNING, "exam": {"dataset": "exam.jsonl", "graders": ["contains"]}}
    (tmp_path / "b").mkdir()
    wired, catalog = _wire(tmp_path / "b", exam, continuity=CONTINUITY)
    assert [tool.name for tool in catalog.list()][-2:] == ["study_sources", "run_exam"]
    assert "exam" in wired.options["slash_commands"]


def test_a_fragment_whose_wiki_is_off_wires_no_learning(tmp_path: Path) -> None:
    # The compiler refuses this spec; a hand-edited fragment still wires nothing of learning.
    wired, catalog = _wire(tmp_path, LEARNING, memory={"wiki": {"enabled": False}})
    names = [tool.name for tool in catalog.list()]
    assert "study_sources" not in names and "run_exam" not in names
    assert "study" not in wired.options.get("slash_commands", {})


def test_a_study_pass_follows_a_started_dream_and_only_then(tmp_path: Path) -> None:
    from specwire.runtime.core.paths import StoreLayout
    from specwire.runtime.wiki.store import WikiStore

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "invoices.md").write_text("# Invoices\n\nMonthly.\n", "utf-8")
    store = WikiStore(StoreLayout.for_cwd(tmp_path, "kb"), require_sources=True)
    context = LearningContext(store, LearningData(**LEARNING), tmp_path, None, 6)
    lines: list[str] = []
    dream_done = threading.Event()
    sessions: list[object] = []

    def dream_started(model_id: str | None, session: object = None, /) -> threading.Thread:
        sessions.append(session)
        thread = threading.Thread(target=dream_done.set)
        thread.start()
        return thread

    marker = object()  # the model session a host hands the dream reaches it
    follower = study_after_dream(dream_started, context, lines.append)(None, marker)
    assert sessions == [marker]
    assert isinstance(follower, threading.Thread)
    follower.join(timeout=30)
    assert dream_done.is_set()
    assert lines == [
        "[learning] after the dream: study pass over 1 source(s): 1 article(s) created, "
        "0 updated, 0 unchanged, 0 failed\n"
    ]
    # A dream not due (nothing started) is no study pass either.
    assert (
        study_after_dream(lambda model_id, session=None, /: None, context, lines.append)(None)
        is None
    )
    assert len(lines) == 1
    assert study_pass(store, LEARNING["sources"], tmp_path).count("unchanged") == 1
