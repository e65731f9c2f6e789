"""What every page builder is handed: the data, where the console is mounted, the session's
CSRF token, and the links between pages (one place builds every URL)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from specwire.runtime.console.data import ConsoleData
from specwire.runtime.console.html import Markup, link, tag


@dataclass(frozen=True)
class View:
    data: ConsoleData
    base: str  # "" at the root, "/console" when mounted on serve
    csrf: str
    evals_dir: Path | None = None

    def href(self, path: str) -> str:
        return self.base + path

    def fact_href(self, fact_id: str) -> str:
        return self.href(f"/facts/{quote(fact_id, safe='')}")

    def session_href(self, session_id: str, tool_use_id: str | None = None) -> str:
        anchor = "" if tool_use_id is None else "#" + tool_anchor(tool_use_id)
        return self.href(f"/sessions/{quote(session_id, safe='')}") + anchor

    def fact_link(self, fact_id: str) -> Markup:
        return link(self.fact_href(fact_id), tag("code", fact_id))

    def tool_link(self, session_id: str | None, tool_use_id: str) -> Markup:
        if session_id is None:
            return tag("code", tool_use_id)
        return link(self.session_href(session_id, tool_use_id), tag("code", tool_use_id))


def tool_anchor(tool_use_id: str) -> str:
    """A tool call's element id in a session's timeline (any character percent-encoded, so
    the id is always a valid fragment)."""
    return "tool-" + quote(tool_use_id, safe="")


def status_cell(status: str) -> Markup:
    return tag("span", status, class_=f"status-{status}")
