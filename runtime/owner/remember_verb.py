"""``codegen memory remember TEXT``: the owner writes a fact the agent will recall.

An ``agent`` fact by default: every conversation of the agent recalls it (a managed tenant's
price list, a channel bot's house rules). ``--user ID``, ``--conversation ID``, ``--role NAME``
or ``--scope crew`` put it in that key instead; ``--key K`` makes it a keyed fact that replaces
the live fact with that key in the same scope key. The write goes through the backend's own
retain, so it is screened like any write: a flagged text is held in quarantine (``list
--quarantined``, ``release ID``), not stored.
"""

from __future__ import annotations

import argparse
import json

from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import check_fact_key
from specwire.runtime.facts.providers.protocol import Capabilities, RetainRequest
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.backend import open_facts
from specwire.runtime.owner.output import report
from specwire.runtime.owner.scoping import write_key
from specwire.runtime.owner.selection import Selection, SelectionError

OWNER_TAG = "owner"


def remember(args: argparse.Namespace, selection: Selection) -> int:
    if not args.text.strip():
        raise SelectionError("remember: the text is empty")
    scope = write_key(args)
    if args.key is not None:
        check_fact_key(args.key)
    tags = tuple(dict.fromkeys([OWNER_TAG, *args.tag]))
    request = RetainRequest(args.text, tags, scope=scope, key=args.key)
    with open_facts(args, selection, create=True) as facts:
        _check_supported(facts.provider.capabilities(), scope, keyed=args.key is not None)
        keyed = "" if args.key is None else f" under key {json.dumps(args.key, ensure_ascii=True)}"
        confirm(
            f"remember in {scope.label()}{keyed} of {facts.where}: "
            f"{json.dumps(args.text, ensure_ascii=True)}",
            assume_yes=args.yes,
        )
        result = facts.provider.retain(request)
    data = {
        "id": result.id,
        "scope": scope.scope,
        "subject": scope.subject,
        "key": args.key,
        "created": result.created,
        "superseded": result.superseded,
        "quarantined": result.quarantined,
    }
    if result.quarantined is not None:
        summary = (
            f"not remembered: held in quarantine as {result.id} (rule {result.quarantined}); "
            f"release it with `codegen memory release {result.id}` if you vouch for it"
        )
    else:
        replaced = "" if result.superseded is None else f", replacing {result.superseded}"
        summary = f"remembered {result.id} in {scope.label()}{replaced}"
    report(args, data, summary)
    return 0


def _check_supported(capabilities: Capabilities, scope: ScopeKey, *, keyed: bool) -> None:
    """A backend that does not keep scope keys (or keys) would store the fact as a plain
    ``agent`` fact, recalled by everyone: refused, never widened."""
    if scope != AGENT and not capabilities.scopes:
        raise SelectionError(
            f"this backend does not keep memory scopes: {scope.label()} would become agent memory"
        )
    if keyed and not capabilities.keys:
        raise SelectionError("this backend does not keep keyed facts (--key)")
