"""Auto-capture from a real JSONL session log written with ``runtime.sessions.log.SessionLog``."""

from __future__ import annotations

from pathlib import Path

import pytest
from facts_support import DAY_MS, FakeClock

from specwire.runtime.core.fragment import MemoryFactsFragment
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import SlashCommand
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.facts.capture import DurableFact, capture_session, durable_facts, split_turns
from specwire.runtime.facts.model import InvalidRequestError, Provenance
from specwire.runtime.facts.providers.protocol import LocalFactProvider
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.wiring import wire_facts
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models import ScriptedModel
from specwire.runtime.sessions.log import SessionLog, read_events

SESSION = "sess_0123456789abcdef"
LONG_ANSWER = "Summary: " + "the export pipeline " * 20


def user(log: SessionLog, text: str, turn: int, synthetic: bool = False) -> None:
    payload: dict[str, object] = {"text": text, "turn": turn}
    if synthetic:
        payload["synthetic"] = True
    log.append("user_message", payload)


def tool(log: SessionLog, tool_use_id: str, *, error: bool | None = False) -> None:
    log.append("tool_use", {"id": tool_use_id, "name": "read", "input": {}})
    result: dict[str, object] = {"toolUseId": tool_use_id, "name": "read", "text": "..."}
    if error is not None:
        result["isError"] = error
    log.append("tool_result", result)


def assistant(log: SessionLog, text: str, turn: int) -> None:
    log.append("assistant_message", {"text": text, "turn": turn})


def write_session(sessions_dir: Path, clock: FakeClock) -> Path:
    log = SessionLog(sessions_dir, SESSION, now=clock)
    log.append("session_start", {"spec": "s", "target": "cli", "model": "scripted"})
    assistant(log, "a stray message before any user turn", 0)
    # Turn 1: two successful tool uses, one failed one, a synthetic nudge that is no new turn.
    user(log, "what plan is the customer on?", 1)
    assistant(log, "Let me check the ticket.", 1)
    tool(log, "tu_ok1")
    tool(log, "tu_failed", error=True)
    user(log, "[reminder: answer briefly]", 1, synthetic=True)
    tool(log, "tu_ok2", error=None)  # isError missing: counts as success
    assistant(log, "\n\n   The customer   plan is\tEnterprise.  \nSecond line is ignored.", 1)
    # Turn 2: the same fact in other case and spacing is a duplicate.
    user(log, "remind me?", 2)
    assistant(log, "the CUSTOMER plan is enterprise.", 2)
    # Turn 3: a long answer is cut to 240 characters; its failed tool gives no evidence.
    user(log, "summarize", 3)
    tool(log, "tu_failed2", error=True)
    assistant(log, LONG_ANSWER, 3)
    # Turn 4: no answer at all (aborted) yields nothing; turn 5: blank final answer neither.
    user(log, "and?", 4)
    tool(log, "tu_orphan")
    user(log, "hello?", 5)
    assistant(log, "Working on it", 5)
    assistant(log, "   \n  ", 5)
    return log.path


def test_turns_split_at_real_user_messages_only(tmp_path: Path, clock: FakeClock) -> None:
    turns = split_turns(read_events(write_session(tmp_path, clock)))
    assert len(turns) == 5
    assert turns[0].evidence == ["tu_ok1", "tu_ok2"]
    assert turns[2].evidence == []
    assert turns[3].final_answer is None and turns[3].evidence == ["tu_orphan"]


def test_one_deduplicated_clipped_fact_per_turn_with_its_evidence(
    tmp_path: Path, clock: FakeClock
) -> None:
    facts = durable_facts(read_events(write_session(tmp_path, clock)))
    assert [f.text for f in facts] == [
        "The customer plan is Enterprise.",
        LONG_ANSWER.strip()[:239] + "…",
    ]
    assert len(facts[1].text) == 240
    assert [f.evidence for f in facts] == [("tu_ok1", "tu_ok2"), ()]


def test_at_most_eight_facts_per_session_the_newest_ones(tmp_path: Path, clock: FakeClock) -> None:
    log = SessionLog(tmp_path, SESSION, now=clock)
    for turn in range(1, 12):
        user(log, f"q{turn}", turn)
        assistant(log, f"decision number {turn} is final", turn)
    facts = durable_facts(read_events(log.path))
    assert [f.text for f in facts] == [f"decision number {n} is final" for n in range(4, 12)]


def test_capture_writes_tagged_facts_with_provenance_and_ttl(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    sessions = tmp_path / "sessions"
    write_session(sessions, clock)
    count = capture_session(
        LocalFactProvider(store),
        sessions,
        SESSION,
        ttl_ms=30 * DAY_MS,
        threshold=1,
        completed_turns=5,
    )
    assert count == 2
    first, second = (entry.fact for entry in store.list_facts())
    assert first.text == "The customer plan is Enterprise."
    assert first.tags == ("auto-capture", SESSION)
    assert first.provenance == Provenance(SESSION, ("tu_ok1", "tu_ok2"))
    assert second.provenance == Provenance(SESSION, ())
    assert first.expires_at is not None
    assert (first.expires_at - first.created_at).days == 30


def test_capturing_the_same_session_twice_writes_nothing(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    write_session(tmp_path, clock)
    assert capture_session(
        LocalFactProvider(store), tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=5
    )
    before = store.list_facts()
    again = capture_session(
        LocalFactProvider(store), tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=5
    )
    assert again == 0 and store.list_facts() == before


def test_a_fact_remembered_by_hand_is_not_captured_again(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    write_session(tmp_path, clock)
    store.remember("the customer plan is ENTERPRISE.")
    assert capture_session(
        LocalFactProvider(store), tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=5
    )
    assert store.size() == 2  # only the long summary was new


@pytest.mark.parametrize(
    ("threshold", "completed_turns", "expected"),
    [(3, 2, 0), (3, 3, 2), (0, 0, 0), (0, 1, 2), (1, 0, 0)],
)
def test_capture_is_gated_by_the_threshold(
    tmp_path: Path,
    store: FactStore,
    clock: FakeClock,
    threshold: int,
    completed_turns: int,
    expected: int,
) -> None:
    write_session(tmp_path, clock)
    count = capture_session(
        LocalFactProvider(store),
        tmp_path,
        SESSION,
        ttl_ms=None,
        threshold=threshold,
        completed_turns=completed_turns,
    )
    assert count == expected and store.size() == expected


def test_a_missing_log_captures_nothing(tmp_path: Path, store: FactStore) -> None:
    assert (
        capture_session(
            LocalFactProvider(store), tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=3
        )
        == 0
    )


@pytest.mark.parametrize("bad", ["", "..", "../elsewhere", "a/b", "a\\b"])
def test_a_session_id_must_name_a_file_in_the_sessions_dir(
    tmp_path: Path, store: FactStore, bad: str
) -> None:
    with pytest.raises(InvalidRequestError, match="not a session id"):
        capture_session(
            LocalFactProvider(store), tmp_path, bad, ttl_ms=None, threshold=1, completed_turns=1
        )


# -- turns about the agent's own memory --------------------------------------------------------


def call(log: SessionLog, tool_use_id: str, name: str, result: str, error: bool = False) -> None:
    """A tool call logged the way the agent loop logs it (``tool_use`` then ``tool_result``)."""
    log.append("tool_use", {"id": tool_use_id, "name": name, "input": {}})
    log.append(
        "tool_result", {"toolUseId": tool_use_id, "name": name, "isError": error, "text": result}
    )


def memory_session(sessions_dir: Path, clock: FakeClock) -> Path:
    log = SessionLog(sessions_dir, SESSION, now=clock)
    user(log, "remember: x is 1", 1)
    call(log, "tu_rem", "Remember", "remembered (mem_0123456789abcdef): x is 1")
    assistant(log, "Done: remembered (mem_0123456789abcdef): x is 1", 1)
    user(log, "plan: P: a; b", 2)
    call(log, "tu_plan", "PlanUpdate", "created plan-0001 — P (2 step(s)); it is the active plan")
    assistant(log, "Done: created plan-0001 — P (2 step(s)); it is the active plan", 2)
    user(log, "recall: x", 3)
    call(log, "tu_recall", "Recall", '1 memory match(es) for "x":')
    call(log, "tu_focus", "FocusRead", "focus: ship it")
    assistant(log, 'Done: 1 memory match(es) for "x":', 3)
    # A real tool and a memory read: captured, but only the real tool is evidence.
    user(log, "which python do we build with?", 4)
    call(log, "tu_recall2", "Recall", "no memories matched")
    call(log, "tu_read", "read", "python = 3.11")
    assistant(log, "The build uses Python 3.11.", 4)
    # A real tool next to Remember: the fact is stored already, the turn is skipped.
    user(log, "check the region and remember it", 5)
    call(log, "tu_read2", "read", "region = eu-west-1")
    call(log, "tu_rem2", "Remember", "remembered (mem_00000000000000aa): region is eu-west-1")
    assistant(log, "The region is eu-west-1; remembered.", 5)
    # A forget (even a failed one) is never undone by capturing its reply.
    user(log, "forget: the old region", 6)
    call(log, "tu_forget", "MemoryForget", "forgot 1 memory(ies):\n  • (mem_…) region is us-1")
    assistant(log, "Done: forgot 1 memory(ies) — the user asked to forget it:", 6)
    user(log, "forget: nothing", 7)
    call(log, "tu_read3", "read", "ok")
    call(log, "tu_forget2", "MemoryForget", "MemoryForget: the store is busy", error=True)
    assistant(log, "That failed: MemoryForget: the store is busy", 7)
    # A plain answer without tools is still captured, as before.
    user(log, "when do we deploy?", 8)
    assistant(log, "Deploys happen on Tuesday.", 8)
    return log.path


def test_turns_that_manage_memory_are_not_captured(tmp_path: Path, clock: FakeClock) -> None:
    facts = durable_facts(read_events(memory_session(tmp_path, clock)))
    assert facts == [
        DurableFact("The build uses Python 3.11.", ("tu_read",)),
        DurableFact("Deploys happen on Tuesday.", ()),
    ]


def test_memory_tool_uses_are_never_evidence(tmp_path: Path, clock: FakeClock) -> None:
    turns = split_turns(read_events(memory_session(tmp_path, clock)))
    assert [turn.evidence for turn in turns] == [
        [],
        [],
        [],
        ["tu_read"],
        ["tu_read2"],
        [],
        ["tu_read3"],
        [],
    ]
    assert turns[2].tool_names == ["Recall", "FocusRead"]


def test_a_result_without_its_tool_use_is_judged_by_its_own_name(
    tmp_path: Path, clock: FakeClock
) -> None:
    log = SessionLog(tmp_path, SESSION, now=clock)
    user(log, "q", 1)
    log.append("tool_result", {"toolUseId": "tu_orphan", "name": "Remember", "text": "ok"})
    assistant(log, "Done: remembered.", 1)
    user(log, "q", 2)
    log.append("tool_result", {"toolUseId": "tu_lone", "name": "read", "text": "ok"})
    assistant(log, "Read it.", 2)
    facts = durable_facts(read_events(log.path))
    assert facts == [DurableFact("Read it.", ("tu_lone",))]


def test_a_long_conversation_captures_its_latest_turns(tmp_path: Path, clock: FakeClock) -> None:
    log = SessionLog(tmp_path, SESSION, now=clock)
    for turn in range(1, 21):
        user(log, f"q{turn}", turn)
        tool(log, f"tu_{turn}")
        assistant(log, f"finding {turn} holds", turn)
    # Turn 21 restates turn 2's finding: it counts as recent, keeps its first wording and gathers
    # the evidence of both turns.
    user(log, "again?", 21)
    tool(log, "tu_21")
    assistant(log, "FINDING 2 HOLDS", 21)
    facts = durable_facts(read_events(log.path))
    assert [f.text for f in facts] == ["finding 2 holds"] + [
        f"finding {n} holds" for n in range(14, 21)
    ]
    assert facts[0].evidence == ("tu_2", "tu_21")


def test_the_scripted_model_leaves_only_the_remembered_fact(
    tmp_path: Path, clock: FakeClock
) -> None:
    """End to end: the offline model's "Done: …" replies to memory tools are not captured."""
    layout = StoreLayout(tmp_path / ".specwire", "spec")
    wiring = wire_facts(
        MemoryFactsFragment.model_validate({"auto_capture": True, "auto_recall": False}),
        layout,
        sessions_dir=layout.sessions_dir,
        now=clock,
        log=lambda line: None,
    )
    catalog = ToolCatalog()
    for fact_tool in wiring.tools:
        catalog.register(fact_tool)
    try:
        result = run_chat_loop(
            model=ScriptedModel(),
            instructions="Be brief.",
            catalog=catalog,
            session_log=SessionLog(layout.sessions_dir, SESSION, now=clock),
            inputs=["remember: x is 1", "remember: y is 2", "recall: x", "forget: y"],
            output=lambda line: None,
            memory=wiring.seam,
            log=lambda line: None,
        )
        assert result.turns == 4
        rows = [(entry.fact.text, entry.status) for entry in wiring.store.list_facts()]
        assert rows == [("x is 1", "live"), ("y is 2", "forgotten")]
    finally:
        wiring.store.close()


# -- replies that repeat memory, and slash-command turns ----------------------------------------

NOTE = "Noted: Size the market for agent memory."
SESSION_2 = "sess_fedcba9876543210"
SESSION_3 = "sess_00112233445566ff"


def recall_event(log: SessionLog, query: str, lines: list[str]) -> None:
    """The ``recall`` event the loop logs once it injected ``lines`` into the prompt."""
    log.append("recall", {"query": query, "seed": "Be brief.", "count": len(lines), "lines": lines})


def capture(store: FactStore, sessions_dir: Path, session_id: str) -> int:
    return capture_session(
        LocalFactProvider(store),
        sessions_dir,
        session_id,
        ttl_ms=None,
        threshold=1,
        completed_turns=1,
    )


def texts(store: FactStore) -> list[str]:
    return [entry.fact.text for entry in store.list_facts()]


def test_a_reply_quoting_recalled_memory_does_not_snowball(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    first = SessionLog(tmp_path, SESSION, now=clock)
    user(first, "Size the market for agent memory.", 1)
    recall_event(first, "Size the market for agent memory.", [])
    assistant(first, NOTE, 1)
    assert capture(store, tmp_path, SESSION) == 1
    # The next session recalls the fact and its reply quotes it (the way the scripted model
    # does: the recalled fact's full stop dropped, then put back).
    second = SessionLog(tmp_path, SESSION_2, now=clock)
    user(second, "Size the market for agent memory.", 1)
    recall_event(second, "Size the market for agent memory.", [NOTE])
    assistant(second, f"{NOTE} From memory: {NOTE.rstrip('.')}.", 1)
    # A new fact stated later in the same session is still captured.
    user(second, "and the region?", 2)
    tool(second, "tu_region")
    assistant(second, "The region is eu-west-1.", 2)
    assert capture(store, tmp_path, SESSION_2) == 1
    # The acknowledgement ("Noted: ") is not part of the fact.
    assert texts(store) == [NOTE.removeprefix("Noted: "), "The region is eu-west-1."]
    assert store.list_facts()[1].fact.provenance == Provenance(SESSION_2, ("tu_region",))
    assert capture(store, tmp_path, SESSION_2) == 0


def test_the_recalled_lines_are_matched_casefolded_and_across_whitespace(
    tmp_path: Path, clock: FakeClock
) -> None:
    log = SessionLog(tmp_path, SESSION, now=clock)
    user(log, "q", 1)
    recall_event(log, "q", ["The build uses  Python 3.11.", "Deploys happen on Tuesday…"])
    assistant(log, "As I recall, THE BUILD USES\tPYTHON 3.11 — still true.", 1)
    user(log, "q2", 2)
    assistant(log, "Noted. deploys happen on tuesday and friday.", 2)
    user(log, "q3", 3)
    # "Python 3.11" is not "Python 3.110": only whole words match.
    assistant(log, "The build uses Python 3.110 now.", 3)
    facts = durable_facts(read_events(log.path))
    assert [f.text for f in facts] == ["The build uses Python 3.110 now."]


def test_every_recall_event_of_the_session_counts(tmp_path: Path, clock: FakeClock) -> None:
    """A resumed session logs another recall: its lines are memory too, wherever they appear."""
    log = SessionLog(tmp_path, SESSION, now=clock)
    recall_event(log, "q", ["x is 1"])
    user(log, "q", 1)
    assistant(log, "So x is 1.", 1)
    user(log, "q2", 2)
    recall_event(log, "q2", ["y is 2"])
    assistant(log, "And y is 2!", 2)
    user(log, "q3", 3)
    assistant(log, "z is 3.", 3)
    assert [f.text for f in durable_facts(read_events(log.path))] == ["z is 3."]


def test_a_reply_containing_a_live_fact_is_not_captured(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    """Even when the log holds no recall (auto-recall off, or the fact came through a tool)."""
    store.remember("The customer plan is Enterprise.")
    log = SessionLog(tmp_path, SESSION, now=clock)
    user(log, "which plan?", 1)
    assistant(log, "Per memory: the customer plan is enterprise. Nothing else changed.", 1)
    user(log, "which region?", 2)
    assistant(log, "The customer region is eu-west-1.", 2)
    assert capture(store, tmp_path, SESSION) == 1
    assert texts(store) == ["The customer plan is Enterprise.", "The customer region is eu-west-1."]


def test_a_fact_forgotten_is_no_longer_memory(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    store.remember("The customer plan is Enterprise.")
    store.forget("customer plan")
    log = SessionLog(tmp_path, SESSION, now=clock)
    user(log, "which plan?", 1)
    assistant(log, "The customer plan is Enterprise. It was upgraded today.", 1)
    assert capture(store, tmp_path, SESSION) == 1


def test_the_sessions_own_captures_are_not_memory_to_it(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    """A later turn extending an earlier one of the same session is its own new statement."""
    log = SessionLog(tmp_path, SESSION, now=clock)
    user(log, "q", 1)
    assistant(log, "Deploys happen on Tuesday.", 1)
    user(log, "q2", 2)
    assistant(log, "Deploys happen on Tuesday. Hotfixes ship any day.", 2)
    assert capture(store, tmp_path, SESSION) == 2
    assert capture(store, tmp_path, SESSION) == 0
    # Another session repeating either of them is repeating memory.
    other = SessionLog(tmp_path, SESSION_2, now=clock)
    user(other, "q", 1)
    assistant(other, "Remember: deploys happen on Tuesday. Hotfixes ship any day. Ok.", 1)
    assert capture(store, tmp_path, SESSION_2) == 0
    assert store.size() == 2


def test_skipped_replies_leave_room_for_eight_new_facts(tmp_path: Path, clock: FakeClock) -> None:
    log = SessionLog(tmp_path, SESSION, now=clock)
    recall_event(log, "q", ["old fact"])
    for turn in range(1, 10):
        user(log, f"q{turn}", turn)
        assistant(log, f"decision {turn} is final", turn)
    for turn in range(10, 13):
        user(log, f"q{turn}", turn)
        assistant(log, f"old fact, and {turn}", turn)
    facts = durable_facts(read_events(log.path))
    assert [f.text for f in facts] == [f"decision {n} is final" for n in range(2, 10)]


def slash_session(sessions_dir: Path, clock: FakeClock) -> Path:
    """Turns logged the way the loop logs a slash command: the typed text, then its expansion."""
    log = SessionLog(sessions_dir, SESSION, now=clock)
    user(log, "/triage printer on fire", 1)
    user(log, "Triage this ticket: printer on fire. Reply with a severity.", 1, synthetic=True)
    recall_event(log, "Triage this ticket: printer on fire. Reply with a severity.", [])
    tool(log, "tu_ticket")
    assistant(log, "Noted: Triage this ticket: printer on fire.", 1)
    user(log, "what is the printer model?", 2)
    tool(log, "tu_model")
    assistant(log, "The printer is an HP LaserJet 4.", 2)
    user(log, "/summarize", 3)
    user(log, "Summarize the conversation so far.", 3, synthetic=True)
    assistant(log, "Noted: Summarize the conversation so far.", 3)
    return log.path


def test_a_slash_command_turn_is_not_captured(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    turns = split_turns(read_events(slash_session(tmp_path, clock)))
    assert [turn.slash_command for turn in turns] == [True, False, True]
    assert turns[0].evidence == ["tu_ticket"]
    assert capture(store, tmp_path, SESSION) == 1
    assert texts(store) == ["The printer is an HP LaserJet 4."]
    assert store.list_facts()[0].fact.provenance == Provenance(SESSION, ("tu_model",))


def test_a_synthetic_nudge_after_model_output_is_no_slash_command(
    tmp_path: Path, clock: FakeClock
) -> None:
    turns = split_turns(read_events(write_session(tmp_path, clock)))
    assert not any(turn.slash_command for turn in turns)


def run_session(
    layout: StoreLayout,
    clock: FakeClock,
    session_id: str,
    inputs: list[str],
    slash_commands: dict[str, SlashCommand] | None = None,
) -> list[str]:
    """One loop session with auto-recall and auto-capture on; returns the replies."""
    wiring = wire_facts(
        MemoryFactsFragment.model_validate({"auto_capture": True, "auto_recall": True}),
        layout,
        sessions_dir=layout.sessions_dir,
        now=clock,
        log=lambda line: None,
    )
    catalog = ToolCatalog()
    for fact_tool in wiring.tools:
        catalog.register(fact_tool)
    replies: list[str] = []
    try:
        run_chat_loop(
            model=ScriptedModel(),
            instructions="You research markets.",
            catalog=catalog,
            session_log=SessionLog(layout.sessions_dir, session_id, now=clock),
            inputs=inputs,
            output=replies.append,
            memory=wiring.seam,
            slash_commands=slash_commands,
            log=lambda line: None,
        )
    finally:
        wiring.store.close()
    clock.advance(minutes=1)
    return replies


def stored_texts(layout: StoreLayout, clock: FakeClock) -> list[str]:
    with FactStore.open(layout.facts_db, now=clock) as store:
        return [entry.fact.text for entry in store.list_facts()]


def test_sessions_of_the_scripted_model_do_not_accumulate_memory_copies(
    tmp_path: Path, clock: FakeClock
) -> None:
    """End to end: the second session's "Noted: … From memory: …" reply is not stored."""
    layout = StoreLayout(tmp_path / ".specwire", "spec")
    question = "Size the market for agent memory in 2026."
    first = run_session(layout, clock, SESSION, [question])
    assert first == ["Noted: Size the market for agent memory in 2026."]
    stored = ["Size the market for agent memory in 2026."]
    assert stored_texts(layout, clock) == stored
    second = run_session(layout, clock, SESSION_2, [question, "What about Europe?"])
    # Every reply of a session with recalled memory quotes it, so none of them is new memory.
    assert [reply.count("From memory:") for reply in second] == [1, 1]
    third = run_session(layout, clock, SESSION_3, [question])
    assert "From memory:" in third[0]
    assert stored_texts(layout, clock) == stored


def test_slash_command_prompts_are_not_captured_end_to_end(
    tmp_path: Path, clock: FakeClock
) -> None:
    layout = StoreLayout(tmp_path / ".specwire", "spec")
    command = SlashCommand(
        name="triage",
        description="Triage a ticket",
        argument_hint="<ticket>",
        body="Triage this ticket: $ARGUMENTS. Reply with a severity.",
        source="project",
    )
    replies = run_session(
        layout, clock, SESSION, ["/triage printer on fire", "hello there"], {"triage": command}
    )
    assert replies[0] == "Noted: Triage this ticket: printer on fire. Reply with a severity."
    assert stored_texts(layout, clock) == ["hello there."]


def test_acknowledgements_and_questions_are_not_facts(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    log = SessionLog(tmp_path, SESSION, now=clock)
    exchanges = [
        ("the deploy target is Kubernetes", "Noted: the deploy target is Kubernetes."),
        ("what is the billing plan?", "Noted: what is the billing plan."),
        ("ok thanks", "Noted: ok thanks."),
        ("great", "OK, great!"),
        ("which region?", "Which region do you mean?"),
        ("Sure Corp is our vendor", "Sure Corp is our vendor."),
    ]
    for turn, (said, reply) in enumerate(exchanges, start=1):
        user(log, said, turn)
        assistant(log, reply, turn)
    assert capture(store, tmp_path, SESSION) == 2
    assert texts(store) == ["the deploy target is Kubernetes.", "Sure Corp is our vendor."]


def test_the_agents_own_tool_acknowledgements_are_not_facts(
    tmp_path: Path, clock: FakeClock
) -> None:
    """End to end: the scripted model's "Done: <first line of the result>" after a real tool
    call (it stored "Done: fetched …" after each fetch) is not captured; a fact is."""
    from specwire.runtime.tools.builtin import builtin_catalog

    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("the printer on floor 3 is broken\n")
    long_line = "the quarterly numbers " * 20
    (work / "long.txt").write_text(long_line + "\n")
    layout = StoreLayout(tmp_path / ".specwire", "spec")
    wiring = wire_facts(
        MemoryFactsFragment.model_validate({"auto_capture": True, "auto_recall": False}),
        layout,
        sessions_dir=layout.sessions_dir,
        now=clock,
        log=lambda line: None,
    )
    catalog = builtin_catalog(("read", "ls"), work)
    replies: list[str] = []
    try:
        run_chat_loop(
            model=ScriptedModel(),
            instructions="Be brief.",
            catalog=catalog,
            session_log=SessionLog(layout.sessions_dir, SESSION, now=clock),
            inputs=[
                "call ls {}",
                'call read {"path": "long.txt"}',
                'call read {"path": "missing.txt"}',
                "the office moves to Lyon in May",
            ],
            output=replies.append,
            memory=wiring.seam,
            log=lambda line: None,
        )
    finally:
        wiring.release()
    assert [reply.split(":")[0] for reply in replies] == ["Done", "Done", "That failed", "Noted"]
    assert replies[1].endswith("…")  # the scripted model cut the result's line
    assert stored_texts(layout, clock) == ["the office moves to Lyon in May."]


def test_a_research_session_does_not_capture_its_task(tmp_path: Path, store: FactStore) -> None:
    """The research host's goal, sub-goal and synthesis brief are its user messages: a reply
    restating them is no fact; a finding stated in the same session is."""
    goal = "Size the market for self-hosted agent memory in 2026."
    sessions = {
        "sess_00000000000000b1": (goal, f"Noted: {goal}"),
        "sess_00000000000000b2": (f"{goal} (angle 2 of 2)", f"Noted: {goal} (angle 2 of 2)."),
        "sess_00000000000000b3": (
            f"Write the research summary for: {goal}\n\nFindings per branch:\n- branch 1/2",
            f"Noted: Write the research summary for: {goal}",
        ),
        "sess_00000000000000b4": (f"{goal} (angle 1 of 2)", "The market was $2B in 2025."),
    }
    for session_id, (task, reply) in sessions.items():
        log = SessionLog(tmp_path, session_id)
        log.append("session_start", {"spec": "s", "target": "research", "runId": "sess_run"})
        user(log, task, 1)
        assistant(log, reply, 1)
    assert sum(capture(store, tmp_path, session_id) for session_id in sessions) == 1
    assert texts(store) == ["The market was $2B in 2025."]
    # Outside a research run, the person's own statement echoed back is still captured.
    cli = SessionLog(tmp_path, SESSION)
    cli.append("session_start", {"spec": "s", "target": "cli"})
    user(cli, "our fiscal year starts in April", 1)
    assistant(cli, "Noted: our fiscal year starts in April.", 1)
    assert capture(store, tmp_path, SESSION) == 1
