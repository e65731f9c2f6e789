"""Property: any valid IR emits a bundle that parses, type-shapes right and carries the user's
text back unchanged; memory on ⇔ exactly one wire_memory call."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specwire.emitters.registry import emit
from specwire.emitters.verify import count_wire_calls
from specwire.ir.model import (
    IrAgent,
    IrChannel,
    IrChannelSpec,
    IrCli,
    IrContinuity,
    IrCrew,
    IrMemory,
    IrRole,
    IrSpec,
    SecretRef,
)

names = st.from_regex(r"\A[\w .:-]{0,20}\w\Z", fullmatch=True)
text = st.text(max_size=200)
memories = st.none() | st.builds(
    IrMemory,
    recall_k=st.none() | st.integers(1, 50),
    auto_capture=st.none() | st.booleans(),
    ttl_ms=st.none() | st.integers(3_600_000, 10**12),
    embedder=st.none() | st.sampled_from(["hash/256", "openai/text-embedding-3-small"]),
)
continuities = st.none() | st.builds(
    IrContinuity,
    plan=st.booleans(),
    proof=st.sampled_from(["ladder", "require", "off"]),
    ledger=st.booleans(),
    handoff=st.booleans(),
    scope=st.just("spec"),
    focus_max_chars=st.none() | st.integers(1, 10_000),
)
tools = st.lists(st.sampled_from(["bash", "grep", "ls", "read", "write"]), unique=True).map(tuple)


@st.composite
def specs(draw: st.DrawFn) -> IrSpec:
    common: dict[str, Any] = {
        "name": draw(names),
        "tools": draw(tools),
        "memory": draw(memories),
        "continuity": draw(continuities),
    }
    kind = draw(st.sampled_from(["cli", "channel", "crew"]))
    agent = IrAgent(model=draw(text), instructions=draw(text))
    if kind == "cli":
        return IrCli(agent=agent, **common)
    if kind == "channel":
        settings_ = ((draw(text), SecretRef(env="TOKEN")), (draw(text), draw(st.integers())))
        channel = IrChannel(name=draw(text), settings=settings_)
        return IrChannelSpec(agent=agent, channels=(channel,), session_key=draw(text), **common)
    roles = tuple(
        IrRole(name=f"r{i}", instructions=draw(text)) for i in range(draw(st.integers(1, 3)))
    )
    return IrCrew(model=draw(text), entry="r0", roles=roles, **common)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_any_valid_ir_emits_a_verified_bundle(spec: IrSpec) -> None:
    bundle = emit(spec)
    source = bundle["agent.py"]
    namespace: dict[str, Any] = {"__name__": "not_main"}
    exec(compile(source, "agent.py", "exec"), namespace)
    assert namespace["SPEC_NAME"] == spec.name
    if isinstance(spec, IrCrew):
        assert [role.instructions for role in namespace["ROLES"]] == [
            role.instructions for role in spec.roles
        ]
    else:
        assert namespace["INSTRUCTIONS"] == spec.agent.instructions
        assert namespace["MODEL"] == spec.agent.model
    memoryless = spec.memory is None and spec.continuity is None
    assert count_wire_calls(source) == (0 if memoryless else 1)
    for text_file in bundle.values():
        assert text_file.endswith("\n") and not text_file.endswith("\n\n")
        assert "\r" not in text_file
