"""What a spec may set for the ``bash`` tool: its network and its per-call limits.

The spec writes them in a ``bash:`` block beside ``tools:`` (``bash: {memoryMb: 4096}``); the
bundle passes them to ``builtin_catalog`` as a plain mapping. Defaults fit a normal build or
test command; the spec raises them, never past the bounds in ``runtime.core.fragment``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from specwire.runtime.core.fragment import BASH_LIMITS, BASH_NETWORKS
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass

MIB = 1024 * 1024
NETWORKS = BASH_NETWORKS
LIMIT_KNOBS = BASH_LIMITS  # (default, largest value a spec may set), shared with the compiler


@lazy_methods_dataclass(frozen=True)
class BashSettings:
    """The bash tool's sandbox: network, memory, processes, file size and CPU limits."""

    network: Literal["none", "outbound"] = "none"
    memory_mb: int = LIMIT_KNOBS["memoryMb"][0]
    processes: int = LIMIT_KNOBS["processes"][0]
    file_size_mb: int = LIMIT_KNOBS["fileSizeMb"][0]
    cpu_seconds: int = LIMIT_KNOBS["cpuSeconds"][0]

    @classmethod
    def from_spec(cls, options: Mapping[str, object] | None) -> BashSettings:
        """Settings from the spec's ``bash`` options (already validated by the compiler)."""
        if not options:
            return cls()
        unknown = sorted(set(options) - {"network", *LIMIT_KNOBS})
        if unknown:
            raise ValueError(f"unknown bash option(s): {', '.join(unknown)}")
        network = options.get("network", "none")
        if network not in NETWORKS:
            raise ValueError(f"bash network must be one of {', '.join(NETWORKS)}")
        limits: dict[str, int] = {}
        for key, (default, largest) in LIMIT_KNOBS.items():
            value = options.get(key, default)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= largest:
                raise ValueError(f"bash {key} must be an integer from 1 to {largest}")
            limits[key] = value
        return cls(
            "outbound" if network == "outbound" else "none",
            limits["memoryMb"],
            limits["processes"],
            limits["fileSizeMb"],
            limits["cpuSeconds"],
        )

    def launcher_limits(self) -> dict[str, int]:
        """The limits as the launcher takes them (bytes, processes, seconds)."""
        return {
            "memory": self.memory_mb * MIB,
            "processes": self.processes,
            "fileSize": self.file_size_mb * MIB,
            "cpu": self.cpu_seconds,
        }
