"""Screenshots of the memory console's main pages into docs/console/ (PNG, 1280 wide).

    python bench/console_screenshots.py [--out docs/console]

The memory is the tests' demo memory (``tests/runtime/console/demo_memory.py``: fixed texts and
times; fact ids are drawn at random, so they differ between runs), served by a real console
process and shot in Debian's chromium (``tests/e2e/console_support.py``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.console_support import (  # noqa: E402
    browser_page,
    chromium_missing,
    log_in,
    running_console,
)
from tests.runtime.console.demo_memory import SESSION, build  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "console")
    args = parser.parse_args(argv)
    missing = chromium_missing()
    if missing is not None:
        sys.stderr.write(f"console_screenshots: {missing}\n")
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        demo = build(Path(folder))
        shots = {
            "facts.png": "/",
            "search.png": "/search?q=how+do+we+deploy",
            "fact.png": f"/facts/{demo.deploy_fact}",
            "quarantine.png": "/quarantine",
            "continuity.png": "/continuity",
            "session.png": f"/sessions/{SESSION}#tool-{demo.proof_tool}",
            "wiki-diff.png": "/wiki/deploys/diff?from=1&to=2",
            "erase-preview.png": "/erase/preview?kind=subject&value=Dana+Whitfield",
            "evals.png": "/evals",
        }
        with running_console(demo.root) as console, browser_page() as page:
            log_in(page, console.url)
            for name, path in shots.items():
                page.goto(console.url + path)
                page.screenshot(path=str(args.out / name), full_page=False)
                sys.stderr.write(f"wrote {args.out / name}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
