"""The owner's continuity verbs: show, clear (to the trash), restore."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, cast

from specwire.runtime.continuity.focus import ACTIVE_PLAN_MARKER
from specwire.runtime.continuity.plans import PLAN_ID_RE
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.trash import file_count
from specwire.runtime.continuity.trash_bin import ClearScope
from specwire.runtime.core.progress import Progress
from specwire.runtime.core.scopes import ScopeError, ScopeKey
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.output import print_json
from specwire.runtime.owner.selection import Selection, SelectionError
from specwire.runtime.owner.state_verb import open_state_volume
from specwire.runtime.safety.injection import scan
from specwire.runtime.safety.screening import storable

SCOPES = ("focus", "plans", "goals", "all")


def _store(args: argparse.Namespace, selection: Selection) -> ContinuityStore:
    """The selected continuity: files under ``--root``, or the tenant's spec in PostgreSQL
    with ``--backend postgres`` (a ``memory.state: postgres`` bundle's)."""
    layout = selection.layout
    person = _person(args)
    if person is not None and selection.session is not None:
        raise SelectionError("--session and --user/--conversation name different folders: one")
    scope_dir = (
        layout.session_state_dir(selection.session)
        if selection.session is not None
        else layout.audience_state_dir(person)
        if person is not None
        else None
    )
    return ContinuityStore(layout, scope_dir=scope_dir, volume=open_state_volume(args, selection))


def _person(args: argparse.Namespace) -> ScopeKey | None:
    """``--user ID`` or ``--conversation ID``: the folder of continuity scope ``audience``."""
    try:
        if getattr(args, "user", None) is not None:
            return ScopeKey("user", args.user)
        if getattr(args, "conversation", None) is not None:
            return ScopeKey("conversation", args.conversation)
    except ScopeError as exc:
        raise SelectionError(str(exc)) from None
    return None


def run(args: argparse.Namespace, selection: Selection) -> int:
    store = _store(args, selection)
    if args.action == "migrate" and not store.volume.on_files:
        raise SelectionError(
            "continuity migrate copies a CrewHaus folder into files: run it without --backend, "
            "then `codegen memory migrate` moves the state into PostgreSQL"
        )
    if args.action == "show":
        return _show(args, store)
    if args.action == "clear":
        return _clear(args, store)
    if args.action == "migrate":
        return _migrate(args, selection, store)
    return _restore(args, store)


def _show(args: argparse.Namespace, store: ContinuityStore) -> int:
    focus = store.read_focus()
    plan = store.active_plan()
    goals = store.list_goals()
    handoff = store.read_handoff()
    data: dict[str, Any] = {
        "folder": str(store.scope_dir) if store.volume.on_files else store.volume.where,
        "focus": None if focus is None else focus.body,
        "activePlan": None
        if plan is None
        else {
            "id": plan.id,
            "title": plan.title,
            "steps": [{"text": step.text, "status": step.status} for step in plan.steps],
        },
        "goals": [{"id": goal.id, "title": goal.title, "status": goal.status} for goal in goals],
        "handoff": handoff,
        "trash": [snapshot.ts for snapshot in store.list_trash()],
    }
    if args.json:
        print_json(data)
        return 0
    out = sys.stdout
    out.write(f"continuity: {data['folder']}\n")
    out.write(f"focus: {(data['focus'] or '(none)').strip()}\n")
    if plan is None:
        out.write("active plan: (none)\n")
    else:
        out.write(f"active plan: {plan.id} — {plan.title}\n")
        for number, step in enumerate(plan.steps, start=1):
            out.write(f"  {number}. [{step.status}] {step.text}\n")
    out.write(f"goals: {len(goals)}\n")
    for goal in goals:
        out.write(f"  {goal.id} [{goal.status}] {goal.title}\n")
    out.write(f"handoff: {'(none)' if handoff is None else ''}\n")
    if handoff is not None:
        out.write("".join(f"  {line}\n" for line in handoff.strip().splitlines()))
    out.write(f"trash: {', '.join(data['trash']) or '(empty)'}\n")
    return 0


def _clear(args: argparse.Namespace, store: ContinuityStore) -> int:
    scope = args.target or "all"
    if scope not in SCOPES:
        raise SelectionError(f"clear {scope!r}: one of {', '.join(SCOPES)}")
    confirm(
        f"move {scope} of {store.scope_dir} to the trash (restorable with `continuity restore`)",
        assume_yes=args.yes,
    )
    result = store.clear(cast(ClearScope, scope))
    stamp = None if result.snapshot is None else result.snapshot.ts
    if args.json:
        print_json({"moved": [str(path) for path in result.moved], "snapshot": stamp})
    elif stamp is None:
        sys.stdout.write("nothing to clear\n")
    else:
        count = file_count(result.moved)
        sys.stdout.write(f"moved {count} file(s) to the trash as {stamp}\n")
    return 0


def _restore(args: argparse.Namespace, store: ContinuityStore) -> int:
    snapshots = store.list_trash()
    if not snapshots:
        raise SelectionError("the trash is empty: nothing to restore")
    stamp = args.target or snapshots[-1].ts
    if stamp not in {snapshot.ts for snapshot in snapshots}:
        known = ", ".join(snapshot.ts for snapshot in snapshots)
        raise SelectionError(f"no trash snapshot {stamp!r} (have: {known})")
    confirm(f"restore {stamp} into {store.scope_dir}", assume_yes=args.yes)
    restored = store.restore(stamp)
    if args.json:
        print_json({"restored": [str(path) for path in restored], "snapshot": stamp})
    else:
        sys.stdout.write(f"restored {file_count(restored)} file(s) from {stamp}\n")
    return 0


_MARKERS = ("<!-- crewhaus:", "<!-- specwire:")
MAX_MIGRATED_BYTES = 8 << 20


def _screened_copy(path: Path, shown: Path) -> str:
    """A CrewHaus file's text as it may be copied, or ``SelectionError`` naming why not."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise SelectionError(f"{shown} is not UTF-8 text; nothing was copied") from None
    hit = scan(text)
    if hit is not None:
        raise SelectionError(
            f"{shown}: the injection scanner flagged it (rule {hit.label}); nothing was copied"
        )
    return storable(text).replace(*_MARKERS)


def _migrate(args: argparse.Namespace, selection: Selection, store: ContinuityStore) -> int:
    """Copy a CrewHaus ``.crewhaus/state/<spec>/`` folder into this spec's state folder.

    The formats are the same but for the markers (``<!-- crewhaus:… -->`` becomes
    ``<!-- specwire:… -->``), so files are copied, never parsed and rewritten; the copy is then
    read back through the store and a plan it cannot read is named. Refused when the
    destination already holds continuity files (nothing is overwritten). Each file passes the
    same screening and redaction as every memory write (``runtime.safety.screening``): a file
    that is not UTF-8 text or that the injection scanner flags refuses the whole migration
    (nothing is copied), and secret values are replaced by their names.
    """
    crewhaus = Path(args.target) if args.target else args.root / ".crewhaus"
    spec_dir = crewhaus / "state" / selection.layout.state_dir.name
    if not spec_dir.is_dir():
        raise SelectionError(f"no CrewHaus continuity folder at {spec_dir}")
    files = [
        path
        for path in sorted(spec_dir.rglob("*"))
        if path.is_file() and not path.is_symlink() and path.name != ".lock"
    ]
    destination = store.scope_dir
    clashes = [path for path in files if (destination / path.relative_to(spec_dir)).exists()]
    if clashes:
        raise SelectionError(
            f"{destination} already holds {clashes[0].relative_to(spec_dir)}: clear it first "
            "(`continuity clear all`); nothing was copied"
        )
    if sum(path.stat().st_size for path in files) > MAX_MIGRATED_BYTES:
        raise SelectionError(f"{spec_dir} holds more than 8 MiB: not a continuity folder?")
    texts = {path: _screened_copy(path, path.relative_to(spec_dir)) for path in files}
    confirm(f"copy {len(files)} file(s) from {spec_dir} into {destination}", assume_yes=args.yes)
    with Progress("copying continuity files", len(texts)) as progress:
        for path, text in progress.track(texts.items()):
            target = destination / path.relative_to(spec_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(target, text.encode("utf-8"), mode=0o600)
    _carry_active_plan(store, destination)
    unreadable = store.unreadable_plans()
    if args.json:
        print_json({"copied": len(files), "unreadablePlans": [p.path for p in unreadable]})
    else:
        sys.stdout.write(f"migrated {len(files)} file(s) into {destination}\n")
        for plan in unreadable:
            sys.stdout.write(f"warning: {plan.path} cannot be read: {plan.reason}\n")
    return 0


def _carry_active_plan(store: ContinuityStore, destination: Path) -> None:
    """CrewHaus names the active plan in focus.md (else the first plan is active); specwire
    keeps it in ``plans/ACTIVE``."""
    if store.active_plan_id() is not None:
        return
    plans = sorted(plan.id for plan in store.list_plans())
    if not plans:
        return
    focus = destination / "focus.md"
    named = _named_active_plan(focus.read_text(encoding="utf-8")) if focus.is_file() else None
    store.set_active(named if named in plans else plans[0])


def _named_active_plan(focus: str) -> str | None:
    """The plan id on the line after focus.md's active-plan marker, if it is one."""
    lines = [line.strip() for line in focus.splitlines()]
    if ACTIVE_PLAN_MARKER not in lines:
        return None
    following = lines[lines.index(ACTIVE_PLAN_MARKER) + 1 :]
    named = next((line for line in following if line), "")
    return named if PLAN_ID_RE.match(named) else None
