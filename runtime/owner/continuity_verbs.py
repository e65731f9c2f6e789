"""The owner's continuity verbs: show, clear (to the trash), restore."""

from __future__ import annotations

import argparse
import sys
from typing import Any, cast

from runtime.continuity.store import ContinuityStore
from runtime.continuity.trash_bin import ClearScope
from runtime.owner.output import print_json
from runtime.owner.selection import Selection, SelectionError

SCOPES = ("focus", "plans", "goals", "all")


def _store(selection: Selection) -> ContinuityStore:
    layout = selection.layout
    scope_dir = (
        layout.session_state_dir(selection.session) if selection.session is not None else None
    )
    return ContinuityStore(layout, scope_dir=scope_dir)


def run(args: argparse.Namespace, selection: Selection) -> int:
    store = _store(selection)
    if args.action == "show":
        return _show(args, store)
    if args.action == "clear":
        return _clear(args, store)
    return _restore(args, store)


def _show(args: argparse.Namespace, store: ContinuityStore) -> int:
    focus = store.read_focus()
    plan = store.active_plan()
    goals = store.list_goals()
    handoff = store.read_handoff()
    data: dict[str, Any] = {
        "folder": str(store.scope_dir),
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
    from runtime.owner.command import confirm

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
        sys.stdout.write(f"moved {len(result.moved)} item(s) to the trash as {stamp}\n")
    return 0


def _restore(args: argparse.Namespace, store: ContinuityStore) -> int:
    from runtime.owner.command import confirm

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
        sys.stdout.write(f"restored {len(restored)} item(s) from {stamp}\n")
    return 0
