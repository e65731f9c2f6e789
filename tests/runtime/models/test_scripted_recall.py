"""The scripted model's reply to a Recall shows the facts that matched (it showed only the
result's header, "Done: 2 memory match(es) for …", and never the facts)."""

from __future__ import annotations

from pathlib import Path

from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.fragment import MemoryFactsFragment
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.facts.wiring import wire_facts
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models import ScriptedModel
from specwire.runtime.sessions.log import SessionLog


def test_the_recall_reply_shows_every_matched_fact(tmp_path: Path) -> None:
    layout = StoreLayout(tmp_path / ".specwire", "spec")
    wiring = wire_facts(
        MemoryFactsFragment.model_validate({"auto_capture": False, "auto_recall": False}),
        layout,
        sessions_dir=layout.sessions_dir,
        now=utc_now,
        log=lambda line: None,
    )
    catalog = ToolCatalog()
    for tool in wiring.tools:
        catalog.register(tool)
    replies: list[str] = []
    try:
        run_chat_loop(
            model=ScriptedModel(),
            instructions="Be brief.",
            catalog=catalog,
            session_log=SessionLog(layout.sessions_dir, "sess_0123456789abcdef"),
            inputs=[
                "remember: the billing plan is Enterprise",
                "remember: the billing contact is Ana",
                "remember: the deploy target is Kubernetes",
                "recall: billing",
            ],
            output=replies.append,
            log=lambda line: None,
        )
    finally:
        wiring.release()
    recall = replies[-1]
    assert recall.startswith('Done: 2 memory match(es) for "billing"')
    assert "the billing plan is Enterprise" in recall and "the billing contact is Ana" in recall
    assert "Kubernetes" not in recall and "\n" not in recall


def test_the_directives_are_documented_where_an_offline_user_looks() -> None:
    """A bundle's README on the scripted model names every directive family, and points at the
    module docstring, which names them all."""
    import specwire.runtime.models.scripted as scripted
    from specwire.emitters.registry import emit
    from specwire.ir.load import load_spec_bytes

    examples = Path(__file__).resolve().parents[3] / "examples"
    spec = examples / "support-bot.yaml"
    readme = emit(load_spec_bytes(spec.read_bytes(), str(spec)))["README.md"]
    offline = readme.split("## Try it offline", 1)[1].split("\n## ", 1)[0]
    directives = ["remember:", "recall:", "forget:", "focus:", "plan:", "claim <n>", "prove <n>"]
    directives += ["call <Tool> <json>", "steps:", "ask about", "split into <n> sub-goals"]
    for directive in directives:
        assert f"`{directive}" in offline, directive
        assert directive.split(" <")[0].split(":")[0] in (scripted.__doc__ or "")
    assert "`specwire.runtime.models.scripted`" in offline
