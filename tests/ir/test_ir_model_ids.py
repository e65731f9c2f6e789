"""`codegen check` refuses model ids no adapter runs, and (unless the spec says
`allowUnlistedModels: true`) ids of a known family that this specwire does not list."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.ir.model_ids import (
    ANTHROPIC_MODELS,
    OPENAI_MODELS,
    UNLISTED_MODELS_KEY,
    family_of,
    model_id_problem,
)
from specwire.runtime.models.select import provider_of

FAMILIES = (
    "anthropic/<model> or claude-*, openai/<model>, gpt-* or o<digit>…, "
    "openai-compatible/<model> (a server at OPENAI_BASE_URL), or scripted"
)
HATCH = f"for a model newer than this specwire's list, set {UNLISTED_MODELS_KEY}: true"


def cli_spec(model: str, extra: str = "") -> str:
    return f"name: s\ntarget: cli\n{extra}agent: {{model: {model}, instructions: i}}\n"


def issues(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    return [str(issue) for issue in caught.value.issues]


def test_a_misspelt_listed_model_gets_a_did_you_mean() -> None:
    assert issues(cli_spec("claude-sonet-4-5")) == [
        'spec.yaml:3:16: agent.model: unknown anthropic model "claude-sonet-4-5" (did you mean '
        f'"claude-sonnet-4-5"?); {HATCH}'
    ]


def test_the_suggestion_keeps_the_provider_prefix() -> None:
    assert issues(cli_spec("openai/gpt-4o-mimi")) == [
        'spec.yaml:3:16: agent.model: unknown openai model "openai/gpt-4o-mimi" (did you mean '
        f'"openai/gpt-4o-mini"?); {HATCH}'
    ]


def test_an_unknown_family_is_refused_even_with_the_escape_hatch() -> None:
    expected = [
        f'spec.yaml:4:16: agent.model: unknown model family in "gemini-2.0": specwire runs '
        f"{FAMILIES}"
    ]
    assert issues(cli_spec("gemini-2.0", f"{UNLISTED_MODELS_KEY}: true\n")) == expected


def test_a_misspelt_provider_prefix_is_an_unknown_family_with_a_suggestion() -> None:
    (line,) = issues(cli_spec("antropic/claude-sonnet-4-5"))
    assert '(did you mean "anthropic/claude-sonnet-4-5"?)' in line
    assert "unknown model family" in line


def test_the_escape_hatch_accepts_a_newer_model_of_a_known_family() -> None:
    assert issues(cli_spec("claude-opus-9")) == [
        f'spec.yaml:3:16: agent.model: unknown anthropic model "claude-opus-9" (did you mean '
        f'"claude-opus-4-5"?); {HATCH}'
    ]
    load_spec_text(cli_spec("claude-opus-9", f"{UNLISTED_MODELS_KEY}: true\n"), "spec.yaml")
    load_spec_text(cli_spec("anthropic/claude-opus-9", "allow_unlisted_models: true\n"), "s.yaml")


@pytest.mark.parametrize(
    "model",
    [
        "scripted",
        "scripted/failing",
        "openai-compatible/llama3.1:8b",
        "$MODEL_ID",
        "claude-sonnet-4-5",
        "anthropic/claude-haiku-4-5",
        "gpt-4o",
        "openai/o4-mini",
        "o3",
    ],
)
def test_listed_ids_references_and_open_families_pass(model: str) -> None:
    load_spec_text(cli_spec(model), "spec.yaml")


def test_crew_models_pools_and_fallbacks_are_each_located() -> None:
    text = (
        "name: s\ntarget: crew\nmodel: gpt-4oo\nentry: a\nroles:\n"
        "  a: {instructions: x, modelPool: [o3, claude-sonet-4-5]}\n"
        "  b: {instructions: y, model: scripted, modelFallbacks: [gemini]}\n"
    )
    found = issues(text)
    assert [line.split(": ")[0] + ": " + line.split(": ")[1] for line in found] == [
        "spec.yaml:3:8: model",
        "spec.yaml:6:40: roles.a.modelPool[1]",
        "spec.yaml:7:58: roles.b.modelFallbacks[0]",
    ]
    assert '(did you mean "gpt-4o"?)' in found[0]
    assert '(did you mean "claude-sonnet-4-5"?)' in found[1]
    assert "unknown model family" in found[2]


@pytest.mark.parametrize("model_id", [*ANTHROPIC_MODELS, *OPENAI_MODELS])
def test_every_listed_id_runs_on_the_runtime_adapter_of_its_family(model_id: str) -> None:
    found = family_of(model_id)
    assert found is not None and found[0] in ("anthropic", "openai")
    assert provider_of(model_id) == (found[0], model_id)
    assert provider_of(f"{found[0]}/{model_id}") == (found[0], model_id)
    assert model_id_problem(model_id) is None


@pytest.mark.parametrize(
    "model_id",
    [
        "claude-x",
        "gpt-x",
        "o9-preview",
        "anthropic/x",
        "openai/x",
        "openai-compatible/x",
        "gemini-2.0",
        "mystery/claude-x",
        "anthropic/",
        "claude",
        "o",
    ],
)
def test_the_compiler_and_the_runtime_agree_on_families(model_id: str) -> None:
    found = family_of(model_id)
    assert (found is None) == (provider_of(model_id) is None)
    if found is not None:
        assert provider_of(model_id) == found


def test_codegen_check_exits_2_with_the_located_line(tmp_path: Path) -> None:
    spec = tmp_path / "agent.yaml"
    spec.write_text(cli_spec("claude-sonet-4-5"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", "check", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert 'did you mean "claude-sonnet-4-5"?' in done.stderr
    assert "Traceback" not in done.stderr
