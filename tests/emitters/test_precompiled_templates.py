"""The compiled templates shipped in ``templates/compiled/`` are current, a build renders from
them, and a template whose source (or jinja2) changed is compiled from source instead."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from specwire.emitters.precompiled import (
    COMPILED_FOLDER,
    MANIFEST,
    PrecompiledLoader,
    compiled_files,
    write_compiled,
)
from specwire.emitters.render import environment, source_environment, templates_folder

REGENERATE = "python -m specwire.emitters.precompiled"


def test_the_compiled_folder_matches_the_templates() -> None:
    folder = templates_folder() / COMPILED_FOLDER
    expected = compiled_files(source_environment())
    on_disk = {
        path.name: path.read_text(encoding="utf-8") for path in folder.iterdir() if path.is_file()
    }
    stale = sorted(
        name for name in expected.keys() | on_disk.keys() if expected.get(name) != on_disk.get(name)
    )
    assert stale == [], f"stale compiled templates {stale}: run `{REGENERATE}`"


def test_every_template_is_compiled() -> None:
    manifest = json.loads((templates_folder() / COMPILED_FOLDER / MANIFEST).read_text())
    sources = {
        path.relative_to(templates_folder()).as_posix() for path in templates_folder().rglob("*.j2")
    }
    assert set(manifest["templates"]) == sources


def test_a_build_renders_from_the_compiled_modules() -> None:
    template = environment().get_template("cli/agent.py.j2")
    assert template.filename is not None
    assert Path(template.filename).parent.name == COMPILED_FOLDER


def _from_module(template: jinja2.Template) -> bool:
    return (template.filename or "").endswith(".py")


def _loader(folder: Path, sources: dict[str, str]) -> jinja2.Environment:
    return jinja2.Environment(
        loader=PrecompiledLoader(jinja2.DictLoader(sources), folder), auto_reload=False
    )


def test_a_changed_template_is_compiled_from_its_source(tmp_path: Path) -> None:
    compiled = {"page.j2": "compiled {{ x }}"}
    folder = tmp_path / "compiled"
    write_compiled(folder, compiled_files(jinja2.Environment(loader=jinja2.DictLoader(compiled))))

    current = _loader(folder, compiled).get_template("page.j2")
    assert _from_module(current)
    assert current.render(x=1) == "compiled 1"

    edited = _loader(folder, {"page.j2": "edited {{ x }}"}).get_template("page.j2")
    assert not _from_module(edited)
    assert edited.render(x=1) == "edited 1"


def test_templates_compiled_by_another_jinja2_are_not_used(tmp_path: Path) -> None:
    sources = {"page.j2": "hello {{ x }}"}
    folder = tmp_path / "compiled"
    write_compiled(folder, compiled_files(jinja2.Environment(loader=jinja2.DictLoader(sources))))
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["jinja2"] = "0.0.0"
    (folder / MANIFEST).write_text(json.dumps(manifest))

    template = _loader(folder, sources).get_template("page.j2")
    assert not _from_module(template)
    assert template.render(x=2) == "hello 2"


@pytest.mark.parametrize("manifest", ["", "{not json", "[]", '{"jinja2": "3", "templates": 1}'])
def test_a_broken_manifest_falls_back_to_the_sources(tmp_path: Path, manifest: str) -> None:
    folder = tmp_path / "compiled"
    folder.mkdir()
    (folder / MANIFEST).write_text(manifest)
    template = _loader(folder, {"page.j2": "ok"}).get_template("page.j2")
    assert template.render() == "ok"
    assert not _from_module(template)


def test_regenerating_removes_modules_of_deleted_templates(tmp_path: Path) -> None:
    folder = tmp_path / "compiled"
    both = {"a.j2": "a", "b.j2": "b"}
    write_compiled(folder, compiled_files(jinja2.Environment(loader=jinja2.DictLoader(both))))
    only_a = {"a.j2": "a"}
    files = compiled_files(jinja2.Environment(loader=jinja2.DictLoader(only_a)))
    write_compiled(folder, files)
    assert {path.name for path in folder.iterdir()} == set(files)
