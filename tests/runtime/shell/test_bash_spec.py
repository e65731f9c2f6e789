"""The spec's ``bash:`` block: compiled into the bundle, validated with located errors, honoured
by the sandbox; a spec without it compiles as before (the snapshots hold that)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.emitters.registry import emit
from specwire.ir import SpecError, load_spec_text
from specwire.runtime.core.tool_types import ToolContext
from specwire.runtime.tools.builtin import builtin_catalog
from specwire.runtime.tools.shell import egress, sandbox

CTX = ToolContext("sess_0000000000000001", "tu_0000000000000001")

SPEC = """\
name: builder
target: cli
agent:
  model: scripted
  instructions: Build it.
tools: [read, bash]
bash:
{options}
"""


def spec(options: str, tools: str = "[read, bash]") -> str:
    return SPEC.format(options=options).replace("[read, bash]", tools)


def test_the_bash_block_reaches_the_bundle() -> None:
    ir = load_spec_text(spec("  memoryMb: 4096\n  cpu_seconds: 30"), "builder.yaml")
    assert ir.bash == (("cpuSeconds", 30), ("memoryMb", 4096))
    agent = emit(ir)["agent.py"]
    assert 'BASH_OPTIONS = {"cpuSeconds": 30, "memoryMb": 4096}' in agent
    assert "builtin_catalog(TOOLS, cwd, BASH_OPTIONS)" in agent
    compile(agent, "agent.py", "exec")


@pytest.mark.parametrize(
    ("options", "tools", "where", "says"),
    [
        ("  network: everywhere", "[read, bash]", "bash.network", "none, outbound"),
        ("  memoryMb: 0", "[read, bash]", "bash.memoryMb", "1"),
        ("  processes: many", "[read, bash]", "bash.processes", "integer"),
        ("  swapMb: 10", "[read, bash]", "bash.swapMb", "unknown key"),
        ("  memoryMb: 4096", "[read]", "bash", '"bash" is not in "tools"'),
    ],
)
def test_a_bad_bash_block_is_a_located_error(
    options: str, tools: str, where: str, says: str
) -> None:
    with pytest.raises(SpecError) as refused:
        load_spec_text(spec(options, tools), "builder.yaml")
    message = str(refused.value)
    assert "builder.yaml:" in message and where in message and says in message, message
    assert "Traceback" not in message


def test_outbound_network_starts_and_its_proxy_starts_with_the_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(sandbox.UNSANDBOXED_ENV, raising=False)
    monkeypatch.setattr(egress, "_shared", None)
    sandbox._cached_probe.cache_clear()
    try:
        catalog = builtin_catalog(["read", "bash"], tmp_path, {"network": "outbound"})
        assert egress._shared is None  # nothing listens until a call needs it
        tool = catalog.get("bash")
        assert tool is not None
        result = tool.invoke({"command": 'echo "proxy=$HTTPS_PROXY"'}, CTX)
        assert "proxy=http://127.0.0.1:" in result.text, result.text
        assert egress._shared is not None
    finally:
        sandbox._cached_probe.cache_clear()
        if egress._shared is not None:
            egress._shared.close()


def test_the_catalog_applies_the_spec_limits(tmp_path: Path) -> None:
    catalog = builtin_catalog(["bash"], tmp_path, {"fileSizeMb": 1})
    tool = catalog.get("bash")
    assert tool is not None
    result = tool.invoke({"command": "head -c 3000000 /dev/zero > out.bin; echo status=$?"}, CTX)
    assert "status=0" not in result.text
    assert (tmp_path / "out.bin").stat().st_size <= 1 << 20
