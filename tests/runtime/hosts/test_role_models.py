"""``RoleModels.for_role``: a role's pool in turn, its model or the crew's, with fallbacks."""

from __future__ import annotations

import threading
from collections import Counter

from specwire.runtime.hosts.role_models import RoleModels
from specwire.runtime.hosts.types import RoleConfig
from specwire.runtime.models.fallback import FallbackModel
from specwire.runtime.models.scripted import FailingModel, ScriptedModel
from specwire.runtime.models.types import ModelRequest, UserMessage
from specwire.runtime.safety.secrets import SecretRef

REQUEST = ModelRequest(system=[], messages=[UserMessage("hello")], tools=[])


def role_models(environ: dict[str, str] | None = None) -> tuple[RoleModels, list[str]]:
    lines: list[str] = []
    return RoleModels("scripted", "crew", lines.append, environ=environ or {}), lines


def ids(models: RoleModels, role: RoleConfig, sessions: int) -> list[str]:
    chosen = [models.for_role(role) for _ in range(sessions)]
    return [model.model_id for model in chosen if model is not None]


def test_a_role_without_a_model_runs_the_crews_and_one_with_a_model_its_own() -> None:
    models, lines = role_models()
    crew = models.for_role(RoleConfig("a", "A"))
    own = models.for_role(RoleConfig("b", "B", model="scripted/b"))
    assert isinstance(crew, ScriptedModel) and crew.model_id == "scripted"
    assert isinstance(own, ScriptedModel) and own.model_id == "scripted/b"
    assert lines == []


def test_the_pool_is_taken_in_turn_per_role() -> None:
    models, _ = role_models()
    writer = RoleConfig("writer", "W", model_pool=("scripted/1", "scripted/2", "scripted/3"))
    editor = RoleConfig("editor", "E", model_pool=("scripted/x", "scripted/y"))
    assert ids(models, writer, 2) == ["scripted/1", "scripted/2"]
    assert ids(models, editor, 3) == ["scripted/x", "scripted/y", "scripted/x"]
    assert ids(models, writer, 3) == ["scripted/3", "scripted/1", "scripted/2"]
    # Another process (another RoleModels) starts its own turns.
    assert ids(role_models()[0], writer, 1) == ["scripted/1"]


def test_concurrent_sessions_spread_evenly_over_the_pool() -> None:
    models, _ = role_models()
    role = RoleConfig("r", "R", model_pool=("scripted/1", "scripted/2", "scripted/3"))
    chosen: list[str] = []
    lock = threading.Lock()

    def sessions() -> None:
        for _ in range(100):
            model = models.for_role(role)
            assert model is not None
            with lock:
                chosen.append(model.model_id)

    threads = [threading.Thread(target=sessions) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter(chosen) == {"scripted/1": 200, "scripted/2": 200, "scripted/3": 200}


def test_pool_entries_may_be_secret_references() -> None:
    models, _ = role_models({"POOL_B": "scripted/from-env"})
    role = RoleConfig("r", "R", model_pool=("scripted/a", SecretRef("POOL_B")))
    assert ids(models, role, 3) == ["scripted/a", "scripted/from-env", "scripted/a"]


def test_fallbacks_wrap_the_chosen_model() -> None:
    models, lines = role_models()
    role = RoleConfig(
        "r", "R", model="scripted/failing", model_fallbacks=("scripted/second", "scripted")
    )
    chosen = models.for_role(role)
    assert isinstance(chosen, FallbackModel)
    assert [model.model_id for model in chosen.models] == [
        "scripted/failing",
        "scripted/second",
        "scripted",
    ]
    assert isinstance(chosen.models[0], FailingModel)
    assert chosen.complete(REQUEST).text == "Noted: hello."
    assert chosen.model_id == "scripted/second"  # the first fallback answered
    assert lines == [
        "[model] scripted/failing failed (server error or overloaded); "
        "falling back to scripted/second\n"
    ]


def test_each_pool_turn_gets_the_fallbacks() -> None:
    models, _ = role_models()
    role = RoleConfig(
        "r", "R", model_pool=("scripted/failing", "scripted/b"), model_fallbacks=("scripted",)
    )
    first, second = models.for_role(role), models.for_role(role)
    assert isinstance(first, FallbackModel) and isinstance(second, FallbackModel)
    assert [m.model_id for m in first.models] == ["scripted/failing", "scripted"]
    assert [m.model_id for m in second.models] == ["scripted/b", "scripted"]
    assert first.complete(REQUEST).text == second.complete(REQUEST).text == "Noted: hello."


def test_a_model_that_cannot_be_loaded_is_one_line_and_none() -> None:
    models, lines = role_models()
    missing = RoleConfig("r", "R", model_pool=(SecretRef("NOT_SET_ANYWHERE"),))
    assert models.for_role(missing) is None
    assert len(lines) == 1 and lines[0].startswith("crew: ") and lines[0].endswith("\n")
    assert "NOT_SET_ANYWHERE is not set" in lines[0]
    unknown_fallback = RoleConfig("f", "F", model_fallbacks=("mystery/model",))
    assert models.for_role(unknown_fallback) is None
    assert len(lines) == 2 and 'model "mystery/model" is not available' in lines[1]


def test_specwire_model_overrides_pool_and_fallbacks() -> None:
    models, lines = role_models({"SPECWIRE_MODEL": "scripted/override"})
    role = RoleConfig(
        "r", "R", model_pool=("scripted/failing", SecretRef("UNSET")), model_fallbacks=("x/y",)
    )
    chosen = [models.for_role(role) for _ in range(2)]
    assert all(isinstance(model, ScriptedModel) for model in chosen)
    assert [model.model_id for model in chosen if model is not None] == ["scripted/override"] * 2
    assert lines == []


def test_old_role_configs_keep_working() -> None:
    role = RoleConfig("r", "R", "scripted/x")
    assert (role.model_pool, role.model_fallbacks) == ((), ())
    assert ids(role_models()[0], role, 1) == ["scripted/x"]
