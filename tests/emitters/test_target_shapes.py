"""Where each target wires memory (DESIGN §6) and what each bundle hands its host."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from emitter_cases import EXAMPLE_STEMS

from specwire.emitters.bundle import Bundle
from specwire.emitters.registry import EMITTERS, emit, emitter_for
from specwire.ir import TARGETS, IrSpec, load_spec_text
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.core.tool_types import ToolContext
from specwire.runtime.wiring import HostResources


class _WireSite(ast.NodeVisitor):
    """The function enclosing each wire_memory call, and the MemoryDeps keywords it passes.

    (``ast``, not libcst: libcst's import alone is a second of every xdist worker's collection.)"""

    def __init__(self) -> None:
        self.functions: list[str] = []
        self.sites: list[tuple[str, tuple[str, ...]]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "wire_memory":
            deps = node.args[1]
            assert isinstance(deps, ast.Call)
            keywords = tuple(arg.arg for arg in deps.keywords if arg.arg is not None)
            self.sites.append((self.functions[-1] if self.functions else "<module>", keywords))
        self.generic_visit(node)


def wire_sites(source: str) -> list[tuple[str, tuple[str, ...]]]:
    visitor = _WireSite()
    visitor.visit(ast.parse(source))
    return visitor.sites


@pytest.mark.parametrize(
    ("stem", "function", "keywords"),
    [
        ("support-bot", "build_session", ("catalog", "cwd")),
        ("research-market", "build_session", ("catalog", "cwd")),
        ("crew-newsroom", "build_session", ("catalog", "cwd", "audience")),
        (
            "channel-helpdesk",
            "build_turn",
            ("catalog", "cwd", "session_scope", "resources", "audience"),
        ),
        (
            "managed-concierge",
            "build_turn",
            ("catalog", "cwd", "tenant", "session_scope", "resources", "audience"),
        ),
    ],
)
def test_memory_is_wired_at_boot_or_per_turn_by_target(
    stem: str, function: str, keywords: tuple[str, ...], example_bundles: dict[str, Bundle]
) -> None:
    assert wire_sites(example_bundles[stem]["agent.py"]) == [(function, keywords)]


def test_channel_turn_builder_and_secrets(example_bundles: dict[str, Bundle]) -> None:
    source = example_bundles["channel-helpdesk"]["agent.py"]
    signature = "def build_turn(session_id: str, resources: HostResources, audience: Audience)"
    assert f"{signature} -> TurnSetup:" in source
    assert '"botToken": SecretRef("HELPDESK_SLACK_BOT_TOKEN")' in source
    assert "session_key=SESSION_KEY" in source and 'SESSION_KEY = "thread"' in source
    readme = example_bundles["channel-helpdesk"]["README.md"]
    row = "| `HELPDESK_SLACK_SIGNING_SECRET` | secret: `signingSecret` of channel `slack` |"
    assert row in readme


def test_secret_values_never_reach_a_bundle(
    monkeypatch: pytest.MonkeyPatch, example_specs: dict[str, IrSpec]
) -> None:
    monkeypatch.setenv("HELPDESK_SLACK_BOT_TOKEN", "xoxb-do-not-bake-me")
    bundle = emit(example_specs["channel-helpdesk"])
    assert all("xoxb-do-not-bake-me" not in text for text in bundle.values())


def test_managed_tenants_and_fenced_turns(example_bundles: dict[str, Bundle]) -> None:
    source = example_bundles["managed-concierge"]["agent.py"]
    signature = (
        "def build_turn(\n    tenant: Tenant, session_id: str, resources: HostResources, "
        "audience: Audience\n)"
    )
    assert f"{signature} -> TurnSetup:" in source
    assert "    cwd = tenant.workspace\n" in source
    assert "builtin_catalog(TOOLS, cwd)" in source
    deps = (
        "catalog=catalog",
        "cwd=cwd",
        "tenant=tenant",
        "session_scope=session_id",
        "resources=resources",
        "audience=audience",
    )
    assert "MemoryDeps(\n" + "".join(f"            {d},\n" for d in deps) + "        )" in source
    acme = 'id="tenant-acme",\n        max_input_tokens=2000000,\n        max_output_tokens=200000,'
    assert acme in source
    assert 'TenantConfig(\n        id="tenant-globex",\n    ),' in source


def test_crew_roles_in_declaration_order(example_bundles: dict[str, Bundle]) -> None:
    source = example_bundles["crew-newsroom"]["agent.py"]
    assert source.index('name="researcher"') < source.index('name="writer"')
    assert 'ENTRY = "researcher"' in source and "roles=ROLES" in source


def test_memoryless_turn_builders_return_tools_only(example_bundles: dict[str, Bundle]) -> None:
    for stem in ("channel-plain", "managed-plain"):
        source = example_bundles[stem]["agent.py"]
        assert "    return TurnSetup(catalog=catalog)\n" in source
        assert "options=" not in source


def test_role_model_is_rendered_only_when_declared() -> None:
    spec = load_spec_text(
        "name: c\ntarget: crew\nmodel: scripted\nentry: a\n"
        "roles:\n  a: {instructions: A}\n  b: {instructions: B, model: scripted/other}\n"
        "continuity: false\n",
        "c.yaml",
    )
    source = emit(spec)["agent.py"]
    assert source.count("model=") == 2  # the role b and the host call
    assert 'model="scripted/other"' in source


def test_role_model_pool_and_fallbacks_are_rendered_only_when_declared() -> None:
    spec = load_spec_text(
        "name: c\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n"
        "  a: {instructions: A, modelPool: [scripted/one, $POOL_TWO]}\n"
        "  b: {instructions: B, model: scripted/failing, modelFallbacks: [scripted]}\n"
        "  c: {instructions: C}\n"
        "continuity: false\n",
        "c.yaml",
    )
    bundle = emit(spec)
    source = bundle["agent.py"]
    assert source.count("model_pool=") == 1 and source.count("model_fallbacks=") == 1
    assert 'model_pool=("scripted/one", SecretRef("POOL_TWO")),' in source
    assert 'model_fallbacks=("scripted",),' in source
    role_c = source[source.index('name="c"') :]
    assert "model" not in role_c[: role_c.index(")")]
    readme = bundle["README.md"]
    assert "| `POOL_TWO` | secret: the model id in role `a`'s pool" in readme
    assert "falls back to `scripted`" in readme


def test_registry_covers_every_target_and_checks_the_ir_type(
    example_specs: dict[str, IrSpec],
) -> None:
    assert tuple(EMITTERS) == TARGETS
    assert sorted(example_specs) == sorted(EXAMPLE_STEMS)
    with pytest.raises(TypeError, match="cannot emit a IrCli"):
        emitter_for("crew")(example_specs["support-bot"])
    with pytest.raises(KeyError, match="known: cli, channel, managed, research, crew"):
        emitter_for("web")


SECRET_MODEL_SPECS: dict[str, str] = {
    "cli": "name: s\ntarget: cli\nagent: {model: $MODEL_ID, instructions: i}\n",
    "channel": "name: s\ntarget: channel\nagent: {model: $MODEL_ID, instructions: i}\n"
    "channels: {slack: {botToken: $SLACK_TOKEN}}\nrouting: {sessionKey: thread}\n",
    "managed": "name: s\ntarget: managed\nagent: {model: $MODEL_ID, instructions: i}\n"
    "tenants: [{id: acme}]\n",
    "research": "name: s\ntarget: research\nagent: {model: $MODEL_ID, instructions: i}\n"
    "goal: g\nbranchingFactor: 1\nmaxDurationMs: 10\n",
    "crew": "name: s\ntarget: crew\nmodel: $MODEL_ID\nentry: a\nroles: {a: {instructions: x}}\n",
}
MODEL_ROW = "| `MODEL_ID` | secret: the model id (required unless `SPECWIRE_MODEL` is set) |"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("memory", ["", "continuity: false\n"], ids=["memory", "memoryless"])
def test_a_secret_model_id_is_a_reference_never_a_literal(
    target: str, memory: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL_ID", "do-not-bake-this-model")
    bundle = emit(load_spec_text(SECRET_MODEL_SPECS[target] + memory, "s.yaml"))
    source = bundle["agent.py"]
    assert '\nMODEL = SecretRef("MODEL_ID")\n' in source
    imported = source.split("from specwire.runtime.bundle import", 1)[1].split("\n\n", 1)[0]
    assert "SecretRef" in imported
    assert "$MODEL_ID" not in source
    readme = bundle["README.md"]
    assert "running the model named by the `MODEL_ID` environment variable" in readme
    assert "| `SPECWIRE_MODEL` | overrides the model id read from `MODEL_ID` (optional) |" in readme
    assert MODEL_ROW in readme
    assert "no secret value is stored in this" in readme
    assert all("do-not-bake-this-model" not in text for text in bundle.values())


def test_a_plain_model_id_needs_no_secret_import(example_bundles: dict[str, Bundle]) -> None:
    source = example_bundles["cli-plain"]["agent.py"]
    assert '\nMODEL = "scripted"\n' in source and "SecretRef" not in source


def test_crew_role_models_may_be_secret_references() -> None:
    spec = load_spec_text(
        "name: c\ntarget: crew\nmodel: scripted\nentry: a\n"
        "roles:\n  a: {instructions: A}\n  b: {instructions: B, model: $WRITER_MODEL}\n"
        "continuity: false\n",
        "c.yaml",
    )
    bundle = emit(spec)
    assert 'MODEL = "scripted"' in bundle["agent.py"]
    assert '        model=SecretRef("WRITER_MODEL"),\n' in bundle["agent.py"]
    row = (
        "| `WRITER_MODEL` | secret: the model id of role `b` "
        "(required unless `SPECWIRE_MODEL` is set) |"
    )
    assert row in bundle["README.md"]


@pytest.mark.parametrize("memory", ["memory: {}\n", "continuity: false\n"], ids=["memory", "plain"])
def test_managed_file_tools_work_in_the_tenant_workspace_not_its_store_root(
    memory: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    spec = load_spec_text(
        "name: m\ntarget: managed\nagent: {model: scripted, instructions: i}\n"
        "tenants: [{id: acme}]\ntools: [read, write, ls]\n" + memory,
        "m.yaml",
    )
    namespace: dict[str, Any] = {"__name__": "bundle_managed"}
    exec(compile(emit(spec)["agent.py"], "agent.py", "exec"), namespace)
    tenant = build_tenant("acme", tmp_path / "tenants")
    tenant.workspace.mkdir(parents=True)  # the managed host creates it
    audience = Audience(user="u1", conversation="sess-1", private=True)
    setup = namespace["build_turn"](tenant, "sess_0123456789abcdef", HostResources(), audience)
    try:
        write = setup.catalog.get("write")
        ctx = ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_1")
        forged = write.invoke({"path": "sessions/sess_x.jsonl", "content": "{}"}, ctx)
        assert not forged.is_error, forged.text
        assert (tenant.workspace / "sessions" / "sess_x.jsonl").is_file()
        assert not (tenant.root / "sessions" / "sess_x.jsonl").exists()
        escape = write.invoke({"path": "../sessions/sess_x.jsonl", "content": "{}"}, ctx)
        assert escape.is_error
        assert not (tenant.root / "sessions").exists()
        if memory.startswith("memory"):
            remember = setup.catalog.get("Remember")
            remembered = remember.invoke({"text": "acme pays in EUR"}, ctx)
            assert not remembered.is_error, remembered.text
    finally:
        setup.release()
    outside = {path.name for path in tenant.root.iterdir()} - {"workspace"}
    assert bool(outside) == memory.startswith("memory")  # the stores: in the root, beside
    assert [p.relative_to(tenant.workspace).as_posix() for p in tenant.workspace.rglob("*")] == [
        "sessions",
        "sessions/sess_x.jsonl",
    ]
