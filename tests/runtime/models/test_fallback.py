"""``FallbackModel``: the next model on a retryable failure, never on any other."""

from __future__ import annotations

import pytest

from specwire.runtime.models.errors import (
    ContextTooLongError,
    ModelAuthError,
    ModelCallError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelRateLimitError,
    ModelRefusalError,
    ModelServerError,
    ModelTimeoutError,
    is_retryable,
)
from specwire.runtime.models.fallback import FallbackModel
from specwire.runtime.models.scripted import FAILING_MODEL_ID, FailingModel, ScriptedModel
from specwire.runtime.models.select import select_model
from specwire.runtime.models.types import ModelRequest, ModelResponse, UserMessage

REQUEST = ModelRequest(system=[], messages=[UserMessage("hello")], tools=[])


class Failing:
    """A model whose every call raises ``error``; counts its calls."""

    def __init__(self, model_id: str, error: ModelError) -> None:
        self._model_id = model_id
        self.error = error
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        raise self.error


class Answering:
    def __init__(self, model_id: str, text: str = "ok") -> None:
        self._model_id = model_id
        self.text = text
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        return ModelResponse(text=self.text)


RETRYABLE = [
    ModelRateLimitError("429"),
    ModelServerError("529 overloaded"),
    ModelTimeoutError("slow"),
    ModelConnectionError("down"),
]
NOT_RETRYABLE = [
    ModelAuthError("bad key"),
    ModelCallError("400 bad request"),
    ModelNotFoundError("no such model"),
    ContextTooLongError("too long"),
    ModelRefusalError("no"),
]


@pytest.mark.parametrize("error", RETRYABLE, ids=lambda e: type(e).__name__)
def test_falls_back_on_a_retryable_error(error: ModelError) -> None:
    lines: list[str] = []
    primary, backup = Failing("primary", error), Answering("backup", "from backup")
    model = FallbackModel([primary, backup], lines.append)
    assert model.model_id == "primary"  # before any answer: the primary's
    assert model.complete(REQUEST).text == "from backup"
    assert model.model_id == "backup"  # the one that answered last
    assert len(lines) == 1 and lines[0].startswith("[model] primary failed (")
    assert lines[0].endswith("); falling back to backup\n")
    assert lines[0].count("\n") == 1


@pytest.mark.parametrize("error", NOT_RETRYABLE, ids=lambda e: type(e).__name__)
def test_does_not_fall_back_on_other_errors(error: ModelError) -> None:
    lines: list[str] = []
    backup = Answering("backup")
    model = FallbackModel([Failing("primary", error), backup], lines.append)
    with pytest.raises(type(error)) as raised:
        model.complete(REQUEST)
    assert raised.value is error
    assert backup.calls == 0 and lines == []
    assert model.model_id == "primary"


def test_a_bug_is_not_a_model_failure() -> None:
    class Broken(Answering):
        def complete(self, request: ModelRequest) -> ModelResponse:
            raise KeyError("bug")

    backup = Answering("backup")
    with pytest.raises(KeyError):
        FallbackModel([Broken("primary"), backup], lambda line: None).complete(REQUEST)
    assert backup.calls == 0


def test_all_failing_raises_the_last_error_after_one_line_per_fallback() -> None:
    lines: list[str] = []
    last = ModelTimeoutError("third")
    models = [
        Failing("one", ModelRateLimitError("first")),
        Failing("two", ModelServerError("second")),
        Failing("three", last),
    ]
    with pytest.raises(ModelTimeoutError) as raised:
        FallbackModel(models, lines.append).complete(REQUEST)
    assert raised.value is last
    assert lines == [
        "[model] one failed (rate limited); falling back to two\n",
        "[model] two failed (server error or overloaded); falling back to three\n",
    ]
    assert [model.calls for model in models] == [1, 1, 1]


def test_a_non_retryable_error_from_a_fallback_stops_the_chain() -> None:
    lines: list[str] = []
    auth = ModelAuthError("bad key")
    third = Answering("three")
    models = [Failing("one", ModelServerError("503")), Failing("two", auth), third]
    with pytest.raises(ModelAuthError):
        FallbackModel(models, lines.append).complete(REQUEST)
    assert len(lines) == 1 and third.calls == 0


def test_every_call_starts_from_the_primary() -> None:
    flaky = Failing("flaky", ModelServerError("503"))
    backup = Answering("backup")
    model = FallbackModel([flaky, backup], lambda line: None)
    model.complete(REQUEST)
    model.complete(REQUEST)
    assert (flaky.calls, backup.calls) == (2, 2)


def test_a_primary_that_answers_is_the_only_one_asked() -> None:
    primary, backup = Answering("primary"), Answering("backup")
    lines: list[str] = []
    model = FallbackModel([primary, backup], lines.append)
    assert model.complete(REQUEST).text == "ok"
    assert (primary.calls, backup.calls, lines) == (1, 0, [])
    assert model.models == (primary, backup)


def test_needs_a_model() -> None:
    with pytest.raises(ValueError, match="at least one model"):
        FallbackModel([], lambda line: None)


def test_retryable_marks() -> None:
    assert all(is_retryable(error) for error in RETRYABLE)
    assert not any(is_retryable(error) for error in NOT_RETRYABLE)
    assert not is_retryable(ValueError("x"))


def test_scripted_failing_fails_retryably_and_falls_back_to_scripted() -> None:
    failing = select_model(FAILING_MODEL_ID, environ={})
    assert isinstance(failing, FailingModel) and failing.model_id == "scripted/failing"
    with pytest.raises(ModelServerError, match="failed on purpose") as raised:
        failing.complete(REQUEST)
    assert is_retryable(raised.value)
    # A script to replay does not make it answer.
    assert isinstance(
        select_model("scripted/failing", environ={"SPECWIRE_SCRIPT": "x"}), FailingModel
    )
    lines: list[str] = []
    model = FallbackModel([failing, ScriptedModel()], lines.append)
    assert model.complete(REQUEST).text == "Noted: hello."
    assert model.model_id == "scripted"
    assert lines == [
        "[model] scripted/failing failed (server error or overloaded); falling back to scripted\n"
    ]


def test_the_answering_model_is_the_one_of_the_calling_thread() -> None:
    """Review H10: one chain serves a host's turns and its dream's session, each in its own
    thread, and the dream's budget prices a call by the chain's ``model_id`` read just after
    it (``BudgetedModel``). Another thread's call answered by the primary in between made a
    call the (dearer) fallback answered look like the primary's: metered at the wrong price."""
    import threading

    class FailsInOneThread:
        model_id = "primary"

        def __init__(self) -> None:
            self.failing_thread: int | None = None

        def complete(self, request: ModelRequest) -> ModelResponse:
            if threading.get_ident() == self.failing_thread:
                raise ModelServerError("overloaded")
            return ModelResponse(text="primary")

    primary = FailsInOneThread()
    chain = FallbackModel([primary, ScriptedModel(model_id="fallback")], log=lambda _line: None)
    seen: dict[str, str] = {}
    dream_answered = threading.Event()
    turn_done = threading.Event()

    def dream() -> None:
        primary.failing_thread = threading.get_ident()
        chain.complete(REQUEST)  # the fallback answers this thread's call
        dream_answered.set()
        turn_done.wait(5)
        seen["dream"] = chain.model_id

    def turn() -> None:
        dream_answered.wait(5)
        assert chain.complete(REQUEST).text == "primary"
        seen["turn"] = chain.model_id
        turn_done.set()

    threads = [threading.Thread(target=dream), threading.Thread(target=turn)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"dream": "fallback", "turn": "primary"}
