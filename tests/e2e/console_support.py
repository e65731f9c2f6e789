"""The memory console as its owner runs it (``python -m specwire.runtime.console``, a real
process on 127.0.0.1) and Debian's chromium driven by Playwright's bundled driver (never
``playwright install``). Shared by the browser tests and the screenshot tool."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "browser-test-owner-token-0123456789"
START_TIMEOUT_S = 60
_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        return "Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


@dataclass
class RunningConsole:
    url: str
    process: subprocess.Popen[str]


@contextmanager
def running_console(root: Path, *extra: str, tenant: str | None = None) -> Iterator[RunningConsole]:
    """``codegen memory --root ROOT console --port 0`` until the block ends (stopped by its
    pid, SIGTERM then kill)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SPECWIRE_")}
    env["SPECWIRE_CONSOLE_TOKEN"] = TOKEN
    command = [sys.executable, "-m", "specwire.runtime.console", "--root", str(root)]
    if tenant is not None:
        command += ["--tenant", tenant]
    command += ["console", "--port", "0", *extra]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        seen = []
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            seen.append(line)
            found = _URL.search(line)
            if found is not None:
                url = f"http://127.0.0.1:{found.group(1)}"
        assert url is not None, "the console did not start: " + "".join(seen)
        yield RunningConsole(url, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# Installed before any page script: records every CSP violation and every dialog a stored text
# might open. Playwright adds it through the DevTools protocol, outside the page's CSP.
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || ''));
});
window.__ran = [];
for (const name of ['alert', 'confirm', 'prompt']) {
  window[name] = (...args) => { window.__ran.push(name + ':' + args.join(',')); };
}
"""


@contextmanager
def browser_page() -> Iterator[Any]:
    """A fresh chromium page (its own context: no cookies) with ``WATCH`` installed."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_init_script(WATCH)
            page = context.new_page()
            page.set_default_timeout(15_000)
            yield page
        finally:
            browser.close()


def log_in(page: Any, url: str, token: str = TOKEN) -> None:
    page.goto(url + "/login")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_load_state()
