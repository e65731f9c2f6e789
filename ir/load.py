"""``load_spec``: spec text → IR, or a ``SpecError`` listing every located problem."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from pydantic import ValidationError

from specwire.ir.checks import check
from specwire.ir.credentials import find_credentials
from specwire.ir.errors import SpecError
from specwire.ir.learning import unwired_learning
from specwire.ir.limits import MAX_SPEC_BYTES
from specwire.ir.model import IrSpec
from specwire.ir.normalize import normalize
from specwire.ir.read import decode_spec, read_spec_bytes, root_issue, too_large
from specwire.ir.resolve import AnySource, resolve
from specwire.ir.source import SOURCE_MODELS
from specwire.ir.thredz_source import unwired_thredz
from specwire.ir.translate import translate
from specwire.ir.yaml_nodes import YamlProblem, parse_yaml, problem_issue


def load_spec(path: Path, display_path: str | None = None) -> IrSpec:
    """Load a spec file; messages name it as ``display_path`` (default: ``path`` as given)."""
    shown = display_path if display_path is not None else str(path)
    return load_spec_bytes(read_spec_bytes(path, shown), shown)


def load_spec_bytes(raw: bytes, display_path: str) -> IrSpec:
    """Load a spec from the file's bytes; messages name it as ``display_path``."""
    return load_spec_text(decode_spec(raw, display_path), display_path)


def load_spec_text(text: str, display_path: str) -> IrSpec:
    """Load spec text; messages name it as ``display_path``."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SPEC_BYTES:
        raise too_large(display_path, size)
    try:
        return _load(text, display_path)
    except SpecError:
        raise
    except Exception as exc:  # a bug in ir must still never surface as a traceback
        message = f"internal error while loading the spec ({type(exc).__name__}): please report it"
        raise SpecError([root_issue(display_path, message)]) from exc


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
        # The target's own model, not the union of all five: the same errors (without the
        # union's member name first), and only this target's validator is ever built.
        validated = SOURCE_MODELS[normalized.target].model_validate(normalized.data)
        source = cast("AnySource", validated)  # SOURCE_MODELS holds the union's members
    except ValidationError as error:
        issues += translate(error, normalized.locator, normalized.explained, None, refused)
    # A value refused already is not reported again (nor echoed: it may hold a secret).
    refused_keys = {normalized.locator.display(loc) for loc in refused}
    checked = check(normalized.data, normalized.target, normalized.locator)
    issues += [issue for issue in checked if issue.key not in refused_keys]
    if issues or source is None:
        raise SpecError(issues)
    spec = resolve(source)
    notes = unwired_thredz(normalized.data, normalized.target, normalized.locator)
    unwired = unwired_learning(normalized.data, normalized.locator)
    if unwired:  # nothing on this target could learn: the block goes, as thredz's does
        spec = spec.model_copy(update={"learning": None})
    notes = [*notes, *unwired]
    return spec.model_copy(update={"notes": tuple(notes)}) if notes else spec
