"""How large a spec may be: far above any hand-written spec, low enough that any file is
answered within a couple of seconds (the YAML parser is pure Python: on a slow machine about
10,000 nodes, or 0.5 MiB of short words, a second).

Every cap is checked before validation: the file size on the raw bytes, then nodes, depth and
entries per list or mapping while the YAML is parsed (nodes again while aliases are expanded).
"""

from __future__ import annotations

from typing import Final

MAX_SPEC_BYTES: Final = 512 << 10  # 512 KiB: some 130,000 tokens of instructions
MAX_YAML_NODES: Final = 5_000  # keys, values and list items, aliases expanded
MAX_YAML_DEPTH: Final = 32
# Items in one list, keys in one mapping (tenants are the longest list a spec needs: 500 with
# budgets take 4,500 nodes).
MAX_ENTRIES: Final = 500
# A number longer than this is refused (Python will not read an integer of 4,300 digits).
MAX_NUMBER_CHARS: Final = 1_000
# The name is the bundle's directory and, with a hash and a suffix, the name of store files
# (`<name>-<hash>.sqlite3-journal`): it must fit one 255-byte path component with room to spare.
MAX_NAME_LENGTH: Final = 128


def size_text(size: int) -> str:
    """A byte count for messages: ``1 MiB``, ``1.5 MiB``, ``12 KiB``, ``300 bytes``."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"
