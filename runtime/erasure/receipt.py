"""What an erasure receipt says about its subject: a keyed hash, never the subject.

A plain SHA-256 of the subject lets anyone holding the receipt test a list of candidate names
and learn which one was erased. The receipt holds an HMAC-SHA256 of the subject instead, keyed
by a random secret kept under the state root (``.erasure.key``: created once, race-free, mode
0600, never followed through a link — ``runtime.fs.keyfile``). The owner, who has the key, can
check whether a given subject was erased (``subject_hmac`` again); a copy of the receipt alone
confirms nothing. Without the key (erased with the root, say) the hash proves nothing either.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Final

from specwire.runtime.erasure.subject import Subject
from specwire.runtime.fs.keyfile import key_in

RECEIPT_KEY_FILENAME: Final = ".erasure.key"


def subject_hmac(root: Path, subject: Subject) -> str:
    """``hmac-sha256:<hex>`` of the subject, keyed by ``root``'s receipt key (created once)."""
    key = key_in(root / RECEIPT_KEY_FILENAME, create=True)
    assert key is not None  # created
    digest = hmac.new(key, subject.identity.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"hmac-sha256:{digest}"
