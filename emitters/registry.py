"""Target → emitter. ``emit(spec)`` dispatches on the IR's ``target``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TypeVar

from specwire.emitters import channel, cli, crew, managed, research
from specwire.emitters.bundle import Bundle
from specwire.ir.model import TARGETS, IrChannelSpec, IrCli, IrCrew, IrManaged, IrResearch, IrSpec

S = TypeVar("S", IrCli, IrChannelSpec, IrManaged, IrResearch, IrCrew)
Emitter = Callable[[IrSpec], Bundle]


def _expecting(kind: type[S], emit_target: Callable[[S], Bundle]) -> Emitter:
    def emit_checked(spec: IrSpec) -> Bundle:
        if not isinstance(spec, kind):
            raise TypeError(f"{emit_target.__module__} cannot emit a {type(spec).__name__}")
        return emit_target(spec)

    return emit_checked


EMITTERS: Mapping[str, Emitter] = MappingProxyType(
    {
        "cli": _expecting(IrCli, cli.emit),
        "channel": _expecting(IrChannelSpec, channel.emit),
        "managed": _expecting(IrManaged, managed.emit),
        "research": _expecting(IrResearch, research.emit),
        "crew": _expecting(IrCrew, crew.emit),
    }
)
assert tuple(EMITTERS) == TARGETS, "every target needs exactly one emitter"


def emitter_for(target: str) -> Emitter:
    try:
        return EMITTERS[target]
    except KeyError:
        known = ", ".join(EMITTERS)
        raise KeyError(f"no emitter for target {target!r} (known: {known})") from None


def emit(spec: IrSpec) -> Bundle:
    return emitter_for(spec.target)(spec)
