"""Run the suite's cases against a target factory, one fresh target and folder per case."""

from __future__ import annotations

import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from specwire.runtime.facts.conformance.case import Case
from specwire.runtime.facts.conformance.checks import Skipped
from specwire.runtime.facts.conformance.target import TargetFactory

Status = Literal["passed", "failed", "skipped", "error"]
PACKAGE_FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Outcome:
    case_id: str
    status: Status
    # One line: why it failed or was skipped ("" when it passed).
    detail: str = ""
    # The whole traceback of a failure or an error ("" otherwise).
    trace: str = ""


def run_case(case_id: str, case: Case, factory: TargetFactory) -> Outcome:
    """``case`` against a target ``factory`` makes in a temporary folder (removed after)."""
    folder = Path(tempfile.mkdtemp(prefix="specwire-conformance-"))
    try:
        try:
            target = factory(folder)
        except Exception as exc:
            return Outcome(case_id, "error", f"the factory failed: {_one_line(exc)}", _trace(exc))
        outcome = _outcome(case_id, case, target)
        try:
            target.close()
        except Exception as exc:
            if outcome.status == "passed":
                return Outcome(case_id, "error", f"close() failed: {_one_line(exc)}", _trace(exc))
        return outcome
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _outcome(case_id: str, case: Case, target: object) -> Outcome:
    try:
        case.run(target)
    except Skipped as skipped:
        return Outcome(case_id, "skipped", str(skipped))
    except AssertionError as exc:
        return Outcome(case_id, "failed", _failed_assertion(exc), _trace(exc))
    except Exception as exc:
        return Outcome(case_id, "error", _one_line(exc), _trace(exc))
    return Outcome(case_id, "passed")


def run(
    cases: Iterable[tuple[str, Case]],
    factory: TargetFactory,
    report: Callable[[Outcome], None] = lambda outcome: None,
) -> list[Outcome]:
    """Every case in order; ``report`` sees each outcome as it is known."""
    outcomes = []
    for case_id, case in cases:
        outcome = run_case(case_id, case, factory)
        report(outcome)
        outcomes.append(outcome)
    return outcomes


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def _failed_assertion(exc: AssertionError) -> str:
    """The assertion's message, or (a bare ``assert``) the line of the case that failed."""
    message = " ".join(str(exc).split())
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if Path(frame.filename).resolve().parent == PACKAGE_FOLDER
    ]
    where = ""
    if frames:
        last = frames[-1]
        where = f"{Path(last.filename).name}:{last.lineno}: {(last.line or '').strip()}"
    if message and where:
        return f"{message} ({where})"
    return message or where or "assertion failed"
