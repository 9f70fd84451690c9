"""Commands that look after a vault: reindex, doctor, history, watch, and the TUI."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable

from memoryctl.cli.common import (
    EXIT_USER,
    UserError,
    check_changes,
    emit_json,
    find_vault,
    note,
    open_vault,
    say,
    vault_at,
)
from memoryctl.tui.screen_modes import MODES
from memoryctl.wording import counted


def cmd_reindex(args: argparse.Namespace) -> None:
    from memoryctl.storage.index import Index, rebuild_index

    vault = _vault_without_sync(args)
    progress = _progress_printer() if sys.stderr.isatty() and not args.json else None
    if args.full:  # from nothing but the vault's files; writers wait for it, readers not
        with vault.writing():
            index, report = rebuild_index(vault.db_path, vault.root, vault.config, progress)
        index.close()
    else:
        index = Index.open(vault.db_path, vault.root, vault.config)
        try:
            report = index.sync(progress=progress)
        finally:
            index.close()
    for text in index.notices:
        note(text)
    data = {
        "scanned": report.scanned,
        "added": report.added,
        "changed": report.changed,
        "removed": report.removed,
        "renamed": report.renamed,
        "unchanged": report.unchanged,
        "problems": [{"path": p, "reason": r} for p, r in report.problems],
        "seconds": round(report.seconds, 3),
    }
    if args.json:
        emit_json(data)
        return
    say(
        f"Indexed {report.scanned} files in {report.seconds:.2f} s: {report.added} added, "
        f"{report.changed} changed, {report.renamed} renamed, {report.removed} removed."
    )
    for path, reason in report.problems:
        note(f"{path}: {reason}")


def _vault_without_sync(args: argparse.Namespace):
    from memoryctl.storage.vault import Vault

    return Vault(find_vault(args.vault))


def _progress_printer() -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\rIndexing {done}/{total} files…")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def cmd_doctor(args: argparse.Namespace) -> None:
    from memoryctl.cli.refusals import worded_finding
    from memoryctl.doctor import diagnose

    vault = open_vault(args)
    if args.fix:
        _fix(args, vault)
        return
    findings = diagnose(vault)
    if args.json:
        emit_json([f.as_json() for f in findings])
    elif not findings:
        say("No problems found.")
    else:
        for finding in findings:
            say(worded_finding(finding))
    if any(f.severity == "error" for f in findings):
        raise SystemExit(EXIT_USER)


def _fix(args: argparse.Namespace, vault) -> None:
    """Show the plan of repairs, ask once, and apply all of them in one commit."""
    from memoryctl.leftovers import leftovers, remove
    from memoryctl.repairs import apply_repairs, planned_repairs

    repairs = planned_repairs(vault)
    # What a write cut short left (a temporary file, a stale git lock) goes first: a
    # stale lock would stop the repairs' commit.
    leftover = [found for found in leftovers(vault) if found.removable]
    plan = [f"{found.path}: remove it (left by a write that stopped)" for found in leftover]
    plan += [r.line() for r in repairs]
    if not plan:
        if args.json:
            emit_json({"planned": [], "applied": False, "commit": None})
        else:
            say("Nothing to fix.")
        return
    if not args.json:
        say(f"doctor --fix plans {len(plan)} {'fix' if len(plan) == 1 else 'fixes'}:")
        for line in plan:
            say(f"  {line}")
    if not args.yes:
        if args.json or not sys.stdin.isatty():
            raise UserError("doctor --fix changes files; confirm with --yes (nothing changed)")
        answer = input("Apply them, in one commit? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            say("Nothing changed.")
            return
    removed = remove(vault, leftover)
    commit = apply_repairs(vault, repairs) if repairs else None
    if args.json:
        emit_json({"planned": plan, "applied": True, "commit": commit, "removed": removed})
    else:
        for path in removed:
            say(f"Removed {path}.")
        say(f"Fixed {len(plan)}." + (f" Commit {commit[:12]}." if commit else ""))


def cmd_history(args: argparse.Namespace) -> None:
    from memoryctl.storage import gitrepo

    vault = open_vault(args)
    memory = vault.resolve(args.id)
    if not vault.is_git:
        raise UserError(f"{vault.root} is not a git repository, so there is no history")
    commits = gitrepo.history(vault.root, memory.path)
    if args.json:
        emit_json([c.__dict__ for c in commits])
        return
    if not commits:
        say(f"{memory.path} has no commits yet.")
    for commit in commits:
        say(f"commit {commit.sha}\ndate   {commit.date}\npath   {commit.path}")
        say(f"\n    {commit.subject}\n")
        say(commit.diff)
        say()


def cmd_watch(args: argparse.Namespace) -> None:
    from memoryctl.storage.watch import watch_vault

    vault = open_vault(args)
    note(f"Watching {vault.root} (ctrl+c to stop)…")
    # Once it watches, the vault is read again: a file saved after the open read it,
    # and before the watch began, sends no event.
    watching = threading.Event()
    try:
        for report, paths in watch_vault(vault, watching=watching):
            check_changes(vault)
            if not paths and not report.touched:
                continue  # the vault as it was, or an index another process rebuilt
            if args.json:
                emit_json({"paths": paths, "changed": report.touched})
            elif paths:
                say(f"Re-indexed {counted(len(paths), 'file')}: {', '.join(paths[:5])}")
            else:
                say(f"Re-indexed {counted(report.touched, 'file')}.")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass


def cmd_tui(args: argparse.Namespace) -> None:
    from memoryctl.storage.vault import Vault
    from memoryctl.tui.app import run_app

    root = vault_at(args.path) if getattr(args, "path", None) else find_vault(args.vault)
    run_app(Vault(root), args.screen)


def register(command: Callable[..., argparse.ArgumentParser]) -> None:
    p = command("reindex", cmd_reindex, "bring the index up to date")
    p.add_argument("--full", action="store_true", help="rebuild the index from scratch")
    p = command("doctor", cmd_doctor, "report unreadable files, duplicate ids and other problems")
    p.add_argument(
        "--fix",
        action="store_true",
        help="show the repairs it can make (and what a stopped write left to remove), and ask",
    )
    p.add_argument("--yes", action="store_true", help="with --fix: apply without asking")
    p = command("history", cmd_history, "a memory's commits and diffs")
    p.add_argument("id", metavar="ID")
    command("watch", cmd_watch, "keep the index current while files change")
    p = command("tui", cmd_tui, "open the terminal UI")
    p.add_argument("path", nargs="?", metavar="VAULT")
    p.add_argument(
        "--screen",
        choices=MODES,
        default="vault",
        help="the screen to open on (review: the proposals waiting for a decision)",
    )
