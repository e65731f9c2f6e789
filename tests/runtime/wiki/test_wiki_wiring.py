"""``wire_memory`` / ``wire_wiki`` with ``memory.wiki``: order, logs, recall fusion, gaps as
goals, skills and commands, tenancy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wiki_support import SOURCES, ConceptEmbedder, Ticker, call

from specwire.runtime.core.fragment import CONTINUITY_TOOL_NAMES, FACT_TOOL_NAMES, WIKI_TOOL_NAMES
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.wiring import MemoryDeps, wire_memory, wire_wiki

CONTINUITY_ON = {"plan": True, "proof": "ladder", "ledger": True, "handoff": True, "scope": "spec"}
WRITE = {"justification": "the user said so"}


def deps_for(cwd: Path, **overrides: Any) -> tuple[MemoryDeps, list[str]]:
    lines: list[str] = []
    home = cwd / "home"
    home.mkdir(parents=True, exist_ok=True)
    fields: dict[str, Any] = {
        "catalog": ToolCatalog(),
        "cwd": cwd,
        "log": lines.append,
        "home_dir": home,
        "now": Ticker(),
    }
    fields.update(overrides)
    return MemoryDeps(**fields), lines


def fragment(wiki: dict[str, Any], *, continuity: bool = True, **memory: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"spec_name": "kb", "memory": {**memory, "wiki": wiki}}
    if continuity:
        data["continuity"] = CONTINUITY_ON
    return data


def test_registration_order_facts_continuity_wiki_and_the_log_line(tmp_path: Path) -> None:
    deps, lines = deps_for(tmp_path)
    wired = wire_memory(fragment({}), deps)
    expected = [*FACT_TOOL_NAMES, *CONTINUITY_TOOL_NAMES, *WIKI_TOOL_NAMES]
    assert [t.name for t in wired.tools] == expected
    assert isinstance(deps.catalog, ToolCatalog) and deps.catalog.names() == expected
    wiki_dir = tmp_path.resolve() / ".specwire" / "wiki" / "kb"
    assert f"[memory] wiki on — {wiki_dir}\n" in lines
    assert wired.stores.wiki is not None and wired.stores.wiki.path == str(wiki_dir)
    assert not wiki_dir.exists()  # created by the first write, not by wiring


def test_wiki_skill_and_commands_ship_with_the_tier(tmp_path: Path) -> None:
    deps, _ = deps_for(tmp_path)
    wired = wire_memory(fragment({}, continuity=False), deps)
    assert [s.name for s in wired.options["skills"]] == ["wiki"]
    assert set(wired.options["slash_commands"]) == {"forget", "gap", "wiki"}
    assert "log_knowledge_gap" in wired.options["slash_commands"]["gap"].render("rate limits")
    deps, _ = deps_for(tmp_path / "off")
    plain = wire_memory({"spec_name": "kb", "memory": {}}, deps)
    assert set(plain.options.get("slash_commands", {})) == {"forget"}


def test_auto_recall_fuses_wiki_lines_even_with_fact_recall_off(tmp_path: Path) -> None:
    deps, _ = deps_for(tmp_path)
    wired = wire_memory(fragment({"auto_recall": True, "recall_k": 2}, auto_recall=False), deps)
    tools = {t.name: t for t in wired.tools}
    args = {
        "slug": "deploy",
        "title": "Deploy",
        "body": "The deploy target is Kubernetes.",
        **WRITE,
    }
    assert not call(tools["wiki_write"], args).is_error
    seam = wired.options["memory"]
    assert seam.auto_recall and seam.recall is not None and seam.recall_k == 2
    assert seam.recall("deploy target", 2) == [
        "[wiki:deploy] Deploy — The deploy target is Kubernetes."
    ]


def test_fact_lines_come_before_wiki_lines(tmp_path: Path) -> None:
    deps, _ = deps_for(tmp_path)
    wired = wire_memory(fragment({"auto_recall": True}, recall_k=3), deps)
    tools = {t.name: t for t in wired.tools}
    assert not call(tools["Remember"], {"text": "The deploy window is Friday."}).is_error
    body = "Deploys go through Argo."
    call(tools["wiki_write"], {"slug": "deploy", "title": "Deploy", "body": body, **WRITE})
    seam = wired.options["memory"]
    assert seam.recall_k == 3 + 6
    assert seam.recall("deploy", seam.recall_k) == [
        "The deploy window is Friday.",
        "[wiki:deploy] Deploy — Deploys go through Argo.",
    ]


def test_without_wiki_auto_recall_the_facts_seam_is_unchanged(tmp_path: Path) -> None:
    deps, _ = deps_for(tmp_path)
    wired = wire_memory(fragment({}), deps)
    assert wired.options["memory"].recall_k == 5


def test_a_gap_becomes_a_gap_goal_when_continuity_is_on(tmp_path: Path) -> None:
    events: list[tuple[str, Any]] = []
    deps, _ = deps_for(tmp_path, append_event=lambda kind, payload: events.append((kind, payload)))
    wired = wire_memory(fragment({}), deps)
    tools = {t.name: t for t in wired.tools}
    result = call(tools["log_knowledge_gap"], {"topic": "Rate limits", "priority": "high"})
    assert result.text.startswith('logged knowledge gap "Rate limits" → goal-0001 (priority high)')
    assert "[gap] Rate limits" in call(tools["GoalList"], {}).text
    call(tools["wiki_write"], {"slug": "a", "title": "A", "body": "x", **WRITE})
    assert [kind for kind, _ in events] == ["goal_update", "wiki_write"]


def test_require_sources_is_wired(tmp_path: Path) -> None:
    deps, _ = deps_for(tmp_path)
    wired = wire_memory(fragment({"require_sources": True}), deps)
    tools = {t.name: t for t in wired.tools}
    refused = call(tools["wiki_write"], {"slug": "a", "title": "A", "body": "x", **WRITE})
    assert refused.is_error and "## Sources" in refused.text
    ok = call(tools["wiki_write"], {"slug": "a", "title": "A", "body": "x" + SOURCES, **WRITE})
    assert not ok.is_error


def test_the_embedder_from_deps_ranks_by_meaning(tmp_path: Path) -> None:
    deps, _ = deps_for(tmp_path, embedder=ConceptEmbedder())
    wired = wire_memory(fragment({"auto_recall": True}, continuity=False, auto_recall=False), deps)
    tools = {t.name: t for t in wired.tools}
    body = "The deploy target is Kubernetes."
    call(tools["wiki_write"], {"slug": "deploy", "title": "Deploy", "body": body, **WRITE})
    assert wired.options["memory"].recall("container orchestration", 6) == [
        f"[wiki:deploy] Deploy — {body}"
    ]


def test_wire_wiki_wires_the_wiki_alone(tmp_path: Path) -> None:
    deps, lines = deps_for(tmp_path)
    assert wire_wiki({"spec_name": "kb", "memory": {}}, deps) is None
    assert wire_wiki(fragment({"enabled": False}), deps) is None
    wired = wire_wiki(fragment({}), deps)
    assert wired is not None
    assert [t.name for t in wired.tools] == list(WIKI_TOOL_NAMES)
    assert wired.stores.memory is None and wired.stores.continuity is None
    tools = {t.name: t for t in wired.tools}
    gap = call(tools["log_knowledge_gap"], {"topic": "Rate limits"})
    assert "gap-rate-limits v1" in gap.text  # no plan store: the gap is a wiki draft


def test_tenant_b_never_sees_tenant_a(tmp_path: Path) -> None:
    tenants = tmp_path / "tenants"
    tools = {}
    for tenant_id in ("tenant-a", "tenant-b"):
        tenant = build_tenant(tenant_id, tenants)
        deps, _ = deps_for(tmp_path, tenant=tenant, session_scope="sess_0123456789abcdef")
        wired = wire_memory(fragment({}), deps)
        assert wired.stores.wiki.path == str(tenant.root / "wiki" / "kb")
        tools[tenant_id] = {t.name: t for t in wired.tools}
    body = "Tenant A's launch code is 4242."
    call(
        tools["tenant-a"]["wiki_write"],
        {"slug": "launch", "title": "Launch", "body": body, **WRITE},
    )
    assert "launch" in call(tools["tenant-a"]["wiki_search"], {"query": "launch code"}).text
    for name, args in [
        ("wiki_search", {"query": "launch code"}),
        ("wiki_recall", {"query": "launch code"}),
        ("wiki_list", {}),
    ]:
        text = call(tools["tenant-b"][name], args).text
        assert "4242" not in text and "launch" not in text.replace('"launch code"', "")
    assert call(tools["tenant-b"]["wiki_get"], {"slug": "launch"}).text.startswith("no article")
    written = [p for p in tenants.rglob("*.md")]
    assert written and all((tenants / "tenant-a") in p.parents for p in written)


def test_wiki_prose_names_only_wiki_tools_that_exist(tmp_path: Path) -> None:
    import re

    from specwire.runtime.skills.loader import WIKI_COMMANDS, load_commands, load_skills

    texts = [s.body for s in load_skills({"wiki"}, cwd=tmp_path, home_dir=None)]
    texts += [c.body for c in load_commands(WIKI_COMMANDS, cwd=tmp_path, home_dir=None).values()]
    named = {w for text in texts for w in re.findall(r"\b(?:wiki_[a-z_]+|log_[a-z_]+)\b", text)}
    assert len(texts) == 3 and named and named <= set(WIKI_TOOL_NAMES), named
