"""assert_inside / resolve_inside: a path stays inside its root once every symlink is followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.runtime.core.errors import TenancyError
from specwire.runtime.core.tenancy import assert_inside, build_tenant, resolve_inside


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "inside").mkdir(parents=True)
    (tmp_path / "root-sibling").mkdir()
    return tmp_path / "root"


def test_the_root_and_paths_below_it_are_inside(root: Path) -> None:
    assert resolve_inside(root, root) == (root.resolve(), root.resolve())
    assert assert_inside(root / "inside" / "not-yet" / "f", root) == (
        root.resolve() / "inside" / "not-yet" / "f"
    )
    assert assert_inside(root / "inside" / ".." / "inside", root) == root.resolve() / "inside"


@pytest.mark.parametrize(
    "spelled",
    ["..", "../root-sibling", "../root-sibling/f", "inside/../../root-sibling", "/"],
)
def test_paths_that_leave_the_root_are_refused(root: Path, spelled: str) -> None:
    with pytest.raises(TenancyError, match="cross-tenant access denied"):
        assert_inside(root / spelled, root)


def test_a_sibling_sharing_the_roots_name_as_a_prefix_is_outside(root: Path) -> None:
    with pytest.raises(TenancyError):
        assert_inside(root.parent / "root-sibling" / "f", root)


def test_symlinks_are_followed_both_ways(root: Path) -> None:
    (root / "out").symlink_to(root.parent / "root-sibling")
    with pytest.raises(TenancyError):
        assert_inside(root / "out" / "f", root)
    alias = root.parent / "alias"
    alias.symlink_to(root)
    assert resolve_inside(alias / "inside", alias) == (root.resolve() / "inside", root.resolve())
    assert assert_inside(alias / "inside", root) == root.resolve() / "inside"


def test_a_tenant_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """``tenants/acme`` pointing at ``tenants/globex`` would make every acme store globex's."""
    tenants = tmp_path / "tenants"
    (tenants / "globex").mkdir(parents=True)
    (tenants / "acme").symlink_to(tenants / "globex")
    with pytest.raises(TenancyError, match="symbolic link"):
        build_tenant("acme", tenants)
    assert build_tenant("globex", tenants).root == (tenants / "globex").resolve()
