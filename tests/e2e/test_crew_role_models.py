"""A built crew bundle carries each role's ``modelPool`` / ``modelFallbacks`` to the runtime,
and a role whose model fails on purpose (``scripted/failing``) is answered by its fallback."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from serving_support import build_bundle, clean_env

from specwire.runtime.hosts.interactive import run_console_session
from specwire.runtime.hosts.role_models import RoleModels
from specwire.runtime.hosts.types import RoleConfig, TurnSetup
from specwire.runtime.models.fallback import FallbackModel
from specwire.runtime.safety.secrets import SecretRef

SPEC = """\
name: crew-fallback
target: crew
model: scripted
entry: editor
roles:
  editor:
    instructions: You edit.
    model: scripted/failing
    modelFallbacks: [scripted]
  writer:
    instructions: You write.
    model_pool: [scripted/one, $WRITER_MODEL]
  chief:
    instructions: You decide.
continuity: false
"""


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crew-fallback")
    spec = root / "crew-fallback.yaml"
    spec.write_text(textwrap.dedent(SPEC), encoding="utf-8")
    return build_bundle(spec, root / "out")


def load_bundle(agent: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("crew_fallback_agent", agent)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bundle_passes_the_declared_lists_only(agent: Path) -> None:
    bundle = load_bundle(agent)
    editor, writer, chief = bundle.ROLES
    assert editor == RoleConfig(
        "editor", "You edit.", model="scripted/failing", model_fallbacks=("scripted",)
    )
    assert writer == RoleConfig(
        "writer", "You write.", model_pool=("scripted/one", SecretRef("WRITER_MODEL"))
    )
    assert chief == RoleConfig("chief", "You decide.")
    source = agent.read_text(encoding="utf-8")
    assert source.count("model_pool=") == 1 and source.count("model_fallbacks=") == 1


def test_a_failing_role_model_is_answered_by_its_fallback(
    agent: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = load_bundle(agent)
    editor = bundle.ROLES[0]
    lines: list[str] = []
    chosen = RoleModels(bundle.MODEL, bundle.SPEC_NAME, lines.append, environ={}).for_role(editor)
    assert isinstance(chosen, FallbackModel)
    setup: TurnSetup = bundle.build_session(bundle.Audience(role=editor.name, crew=True))
    code = run_console_session(
        spec_name=bundle.SPEC_NAME,
        target="crew",
        model=chosen,
        instructions=editor.instructions,
        catalog=setup.catalog,
        options=setup.options,
        cwd=tmp_path,
        messages=["hello there"],
        session_info={"role": editor.name, "entry": bundle.ENTRY},
    )
    assert code == 0
    assert "Noted: hello there." in capsys.readouterr().out
    assert lines == [
        "[model] scripted/failing failed (server error or overloaded); falling back to scripted\n"
    ]
    assert chosen.model_id == "scripted"


def test_the_writers_pool_is_taken_in_turn(agent: Path) -> None:
    bundle = load_bundle(agent)
    writer = bundle.ROLES[1]
    models = RoleModels(bundle.MODEL, bundle.SPEC_NAME, environ={"WRITER_MODEL": "scripted/two"})
    chosen = [models.for_role(writer) for _ in range(3)]
    assert [m.model_id for m in chosen if m is not None] == [
        "scripted/one",
        "scripted/two",
        "scripted/one",
    ]


def test_the_built_bundle_answers_through_the_fallback(agent: Path, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(agent), "--role", "editor", "--message", "hello there"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=clean_env(),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "Noted: hello there." in run.stdout
    assert "[model] scripted/failing failed" in run.stderr
