"""``codegen dream``: the owner's dream command (``runtime.owner.dream_command``) with the model
session its ``run --bundle`` needs for ``mode: full``.

The owner's commands (layer 9) never import the hosts, where the session is built
(``runtime.hosts.dream_session``, layer 11): this module hands them a ``session_factory``, as
the console hands ``codegen memory`` its extra verb. The model is the bundle's (``MODEL``, or
``--model``), selected as the bundle selects it (``$SPECWIRE_MODEL`` wins, a secret reference
is read from the environment), over the bundle's memory, metered against the dream's budget;
what each run spends goes in the tenant's usage ledger as the dream's kind
(``runtime.hosts.dream_ledger``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from specwire.runtime.owner import dream_command as owner_dream

if TYPE_CHECKING:
    from specwire.runtime.dream.model_phase import ModelSession
    from specwire.runtime.owner.dream_command import SessionRequest


def bundle_session(request: SessionRequest) -> tuple[str, ModelSession]:
    """The bundle's model and a session of it over the bundle's memory (loaded here: ``status``
    and a deterministic run never import the agent loop)."""
    from specwire.runtime.core.paths import StoreLayout
    from specwire.runtime.hosts.dream_ledger import recorded
    from specwire.runtime.hosts.dream_session import memory_session
    from specwire.runtime.models.select import select_spec_model

    model = select_spec_model(request.model)
    session = memory_session(
        request.fragment, model, cwd=request.cwd, tenant=request.tenant, log=request.log
    )
    # What it spends goes in the tenant's usage ledger, as the scheduled dream's does.
    layout = StoreLayout.for_cwd(request.cwd, request.fragment.spec_name, request.tenant)
    return model.model_id, recorded(session, request.fragment, layout, request.tenant, request.log)


def main(argv: Sequence[str] | None = None) -> int:
    return owner_dream.main(argv, session_factory=bundle_session)


def cli() -> None:
    raise SystemExit(main())
