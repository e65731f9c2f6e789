"""``codegen dream``: run a spec's dream by hand, or see what the last run did.

    codegen dream [--root DIR] [--spec NAME] [--tenant ID] [--json] run [--bundle AGENT_PY]
                  [--every DUR] [--mode deterministic|full] [--budget-usd USD]
                  [--instructions TEXT] [--proof ladder|require|off] [--model ID] [--force]
    codegen dream [--root DIR] [--spec NAME] [--tenant ID] [--json] status

``--bundle`` runs the dream of a built bundle (its ``agent.py`` or folder; read, never run:
``runtime.owner.bundle_fragment``) as the bundle's own hosts run it: its ``memory.dream``
settings and prices, its continuity proof mode, its fact and state backends, and, with
``mode: full``, a budget and a priced model, the model phase in a session of its model
(``MODEL``, or ``--model``; ``$SPECWIRE_MODEL`` wins as it does for the bundle) over its
memory. A flag given beside ``--bundle`` overrides the bundle's setting. The session is built
by a higher layer (``runtime.hosts.dream_command`` passes ``session_factory``: the owner's
commands never import the hosts); ``codegen dream`` is that entry. Without ``--bundle`` there
is no memory to wire a session over, and a ``mode: full`` run says its model phase was given no
session.

``--backend postgres`` (with ``--dsn $VAR``) runs the fact steps on the spec's PostgreSQL facts
(``runtime.owner.backend``) and reads and writes the run's record, continuity and wiki in the
database's state volume (``memory.state: postgres``, the default with that backend). Without
it, a spec with no memory under ``--root`` is refused in one line that names the option.

``run`` prints each step's counts; a run in a window that already had one does nothing and
says so (``--force`` runs anyway). ``status`` prints the last run's record. Exit status: 0 done
(also a run skipped for its window), 2 bad input or a run that could not start (one line on
stderr, nothing changed), 3 a step failed (the others ran; the next run retries).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.fragment_data import (
    DreamData,
    FragmentData,
    FragmentShapeError,
    read_fragment,
)
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.progress import Progress
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.dream import DreamOutcome, DreamSettings, run_dream
from specwire.runtime.dream.fact_steps import DreamFacts
from specwire.runtime.dream.model_phase import ModelSession, spec_prices
from specwire.runtime.dream.outcome import model_ledger_line, model_phase_line
from specwire.runtime.dream.schedule import dream_settings
from specwire.runtime.dream.settings import DREAM_MODES
from specwire.runtime.dream.state import read_state
from specwire.runtime.facts.providers.admin import FactAdmin, FactLister, FactSweeper
from specwire.runtime.models.errors import ModelError
from specwire.runtime.models.prices import PriceTableError, price_lookup
from specwire.runtime.owner.backend import add_backend_options, is_remote, open_facts, remote_spec
from specwire.runtime.owner.bundle_fragment import read_bundle_fragment, read_bundle_model
from specwire.runtime.owner.database_tenancy import database_spec
from specwire.runtime.owner.selection import (
    Selection,
    SelectionError,
    named_state_root,
    select,
    select_remote,
)
from specwire.runtime.owner.state_verb import open_state_volume
from specwire.runtime.safety.redaction import redact
from specwire.runtime.safety.secrets import SecretRef
from specwire.runtime.wiring import dream_facts, state_volume

PROG = "codegen dream"
DEFAULT_EVERY = "1d"
_DURATION = re.compile(r"^(\d+)(ms|s|m|h|d)$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86_400}


class BadInput(Exception):
    """An argument the command cannot use: one line for the owner."""


def duration_s(text: str) -> int:
    """``90m`` → 5400; the spec's duration grammar (``ms|s|m|h|d``)."""
    match = _DURATION.match(text.strip())
    if match is None:
        raise BadInput(f"--every {text!r}: a duration looks like 30m, 6h or 1d")
    return int(int(match.group(1)) * _SECONDS[match.group(2)])


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--root",
        type=Path,
        default=default(Path(".")),
        help="the directory the agent runs in (default: here), as in codegen memory",
    )
    # The 0.2 name, documented for dream before ``--root`` was the one name: kept, not shown.
    parser.add_argument(
        "--cwd", dest="root", type=Path, default=default(Path(".")), help=argparse.SUPPRESS
    )
    parser.add_argument("--spec", default=default(None), help="the spec (needed when several)")
    parser.add_argument("--tenant", default=default(None), help="a managed bundle's tenant id")
    parser.add_argument(
        "--json", action="store_true", default=default(False), help="machine-readable output"
    )
    add_backend_options(parser, default)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Consolidate an agent's memory (the dream engine), or see its last run.",
        epilog="Exit status: 0 done, 2 bad input (nothing changed), 3 a step failed.",
    )
    _common(parser, suppress=False)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    run = verbs.add_parser("run", help="run the dream now (once per window)")
    _common(run, suppress=True)
    run.add_argument(
        "--bundle",
        type=Path,
        default=None,
        help="a built bundle (agent.py or its folder): its dream settings, backends and model",
    )
    run.add_argument(
        "--every", default=None, help=f"the window (default {DEFAULT_EVERY}, floor 5m)"
    )
    run.add_argument("--mode", choices=DREAM_MODES, default=None, help="default deterministic")
    run.add_argument("--budget-usd", type=float, default=None, help="model phase budget")
    run.add_argument("--instructions", default=None, help="what the model phase should do")
    run.add_argument("--proof", choices=("ladder", "require", "off"), default=None)
    run.add_argument("--model", default=None, help="the model of the model phase")
    run.add_argument("--force", action="store_true", help="run even if this window had a run")
    status = verbs.add_parser("status", help="what the last run did")
    _common(status, suppress=True)
    return parser


@dataclass(frozen=True)
class SessionRequest:
    """What a session factory needs to build the model phase's session for one run."""

    fragment: FragmentData
    model: str | SecretRef  # ``--model``, else the bundle's ``MODEL``
    cwd: Path  # where the agent runs: ``--root``, or the tenant's workspace
    tenant: Tenant | None
    log: Callable[[str], None]


# (request) -> (the model's id, the session ``mode: full`` runs in); raises ``BadInput`` (or a
# ``ModelError``: one line) for a model that cannot be loaded.
SessionFactory = Callable[[SessionRequest], tuple[str, ModelSession]]


@dataclass(frozen=True)
class _Bundle:
    """What ``--bundle`` read: the fragment, its dream and the bundle's model."""

    fragment: FragmentData
    dream: DreamData | None
    model: str | SecretRef | None


def main(
    argv: Sequence[str] | None = None, *, session_factory: SessionFactory | None = None
) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        bundle = _read_bundle(args) if args.verb == "run" else None
        if bundle is not None:
            spec = bundle.fragment.spec_name
            selection = select_remote(args.root, spec, args.tenant, None)
            memory = bundle.fragment.memory
            if memory is not None and memory.state == "postgres":
                # Its state is the database's: the tenant must be there; no folder is made.
                if args.tenant is not None:
                    database_spec(memory.dsn, args.tenant, spec)
            else:
                selection.layout.root.mkdir(parents=True, exist_ok=True)
        elif args.backend == "postgres":
            # Nothing under --root: the database says which tenants and specs exist.
            spec = database_spec(args.dsn, args.tenant, args.spec)
            selection = select_remote(args.root, spec, args.tenant, None)
        elif is_remote(args):
            spec = remote_spec(args.root, args.spec, args.tenant)
            selection = select_remote(args.root, spec, args.tenant, None)
            selection.layout.root.mkdir(parents=True, exist_ok=True)
        else:
            if not named_state_root(args.root, args.tenant).is_dir():
                raise SelectionError(
                    f"no state directory at {named_state_root(args.root, args.tenant)} (a spec "
                    "with memory.backend: postgres keeps its memory in the database: pass "
                    "--backend postgres)"
                )
            selection = select(args.root, args.spec, args.tenant, None)
            _check_known(selection.layout)
        # A memory.state: postgres bundle's dream state, continuity and wiki: the database's.
        volume = open_state_volume(args, selection) if args.backend == "postgres" else None
        if args.verb == "status":
            state = read_state(selection.layout, volume)
            return _status(args, state, selection.layout.spec_name)
        dream = bundle.dream if bundle is not None else None
        settings = _settings(args, dream)
        with Progress("dreaming") as progress, progress.ticking():

            def log(line: str) -> None:
                progress.above(lambda: _stderr(line))

            if bundle is not None:
                outcome = _run_bundle(args, bundle, selection, settings, log, session_factory)
            else:
                outcome = run_dream(
                    selection.layout,
                    settings,
                    log=log,
                    proof_mode=args.proof or "ladder",
                    model_id=args.model,
                    price_of=price_lookup(),
                    force=args.force,
                    facts=_facts_opener(args, selection),
                    volume=volume,
                )
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130
    except (
        BadInput,
        SelectionError,
        StoreError,
        MemoryServiceError,
        ModelError,
        PriceTableError,
        FragmentShapeError,
        OSError,
        ValueError,
    ) as exc:
        sys.stderr.write(redact(f"{PROG}: {exc}\n"))
        return 2
    _print_outcome(args, outcome)
    return 3 if outcome.status == "partial" else 0


def _read_bundle(args: argparse.Namespace) -> _Bundle | None:
    if args.bundle is None:
        return None
    if args.backend != "file":
        raise BadInput("--bundle runs on the bundle's own backends: drop --backend")
    try:
        fragment = read_fragment(read_bundle_fragment(args.bundle))
    except FragmentShapeError as exc:
        raise BadInput(f"--bundle {args.bundle}: invalid memory fragment: {exc}") from None
    if args.spec is not None and args.spec != fragment.spec_name:
        raise BadInput(f"--spec {args.spec!r}: the bundle's spec is {fragment.spec_name!r}")
    dream = fragment.memory.dream if fragment.memory is not None else None
    return _Bundle(fragment, dream, read_bundle_model(args.bundle))


def _settings(args: argparse.Namespace, dream: DreamData | None) -> DreamSettings:
    """The flags over the bundle's ``memory.dream`` (a bundle without one: the flags alone)."""
    base = dream_settings(dream) if dream is not None else None
    every = duration_s(args.every) if args.every is not None else None
    return DreamSettings(
        every_s=every or (base.every_s if base else duration_s(DEFAULT_EVERY)),
        mode=args.mode or (base.mode if base else "deterministic"),
        budget_usd=args.budget_usd
        if args.budget_usd is not None or base is None
        else base.budget_usd,
        instructions=args.instructions or (base.instructions if base else None),
    )


def _run_bundle(
    args: argparse.Namespace,
    bundle: _Bundle,
    selection: Selection,
    settings: DreamSettings,
    log: Callable[[str], None],
    session_factory: SessionFactory | None,
) -> DreamOutcome:
    """The bundle's dream, as its hosts run it (see the module's docstring)."""
    fragment = bundle.fragment
    layout = selection.layout
    tenant = Tenant(args.tenant, layout.root) if args.tenant is not None else None
    prices = price_lookup(spec_prices(bundle.dream.prices if bundle.dream else None))
    model_ref: str | SecretRef | None = args.model or bundle.model
    model_id = args.model
    session: ModelSession | None = None
    if model_ref is not None and session_factory is not None and settings.mode == "full":
        cwd = args.root.resolve() if tenant is None else tenant.workspace
        if fragment.memory is None or fragment.memory.state != "postgres":
            cwd.mkdir(parents=True, exist_ok=True)  # state on files: the tenant's workspace
        model_id, session = session_factory(SessionRequest(fragment, model_ref, cwd, tenant, log))
    elif isinstance(model_ref, str):
        model_id = model_ref
    continuity = fragment.continuity
    return run_dream(
        layout,
        settings,
        log=log,
        proof_mode=args.proof or (continuity.proof if continuity is not None else "ladder"),
        model_id=model_id,
        price_of=prices,
        force=args.force,
        model_session=session,
        facts=dream_facts(fragment, tenant),
        volume=state_volume(fragment, layout, tenant),
    )


def _facts_opener(
    args: argparse.Namespace, selection: Selection
) -> Callable[[], AbstractContextManager[DreamFacts]]:
    """The fact backend ``--backend`` names, as the dream's fact steps need it."""

    @contextmanager
    def opened() -> Iterator[DreamFacts]:
        with open_facts(args, selection) as facts:
            backend = facts.backend
            if (
                not isinstance(backend, FactLister)
                or not isinstance(backend, FactAdmin)
                or not isinstance(backend, FactSweeper)
            ):
                raise facts.refusal("the dream")
            yield backend

    return opened


def _check_known(layout: StoreLayout) -> None:
    """Refuse a spec with no memory here (a typo must not start a store of its own). A spec
    that keeps its state in PostgreSQL has nothing here either: the line says where to look
    (the command cannot tell a typo from a database spec without connecting)."""
    if not (layout.facts_db.exists() or layout.state_dir.is_dir() or layout.wiki_dir.is_dir()):
        raise SelectionError(
            f"no memory of the spec {layout.spec_name!r} under {layout.root} (a spec with "
            "memory.backend: postgres keeps it in the database: pass --backend postgres)"
        )


def _stderr(line: str) -> None:
    sys.stderr.write(line)


def _table(counts: Mapping[str, Any]) -> list[str]:
    width = max((len(key) for key in counts), default=0)
    return [f"  {key:<{width}}  {value:>6}" for key, value in counts.items()]


def _print_outcome(args: argparse.Namespace, outcome: DreamOutcome) -> None:
    if args.json:
        sys.stdout.write(json.dumps(outcome.to_data(), ensure_ascii=False, indent=2) + "\n")
        return
    head = f"dream {outcome.spec}: {outcome.status} (window {outcome.window_key})"
    lines = [head]
    if outcome.note:
        lines.append(f"  {outcome.note}")
    else:
        lines += _table(outcome.counts())
        lines.append(f"model phase: {model_phase_line(asdict(outcome.model))}")
    lines += [f"error: {error}" for error in outcome.errors]
    sys.stdout.write("\n".join(lines) + "\n")


def _status(args: argparse.Namespace, state: dict[str, Any] | None, spec: str) -> int:
    if args.json:
        sys.stdout.write(json.dumps(state, ensure_ascii=False, indent=2) + "\n")
        return 0
    if state is None:
        sys.stdout.write(f"dream {spec}: no run recorded yet (codegen dream run)\n")
        return 0
    if state.get("lastRunAt") is None:  # only the mark of a model phase that never finished
        sys.stdout.write(
            f"dream {spec}: no run recorded yet; the model phase of "
            f"{state.get('modelPhaseWindow')} started and was not recorded (its process "
            "stopped): that window runs no other\n"
        )
        return 0
    outcome = state.get("lastOutcome")
    outcome = outcome if isinstance(outcome, dict) else {}
    lines = [
        f"dream {spec}: last run {state.get('lastRunAt')} — {state.get('status')} "
        f"(window {state.get('windowKey')}, every {state.get('everyS')}s)"
    ]
    counts = {
        f"{group}.{key}": value
        for group in ("facts", "wiki", "continuity")
        if isinstance(outcome.get(group), dict)
        for key, value in outcome[group].items()
    }
    lines += _table(counts)
    model = outcome.get("model")
    if isinstance(model, dict):
        lines.append(f"model phase: {model_phase_line(model)}")
    ledger = state.get("modelLedger")
    if isinstance(ledger, dict):
        lines.append(f"model phases to date: {model_ledger_line(ledger)}")
    stale = state.get("stale")
    if isinstance(stale, dict):
        for kind in ("facts", "articles"):
            listed = stale.get(kind)
            if isinstance(listed, list) and listed:
                lines.append(f"stale {kind}: {', '.join(str(item) for item in listed[:10])}")
    errors = outcome.get("errors")
    if isinstance(errors, list):
        lines += [f"error: {error}" for error in errors]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def cli() -> None:
    raise SystemExit(main())
