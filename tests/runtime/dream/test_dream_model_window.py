"""At most one model phase per window: the window is marked before the session runs, so a run
retried in the window (a partial run, a host stopped mid-session) never spends the budget
again; a forced run does."""

from __future__ import annotations

from pathlib import Path

import pytest
from dream_support import NOW, Clock

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.dream import DreamSettings, run_dream
from specwire.runtime.dream.engine import ALREADY_STARTED
from specwire.runtime.dream.model_phase import ModelPrice
from specwire.runtime.dream.outcome import DreamOutcome, ModelPhase
from specwire.runtime.dream.state import MODEL_WINDOW, read_state, write_state
from specwire.runtime.owner.dream_command import main

SETTINGS = DreamSettings(every_s=3600, mode="full", budget_usd=0.02)


class Session:
    """A model session that records each start and what the state said then."""

    def __init__(self, layout: StoreLayout, fail: bool = False) -> None:
        self.layout = layout
        self.fail = fail
        self.marks: list[object] = []

    def __call__(self, settings: DreamSettings, price: ModelPrice) -> ModelPhase:
        state = read_state(self.layout)
        self.marks.append(state.get(MODEL_WINDOW) if state is not None else None)
        if self.fail:
            raise RuntimeError("the provider went away")
        return ModelPhase(ran=True, spent_usd=0.01, model="scripted", calls=1)


def _dream(layout: StoreLayout, session: Session, *, force: bool = False) -> DreamOutcome:
    return run_dream(
        layout,
        SETTINGS,
        now=Clock(NOW),
        model_id="scripted",
        price_of=lambda model_id: ModelPrice(1.0, 1.0),
        model_session=session,
        force=force,
    )


@pytest.fixture
def layout(tmp_path: Path) -> StoreLayout:
    found = StoreLayout.for_cwd(tmp_path, "demo")
    found.state_dir.mkdir(parents=True)
    return found


def test_the_window_is_marked_before_the_session_runs(layout: StoreLayout) -> None:
    session = Session(layout)
    outcome = _dream(layout, session)
    assert outcome.model.ran and session.marks == [outcome.window_key]
    state = read_state(layout)
    assert state is not None and state[MODEL_WINDOW] == outcome.window_key


def test_a_retried_run_of_the_window_does_not_run_the_model_phase_again(
    layout: StoreLayout,
) -> None:
    failing = Session(layout, fail=True)
    first = _dream(layout, failing)
    assert first.status == "partial" and len(failing.marks) == 1
    again = Session(layout)
    second = _dream(layout, again)  # a partial run is retried in its window …
    assert again.marks == [] and second.model.reason == ALREADY_STARTED
    state = read_state(layout)  # … and the mark survives the retry's own record
    assert state is not None and state[MODEL_WINDOW] == second.window_key
    forced = _dream(layout, again, force=True)
    assert forced.model.ran and len(again.marks) == 1


def test_a_process_stopped_mid_session_leaves_the_mark(
    layout: StoreLayout, capsys: pytest.CaptureFixture[str]
) -> None:
    session = Session(layout)
    window = _dream(layout, session).window_key
    # What a host killed in the session leaves: the mark, and no record of the run.
    write_state(layout, {"spec": "demo", MODEL_WINDOW: window})
    assert main(["--root", str(layout.root.parent), "status"]) == 0
    assert f"the model phase of {window} started and was not recorded" in capsys.readouterr().out
    again = Session(layout)
    assert _dream(layout, again).model.reason == ALREADY_STARTED and again.marks == []
