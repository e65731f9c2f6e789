"""The templates, compiled ahead of time: a cold build renders without running jinja2's compiler.

``templates/compiled/`` holds one Python module per template (jinja2's own
``Environment.compile`` output, named as jinja2's ``ModuleLoader`` expects) and ``manifest.json``:
the jinja2 version that compiled them and the SHA-256 of each template's source. A template is
served from its compiled module only when both still match (the installed jinja2 and the
template file as it is now); otherwise it is compiled from source as before, so an edited
template or another jinja2 release is never rendered from stale code, only more slowly.
``tests/emitters/test_precompiled_templates.py`` fails while the folder is stale.

Regenerate after changing a template (or the environment's options in ``emitters.render``):

    python -m specwire.emitters.precompiled
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import jinja2

COMPILED_FOLDER = "compiled"
MANIFEST = "manifest.json"
TEMPLATE_SUFFIX = ".j2"


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def compiled_files(environment: jinja2.Environment) -> dict[str, str]:
    """Every file of the compiled folder, by name: the modules and the manifest."""
    files: dict[str, str] = {}
    digests: dict[str, str] = {}
    for name in environment.list_templates(filter_func=lambda n: n.endswith(TEMPLATE_SUFFIX)):
        source, _, _ = environment.loader.get_source(environment, name)  # type: ignore[union-attr]
        # `name` as the file name: the code carries no path of the machine that compiled it.
        code = environment.compile(source, name, name, raw=True, defer_init=True)
        files[jinja2.ModuleLoader.get_module_filename(name)] = code
        digests[name] = source_digest(source)
    manifest = {"jinja2": jinja2.__version__, "templates": digests}
    files[MANIFEST] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return files


def read_manifest(folder: Path) -> dict[str, str]:
    """Template name → source digest, or nothing when the folder is missing, unreadable or was
    compiled by another jinja2."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(manifest, dict) or manifest.get("jinja2") != jinja2.__version__:
        return {}
    templates = manifest.get("templates")
    if not isinstance(templates, dict):
        return {}
    return {str(name): str(digest) for name, digest in templates.items()}


class PrecompiledLoader(jinja2.BaseLoader):
    """``source``'s templates, loaded from their compiled modules in ``folder`` when those were
    compiled from the same source by the same jinja2, else compiled from source."""

    def __init__(self, source: jinja2.BaseLoader, folder: Path) -> None:
        self.source = source
        self.digests = read_manifest(folder)
        self.modules = jinja2.ModuleLoader(folder) if self.digests else None

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        return self.source.get_source(environment, template)

    def list_templates(self) -> list[str]:
        return self.source.list_templates()

    def load(
        self,
        environment: jinja2.Environment,
        name: str,
        globals: MutableMapping[str, Any] | None = None,
    ) -> jinja2.Template:
        if self.modules is not None:
            source, _, _ = self.source.get_source(environment, name)
            if self.digests.get(name) == source_digest(source):
                return self.modules.load(environment, name, globals)
        return super().load(environment, name, globals)


def write_compiled(folder: Path, files: Mapping[str, str]) -> None:
    """Replace ``folder``'s compiled modules and manifest with ``files``."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("tmpl_*.py"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8", newline="\n")


def main() -> int:
    from specwire.emitters.render import source_environment, templates_folder

    folder = templates_folder() / COMPILED_FOLDER
    write_compiled(folder, compiled_files(source_environment()))
    print(f"wrote {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
