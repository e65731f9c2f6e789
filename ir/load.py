"""``load_spec``: spec text → IR, or a ``SpecError`` listing every located problem."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from pydantic import TypeAdapter, ValidationError

from ir.checks import check
from ir.credentials import find_credentials
from ir.errors import ROOT_KEY, ROOT_MARK, SpecError, SpecIssue
from ir.limits import MAX_SPEC_BYTES, size_text
from ir.model import IrSpec
from ir.normalize import normalize
from ir.resolve import AnySource, resolve
from ir.source import SpecSource
from ir.translate import translate
from ir.yaml_nodes import YamlProblem, parse_yaml, problem_issue

_SOURCE: Final[TypeAdapter[AnySource]] = TypeAdapter(SpecSource)


def load_spec(path: Path, display_path: str | None = None) -> IrSpec:
    """Load a spec file; messages name it as ``display_path`` (default: ``path`` as given)."""
    shown = display_path if display_path is not None else str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)  # never more: the file may be huge or endless
            size = _file_size(handle.fileno())
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SpecError([_root_issue(shown, f"cannot read the file: {reason}")]) from None
    if len(raw) > MAX_SPEC_BYTES or (size is not None and size > MAX_SPEC_BYTES):
        raise _too_large(shown, size)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        issue = SpecIssue(shown, line, col, ROOT_KEY, "the file is not valid UTF-8 text")
        raise SpecError([issue]) from None
    return load_spec_text(text, shown)


def load_spec_text(text: str, display_path: str) -> IrSpec:
    """Load spec text; messages name it as ``display_path``."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SPEC_BYTES:
        raise _too_large(display_path, size)
    try:
        return _load(text, display_path)
    except SpecError:
        raise
    except Exception as exc:  # a bug in ir must still never surface as a traceback
        message = f"internal error while loading the spec ({type(exc).__name__}): please report it"
        raise SpecError([_root_issue(display_path, message)]) from exc


def _load(text: str, display_path: str) -> IrSpec:
    try:
        root = parse_yaml(text)
    except YamlProblem as problem:
        raise SpecError([problem_issue(problem, display_path)]) from None
    normalized = normalize(root, display_path)
    issues = list(normalized.issues)
    if normalized.data is None or normalized.target is None:
        raise SpecError(issues)
    credentials = find_credentials(normalized.data, normalized.locator, text)
    issues += credentials.values()
    refused = normalized.refused | credentials.keys()  # never echo a secret in a later message
    source: AnySource | None = None
    try:
        source = _SOURCE.validate_python(normalized.data)
    except ValidationError as error:
        issues += translate(
            error,
            normalized.locator,
            normalized.explained,
            normalized.target,
            refused,
        )
    # A value refused already is not reported again (nor echoed: it may hold a secret).
    refused_keys = {normalized.locator.display(loc) for loc in refused}
    checked = check(normalized.data, normalized.target, normalized.locator)
    issues += [issue for issue in checked if issue.key not in refused_keys]
    if issues or source is None:
        raise SpecError(issues)
    return resolve(source)


def _file_size(fd: int) -> int | None:
    info = os.fstat(fd)
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _too_large(display_path: str, size: int | None) -> SpecError:
    """``size`` is ``None`` when the file is not a regular file (its size is unknown)."""
    shown = f" ({size:,} bytes)" if size is not None else ""
    message = f"the file is too large{shown}: a spec may be at most {size_text(MAX_SPEC_BYTES)}"
    return SpecError([_root_issue(display_path, message)])


def _root_issue(display_path: str, message: str) -> SpecIssue:
    return SpecIssue(display_path, ROOT_MARK.line, ROOT_MARK.col, ROOT_KEY, message)
