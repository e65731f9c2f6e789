"""``python -m specwire.runtime.facts.conformance``: run the suite against a provider or a service.

    python -m specwire.runtime.facts.conformance --provider yourpackage.module:factory
    python -m specwire.runtime.facts.conformance --url https://memory.internal --token-env TOKEN

Exit status: 0 when no case failed (skipped cases say why), 1 when one did, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from specwire.runtime.facts.conformance.case import Case
from specwire.runtime.facts.conformance.runner import Outcome, run
from specwire.runtime.facts.conformance.suite import PARTS, all_cases, coverage
from specwire.runtime.facts.conformance.target import TENANTS, TargetFactory

MARKS = {"passed": "ok", "skipped": "skip", "failed": "FAIL", "error": "ERROR"}


class UsageError(Exception):
    """Bad arguments: one line, exit 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m specwire.runtime.facts.conformance",
        description="Run specwire's fact-provider conformance suite against a provider of "
        "your own (--provider) or a running memory service (--url).",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--provider",
        metavar="MODULE:FACTORY",
        help="factory(workdir) -> target (docs/memory.md#conformance); the file backend is "
        "specwire.runtime.facts.conformance.target:local",
    )
    where.add_argument("--url", help="a memory service speaking the HTTP memory contract")
    parser.add_argument(
        "--token-env", metavar="NAME", help="with --url: the variable holding the bearer token"
    )
    parser.add_argument(
        "--other-token-env",
        metavar="NAME",
        help="with --url: a second tenant's token (runs the tenant-isolation cases)",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="with --url: seconds per call (10)"
    )
    parser.add_argument(
        "-k",
        dest="keywords",
        action="append",
        default=[],
        metavar="TEXT",
        help="only cases whose id contains TEXT (repeatable: any of them)",
    )
    parser.add_argument(
        "--part", action="append", default=[], choices=sorted(PARTS), help="only this part"
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="list the Crewship and Remem catalogue entries and the cases covering them",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print the traceback of each failure"
    )
    return parser


def _load_factory(spec: str) -> TargetFactory:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--provider must be MODULE:FACTORY (got {spec!r})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"--provider: cannot import {module_name}: {exc}") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UsageError(f"--provider: {spec} is not a callable")
    return factory  # type: ignore[no-any-return]


def _token(name: str | None, flag: str) -> str:
    if not name:
        raise UsageError(f"--url needs {flag} NAME (the variable holding the token)")
    value = os.environ.get(name, "").strip()
    if not value:
        raise UsageError(f"{flag}: the variable {name} is unset or empty")
    return value


def _endpoint_factory(args: argparse.Namespace) -> TargetFactory:
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise UsageError("--url needs httpx: pip install 'specwire[memory-http]'") from None
    from specwire.runtime.facts.conformance.endpoint import endpoint

    if not args.timeout > 0:
        raise UsageError("--timeout must be positive")
    tokens = {TENANTS[0]: _token(args.token_env, "--token-env")}
    if args.other_token_env:
        tokens[TENANTS[1]] = _token(args.other_token_env, "--other-token-env")
        if tokens[TENANTS[1]] == tokens[TENANTS[0]]:
            raise UsageError("--other-token-env must hold another tenant's token")
    return endpoint(args.url, tokens, timeout_s=args.timeout)


def _selected(args: argparse.Namespace) -> list[tuple[str, Case]]:
    chosen = []
    for case_id, case in all_cases():
        if args.part and case_id.split("/", 1)[0] not in args.part:
            continue
        if args.keywords and not any(word in case_id for word in args.keywords):
            continue
        chosen.append((case_id, case))
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    out = sys.stdout
    try:
        if args.coverage:
            for entry, case_ids in coverage().items():
                print(f"{entry}: {', '.join(case_ids) or 'NOT COVERED'}", file=out)
            return 0
        cases = _selected(args)
        if args.list:
            for case_id, case in cases:
                print(f"{case_id}  {' '.join(case.covers)}".rstrip(), file=out)
            return 0
        if sys.flags.optimize:
            raise UsageError("the cases state their expectations with assert: run without -O")
        if args.provider:
            factory, what = _load_factory(args.provider), args.provider
        elif args.url:
            factory, what = _endpoint_factory(args), args.url
        else:
            raise UsageError("say what to test: --provider MODULE:FACTORY or --url URL")
        if not cases:
            raise UsageError("no case matches the -k/--part selection")
    except UsageError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2

    print(f"specwire conformance: {len(cases)} cases against {what}", file=out, flush=True)

    def report(outcome: Outcome) -> None:
        line = f"{MARKS[outcome.status]:<5} {outcome.case_id}"
        if outcome.detail:
            line += f": {outcome.detail}"
        print(line, file=out, flush=True)
        if args.verbose and outcome.trace:
            print(outcome.trace.rstrip(), file=out, flush=True)

    outcomes = run(cases, factory, report)
    counts = {status: sum(o.status == status for o in outcomes) for status in MARKS}
    print(
        f"{len(outcomes)} cases: {counts['passed']} passed, {counts['skipped']} skipped, "
        f"{counts['failed']} failed, {counts['error']} errors",
        file=out,
    )
    return 1 if counts["failed"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
