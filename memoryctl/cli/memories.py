"""Commands on memories: init, add, correct, reach, detach, show, list, search, pin, edit."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memoryctl.cli.common import (
    UserError,
    emit_json,
    finish,
    line_for,
    note,
    open_vault,
    read_body,
    say,
    short,
    text_argument,
    typed_text,
)
from memoryctl.memory import KINDS, STATUSES, VISIBILITIES, Memory
from memoryctl.wording import counted


def cmd_init(args: argparse.Namespace) -> None:
    from memoryctl.actions import init_vault

    named = getattr(args, "vault", None)
    if (
        args.path
        and named
        and Path(args.path).expanduser().resolve() != Path(named).expanduser().resolve()
    ):
        raise UserError(f"init was given two folders, {args.path} and --vault {named}; give one")
    path = Path(args.path or named or ".").expanduser()
    if path.exists() and not path.is_dir():
        raise UserError(f"{path} exists and is not a folder")
    report = init_vault(path, every_file=args.all_files)
    if args.json:
        emit_json(
            {
                "vault": str(path.resolve()),
                "created": report.created,
                "memories": report.memories,
                "uncommitted": report.others,
                "ignores_added": report.ignores_added,
                "sealed": report.sealed,
                "notices": report.notices,
            }
        )
        return
    if not report.created and not report.ignores_added:
        say(f"{path.resolve()} is already a vault; nothing changed.")
        return
    made = f" ({', '.join(report.created)})" if report.created else ""
    say(f"Initialized vault in {path.resolve()}{made}.")
    say(f"It holds {counted(report.memories, 'memory', 'memories')}.")
    if report.ignores_added:
        say(f"Added to the existing .gitignore: {' '.join(report.ignores_added)}")
    if report.others:
        shown = ", ".join(report.others[:5]) + (", …" if len(report.others) > 5 else "")
        say(
            f"Left {counted(len(report.others), 'other file')} uncommitted ({shown}): "
            "commit them with git if they belong in the vault."
        )
    for notice in report.notices:
        say(notice)


def _new_memory(args: argparse.Namespace, body: str):
    from memoryctl.actions import NewMemory

    return NewMemory(
        body=body,
        title=args.title,
        kind=args.kind,
        pinned=getattr(args, "pin", False),
        tags=args.tag or (),
        namespace=args.namespace,
        visibility=args.visibility,
        source=args.source,
        created=args.created,
        deprecates=args.deprecates or (),
        derived_from=args.derived_from or (),
        retires=getattr(args, "retires", None) or (),
        anchors=args.anchor or (),
        subject=args.subject,
        predicate=args.predicate,
        value=args.value,
    )


def _report_reach(vault, memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    reached = vault.index.reach_of(memory.id)
    data = {
        "id": memory.id,
        "path": memory.path,
        "title": memory.title,
        "reach": len(reached),
        "reached": [{**short(m), "needle": needle} for m, needle in reached],
    }
    return data


def cmd_add(args: argparse.Namespace) -> None:
    from memoryctl.actions import add_memory, same_title_as
    from memoryctl.reach import GuardTripped, correct

    body = read_body(typed_text(args))
    vault = open_vault(args)
    new = _new_memory(args, body)
    if new.deprecates:
        try:
            memory = correct(vault, new, force=args.force)
        except GuardTripped as tripped:
            raise UserError(f"{tripped}, or --force") from None
    else:
        memory = add_memory(vault, new)
    same = same_title_as(vault, memory)
    finish(vault)
    if args.json:
        data = memory.as_json()
        if memory.deprecates:
            data["reach"] = _report_reach(vault, memory, args)["reached"]
        data["same_title"] = [{**short(m), "created": m.created} for m in same]
        emit_json(data)
        return
    say(memory.id)
    if memory.deprecates:
        _print_reach_summary(vault, memory)
    _print_same_title(same)


def _print_same_title(same: Sequence[Memory]) -> None:
    """A new memory whose title another current memory has: both stay current, and the
    bundle shows the new one beneath the older until the person decides."""
    if not same:
        return
    if len(same) == 1:
        note("Another current memory has this title:")
    else:
        note(f"{len(same)} other current memories have this title:")
    for older in same:
        note(f"  {older.id}  {older.title}  ({older.created[:10]})")
    if len(same) == 1:
        note(
            "Both stay current: the bundle shows the older with the newer beneath it, and "
            "`memoryctl check` proposes retiring the older."
        )
    else:
        note(
            "All stay current: the bundle shows each older one with the newest beneath it, "
            "and `memoryctl check` proposes retiring the older ones."
        )
    other = same[-1].id
    note(
        f"To change a memory in place instead of adding one: memoryctl replace {other} TEXT; "
        f"to say a new memory replaces it: memoryctl add --retires {other}."
    )


def _print_reach_summary(vault, memory: Memory) -> None:
    reached = vault.index.reach_of(memory.id)
    note(f"This correction reaches {counted(len(reached), 'older memory', 'older memories')}.")
    for reached_memory, needle in reached[:20]:
        note(f"  {reached_memory.id}  {reached_memory.title}  ({needle})")
    if len(reached) > 20:
        note(f"  … and {len(reached) - 20} more (memoryctl reach {memory.id})")


def cmd_correct(args: argparse.Namespace) -> None:
    from memoryctl.reach import GuardTripped, correct

    body = read_body(typed_text(args))
    vault = open_vault(args)
    new = _new_memory(args, body)
    new.kind = new.kind or "correction"
    try:
        memory = correct(vault, new, force=args.force)
    except GuardTripped as tripped:
        if not sys.stdin.isatty() or args.json:
            raise UserError(f"{tripped}, or --force") from None
        worst = tripped.worst
        note(f"{worst.needle!r} would reach {worst.count} memories ({guard_words(tripped)}):")
        for sample in worst.sample:
            note(f"  {sample.id}  {sample.title}")
        answer = input("Store the correction anyway? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            raise UserError("not stored") from None
        memory = correct(vault, new, force=True)
    finish(vault)
    if args.json:
        emit_json({**memory.as_json(), "reach": _report_reach(vault, memory, args)["reached"]})
        return
    say(memory.id)
    _print_reach_summary(vault, memory)


def guard_words(tripped) -> str:
    """The guard that tripped, in the words of the question the CLI asks."""
    if tripped.rule == "cap":
        return f"guard: {tripped.guard}"
    limits = tripped.limits
    return f"more than {limits.share:.0%} of the vault's {limits.size}; guard: {tripped.guard}"


def inactive_words(reason: str, dormant: int) -> str:
    """What `reach` and `show` say of a correction that is retired or held for review."""
    again = "restored" if reason == "retired" else "confirmed"
    return (
        f"inactive ({reason}): it reaches no memory; its strings name "
        f"{dormant} older memor{'y' if dormant == 1 else 'ies'}, which it would reach again "
        f"if {again}"
    )


def cmd_reach(args: argparse.Namespace) -> None:
    from memoryctl.reach import reach_report

    vault = open_vault(args)
    report = reach_report(vault, args.id)
    correction, reached = report.correction, report.reached
    if args.json:
        emit_json(
            {
                "id": correction.id,
                "title": correction.title,
                "deprecates": list(correction.deprecates),
                "status": correction.status,
                "active": report.inactive is None,
                "inactive": report.inactive,
                "count": len(reached),
                "reached": [{**short(m), "needle": needle} for m, needle in reached],
                "dormant": report.dormant,
                "detached": list(correction.detached),
            }
        )
        return
    if report.inactive:
        words = inactive_words(report.inactive, report.dormant)
        say(f"{correction.title} [{correction.id}] is {words}.")
        return
    reaches = counted(len(reached), "memory", "memories")
    say(f"{correction.title} [{correction.id}] reaches {reaches}:")
    for memory, needle in reached:
        say(f"  {memory.id}  {memory.created[:10]}  {memory.title}  ({needle})")
    if correction.detached:
        say(f"Detached: {', '.join(correction.detached)}")


def cmd_detach(args: argparse.Namespace) -> None:
    from memoryctl.reach import detach

    vault = open_vault(args)
    correction = detach(vault, args.correction, args.memory, undo=args.undo)
    finish(vault)
    if args.json:
        emit_json({"id": correction.id, "detached": list(correction.detached)})
        return
    memory = vault.resolve(args.memory)
    verb, between = ("Reattached", "to") if args.undo else ("Detached", "from")
    say(f"{verb}: {memory.id} ({memory.title}) {between} {correction.id} ({correction.title}).")


def _now_json(now: Sequence[Memory]) -> list[dict[str, str]]:
    return [{"id": c.id, "text": c.text} for c in now]


def cmd_show(args: argparse.Namespace) -> None:
    from memoryctl.corrections import now_lines, render_with_now
    from memoryctl.reach import reach_report

    vault = open_vault(args)
    memory = vault.resolve(args.id)
    now = now_lines(vault.index, [memory])[memory.id]
    reach = reach_report(vault, memory.id) if memory.deprecates else None
    # A file that cannot be read as a memory is shown as it is, to be mended.
    raw = vault.read_text(memory) if memory.broken else None
    if args.json:
        data = {**memory.as_json(), "now": _now_json(now)}
        if raw is not None:
            data["raw"] = raw
        if reach is not None:
            data["reach"] = {
                "active": reach.inactive is None,
                "inactive": reach.inactive,
                "count": len(reach.reached),
                "dormant": reach.dormant,
            }
        emit_json(data)
        return
    say(f"{memory.title}  [{memory.id}]")
    details = [memory.kind, memory.status]
    if memory.pinned:
        details.append("pinned")
    details += [
        f"namespace {memory.namespace}",
        f"{memory.visibility}",
        f"created {memory.created}",
    ]
    say(" · ".join(details))
    say(f"path: {memory.path}")
    if memory.tags:
        say(f"tags: {', '.join(memory.tags)}")
    if memory.source_kind:
        say(
            f"source: {memory.source_kind}"
            + (f" ({memory.source_ref})" if memory.source_ref else "")
        )
    if memory.deprecates:
        say(f"deprecates: {', '.join(memory.deprecates)}")
    if reach is not None and reach.inactive:
        say(f"reach: {inactive_words(reach.inactive, reach.dormant)}")
    elif reach is not None:
        count = len(reach.reached)
        memories = f"memor{'y' if count == 1 else 'ies'}"
        say(f"reach: {count} older {memories} (memoryctl reach {memory.id})")
    if memory.derived_from:
        say(f"derived from: {', '.join(memory.derived_from)}")
    for anchor in memory.anchors:
        say(f"anchor: {anchor.path}" + (f"#{anchor.symbol}" if anchor.symbol else ""))
    if memory.broken:
        say(f"error: {memory.broken}")
    for problem in memory.problems:
        say(f"problem: {problem}")
    say()
    if raw is not None:
        say(raw.removesuffix("\n"))
        return
    say(render_with_now(memory, now))


def cmd_list(args: argparse.Namespace) -> None:
    vault = open_vault(args)
    memories = vault.index.list(
        status=args.status,
        kind=args.kind,
        pinned=True if args.pinned else None,
        namespace=args.namespace,
        tag=args.tag,
        limit=args.limit,
    )
    _print_memories(vault, memories, args)


def _print_memories(vault, memories: list[Memory], args: argparse.Namespace) -> None:
    from memoryctl.corrections import overtaken as overtaken_ids

    overtaken = overtaken_ids(vault.index, memories)
    if args.json:
        emit_json([{**m.as_json(), "overtaken": m.id in overtaken} for m in memories])
        return
    for memory in memories:
        say(line_for(memory, memory.id in overtaken))
        if memory.broken:
            say(f"      error: {memory.path}: {memory.broken}")
        for problem in memory.problems:
            say(f"      problem: {memory.path}: {problem}")
    if not memories:
        if vault.index.count() == 0:
            note("No memories yet: add one with memoryctl add TEXT.")
        else:
            note("No memories match.")


def cmd_search(args: argparse.Namespace) -> None:
    vault = open_vault(args)
    if args.limit < 1:
        raise UserError("--limit must be at least 1")
    query = " ".join(args.query)
    memories = vault.index.search(query, limit=args.limit, include_retired=args.all)
    _print_memories(vault, memories, args)


def cmd_pin(args: argparse.Namespace, pinned: bool = True) -> None:
    from memoryctl.actions import set_pinned

    vault = open_vault(args)
    memory = set_pinned(vault, args.id, pinned)
    finish(vault)
    if args.json:
        emit_json(memory.as_json())
        return
    say(f"{'Pinned' if pinned else 'Unpinned'}: {memory.title} [{memory.id}]")


def cmd_edit(args: argparse.Namespace) -> None:
    from memoryctl.actions import record_external_edit
    from memoryctl.editor_command import run_editor
    from memoryctl.storage.notefile import sha256

    vault = open_vault(args)
    memory = vault.resolve(args.id)
    path = vault.root / memory.path
    before = sha256(path.read_bytes())
    status = run_editor(path)
    if status != 0:
        raise UserError(f"the editor exited with status {status}; nothing recorded")
    updated = record_external_edit(vault, memory, before)
    finish(vault)
    if updated is None:
        say("No change.")
        return
    if updated.broken:
        note(f"warning: {memory.path} can no longer be read as a memory: {updated.broken}")
    if args.json:
        emit_json(updated.as_json())
    else:
        say(f"Saved: {updated.title} [{updated.id}]")


def register(command: Callable[..., argparse.ArgumentParser]) -> None:
    p = command("init", cmd_init, "create a vault (a git repository with memoryctl.toml)")
    p.add_argument("path", nargs="?", metavar="PATH")
    p.add_argument(
        "--all-files",
        action="store_true",
        help="in a new repository, commit every file in the folder, not only its memories",
    )

    def memory_options(p: argparse.ArgumentParser, correcting: bool = False) -> None:
        text_argument(p, "the text (quotes are not needed), or - for stdin")
        p.add_argument("--title")
        p.add_argument("--kind", help=f"one of {', '.join(KINDS)} (others allowed)")
        p.add_argument("--tag", action="append", metavar="TAG")
        p.add_argument("--namespace", default="default")
        p.add_argument("--visibility", choices=VISIBILITIES)
        p.add_argument("--source", metavar="KIND[:REF]", help="user, tool, document or inference")
        p.add_argument("--created", metavar="ISO", help="back-date the memory")
        p.add_argument(
            "--deprecates",
            action="append",
            metavar="S",
            required=correcting,
            help="an outdated string"
            + (" the correction replaces (one or more)" if correcting else ""),
        )
        p.add_argument("--derived-from", action="append", metavar="ID")
        p.add_argument(
            "--retires",
            action="append",
            metavar="ID",
            help="a memory this one replaces (a check proposes retiring it)",
        )
        p.add_argument("--anchor", action="append", metavar="PATH[#SYMBOL]")
        p.add_argument("--subject")
        p.add_argument("--predicate")
        p.add_argument("--value")
        p.add_argument("--force", action="store_true", help="skip the broad-string guard")

    p = command("add", cmd_add, "add a memory and print its id")
    memory_options(p)
    p.add_argument("--pin", action="store_true", help="pin it")

    p = command("correct", cmd_correct, "add a correction that replaces outdated strings")
    memory_options(p, correcting=True)

    p = command("reach", cmd_reach, "list the memories a correction reaches")
    p.add_argument("id", metavar="ID")

    p = command("detach", cmd_detach, "stop a correction from reaching one memory")
    p.add_argument("correction", metavar="CORRECTION_ID")
    p.add_argument("memory", metavar="MEMORY_ID")
    p.add_argument("--undo", action="store_true", help="reattach instead")

    p = command("show", cmd_show, "show a memory with its now: lines")
    p.add_argument("id", metavar="ID")

    p = command("list", cmd_list, "list memories, newest first")
    p.add_argument("--status", choices=STATUSES)
    p.add_argument("--pinned", action="store_true")
    p.add_argument("--kind")
    p.add_argument("--namespace")
    p.add_argument("--tag")
    p.add_argument("--limit", type=int)

    p = command("search", cmd_search, "full-text search of current memories")
    p.add_argument("query", metavar="QUERY", nargs="+", help="words to find; quotes are not needed")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--all", action="store_true", help="include retired memories")

    p = command("edit", cmd_edit, "edit a memory in $EDITOR")
    p.add_argument("id", metavar="ID")
    p = command("pin", cmd_pin, "pin a memory: it is always in context")
    p.add_argument("id", metavar="ID")
    p = command("unpin", lambda a: cmd_pin(a, False), "unpin a memory")
    p.add_argument("id", metavar="ID")
