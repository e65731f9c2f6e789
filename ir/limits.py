"""How large a spec may be: far above any hand-written spec, low enough that a hostile file is
refused in well under a second (the YAML parser is pure Python: about 20,000 nodes a second).

Every cap is checked before validation: the file size on the raw bytes, nodes and depth while
the YAML is parsed (and again while aliases are expanded), list and mapping sizes while the
document is walked.
"""

from __future__ import annotations

from typing import Final

MAX_SPEC_BYTES: Final = 1 << 20  # 1 MiB
MAX_YAML_NODES: Final = 10_000  # keys, values and list items, aliases expanded
MAX_YAML_DEPTH: Final = 32
MAX_TENANTS: Final = 500
# Every other list or user-keyed mapping: tools, channels, channel settings, roles,
# allowedOrigins.
MAX_ENTRIES: Final = 100
# The name is the bundle's directory and, with a hash and a suffix, the name of store files
# (`<name>-<hash>.sqlite3-journal`): it must fit one 255-byte path component with room to spare.
MAX_NAME_LENGTH: Final = 128


def size_text(size: int) -> str:
    """A byte count for messages: ``1 MiB``, ``1.5 MiB``, ``12 KiB``, ``300 bytes``."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"
