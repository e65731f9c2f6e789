"""What ``codegen eval --html FILE`` and ``--history PATH`` write: the run appended to the
results history, then the self-contained HTML report over the history (and, with ``--store``, the
growth of a fact store).

The report is written atomically (a temporary file renamed over ``FILE``): a failed write leaves
the previous report whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from specwire.runtime.evals.history import read_history
from specwire.runtime.evals.report_html import eval_section_html, report_page_html
from specwire.runtime.facts.store import FactStore
from specwire.runtime.fs.atomic import replace_atomically

REPORT_MODE = 0o644
TITLE = "specwire eval report"


def fact_times(store: Path) -> list[datetime]:
    """The creation time of every fact the store at ``store`` ever held (live or not).
    ``StoreError`` when it is not a fact store; ``FileNotFoundError`` when it is missing."""
    if not store.is_file():
        raise FileNotFoundError(store)
    with FactStore.open(store) as facts:
        return [status.fact.created_at for status in facts.list_facts()]


def report_html(
    record: dict[str, Any], history: Sequence[dict[str, Any]], created: Sequence[datetime] | None
) -> str:
    """The page for one run (``record``, a history record) over the ``history``."""
    section = eval_section_html(
        record["results"],
        totals=record["totals"],
        history=history,
        recall_ms=record["recallMs"],
        fact_created=created,
    )
    note = f"Run at {record['at']}."
    return report_page_html(TITLE, [section], note=note)


def write_report(
    path: Path, record: dict[str, Any], history_path: Path, created: Sequence[datetime] | None
) -> None:
    """Write the HTML report of ``record`` to ``path``, with the runs ``history_path`` holds."""
    history = read_history(history_path)
    page = report_html(record, history, created)
    replace_atomically(path, page.encode("utf-8"), mode=REPORT_MODE)
