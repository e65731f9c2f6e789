"""``codegen eval exam SPEC… [--json] [--workdir DIR]``: a spec's exam before and after a study
pass.

For each spec (which must have ``learning.exam``): a fresh wiki in a scratch folder, the exam
(the score of an agent that has studied nothing), one study pass over the spec's sources, the
exam again. Sources and the dataset are read from the spec's folder, as a bundle run from there
reads them; nothing is written there. Failed samples are reported, not logged as goals (the
scratch folder is thrown away unless ``--workdir`` keeps it).

Exit status: 0 once every spec ran (whatever the scores); 2 when a spec is wrong or has no exam,
or its dataset cannot be read (one line each, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.fragment import DEFAULT_WIKI_RECALL_K
from specwire.runtime.core.fragment_data import FragmentData, FragmentShapeError, read_fragment
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.learning.dataset import DatasetError
from specwire.runtime.learning.exam import ExamReport
from specwire.runtime.learning.study import StudyReport
from specwire.runtime.learning.tools import LearningContext, exam, study
from specwire.runtime.wiki.store import WikiStore

EXIT_OK = 0
EXIT_BAD_INPUT = 2

# (spec path) -> the spec's fragment as the compiler lowers it; raises SpecProblem.
FragmentLoader = Callable[[Path], Mapping[str, Any]]


class SpecProblem(Exception):
    """A spec that does not compile: its located lines."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


@dataclass(frozen=True)
class ExamEval:
    spec: Path
    name: str
    before: ExamReport
    study: StudyReport
    after: ExamReport

    def lines(self) -> list[str]:
        gain = round((self.after.score - self.before.score) * 100)
        rows = [
            f"{self.name} ({self.spec}): exam before study {self.before.passed}/"
            f"{self.before.total} ({self.before.score:.0%}), after {self.after.passed}/"
            f"{self.after.total} ({self.after.score:.0%}), {gain:+d} points",
            f"  {self.study.summary()}",
        ]
        rows += [f"  {line}" for line in self.study.lines()[1:] if line.endswith(")")]
        failing = [r.sample.id for r in self.after.results if not r.passed]
        if failing:
            rows.append(f"  still failing after study: {', '.join(failing)}")
        return rows

    def to_data(self) -> dict[str, Any]:
        return {
            "spec": str(self.spec),
            "name": self.name,
            "before": self.before.to_data(),
            "study": {
                "sources": len(self.study.sources),
                "written": self.study.written,
                "unchanged": self.study.count("unchanged"),
                "failed": self.study.count("failed"),
            },
            "after": self.after.to_data(),
        }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codegen eval exam",
        description="Score a learning spec's exam before and after a study pass of its sources.",
    )
    parser.add_argument("specs", nargs="+", type=Path, metavar="SPEC")
    parser.add_argument("--json", action="store_true", help="print JSON instead of lines")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep the scratch wiki in a new folder under DIR (default: removed afterwards)",
    )
    return parser


def main(argv: Sequence[str], load: FragmentLoader) -> int:
    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    problems: list[str] = []
    fragments: list[tuple[Path, FragmentData]] = []
    for spec in args.specs:
        try:
            fragment = read_fragment(load(spec))
        except SpecProblem as exc:
            problems.extend(exc.lines)
            continue
        except FragmentShapeError as exc:  # a defect: the compiler wrote what it cannot read
            problems.append(f"{spec}: {exc}")
            continue
        if fragment.learning is None or fragment.learning.exam is None:
            problems.append(f"{spec}: no learning.exam to run (add learning: {{exam: …}})")
            continue
        fragments.append((spec, fragment))
    if problems:
        return _fail(problems)
    try:
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="specwire-exam-", dir=args.workdir))
    except OSError as exc:
        return _fail([f"codegen eval exam: cannot create a folder under {args.workdir}: {exc}"])
    if args.workdir is not None:
        sys.stderr.write(f"scratch wikis kept in {root}\n")
    try:
        results = [_evaluate(spec, fragment, root) for spec, fragment in fragments]
    except DatasetError as exc:
        return _fail([str(exc)])
    finally:
        if args.workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        text = json.dumps([r.to_data() for r in results], indent=2, ensure_ascii=False) + "\n"
    else:
        text = "".join(f"{line}\n" for r in results for line in r.lines())
    sys.stdout.write(text)
    sys.stdout.flush()
    return EXIT_OK


def _evaluate(spec: Path, fragment: FragmentData, root: Path) -> ExamEval:
    assert fragment.learning is not None and fragment.memory is not None
    wiki = fragment.memory.wiki
    declared = (wiki.embedder if wiki is not None else None) or fragment.memory.embedder
    embedder = None
    if declared is not None:
        from specwire.runtime.embedders import load_embedder

        embedder = load_embedder(declared)
    folder = root / fragment.spec_name
    folder.mkdir()
    layout = StoreLayout.for_cwd(folder, fragment.spec_name, None)
    store = WikiStore(layout, require_sources=True, embedder=embedder)
    recall_k = (wiki.recall_k if wiki is not None else None) or DEFAULT_WIKI_RECALL_K
    workspace = spec.resolve().parent
    context = LearningContext(store, fragment.learning, workspace, None, recall_k)
    before = exam(context)
    studied = study(context)
    after = exam(context)
    return ExamEval(spec, fragment.spec_name, before, studied, after)


def _fail(lines: Sequence[str]) -> int:
    for line in lines:
        sys.stderr.write(f"{line}\n")
    sys.stderr.flush()
    return EXIT_BAD_INPUT
