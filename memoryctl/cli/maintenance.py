"""Commands that look after a vault: reindex, doctor, history, watch, and the TUI."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from memoryctl.cli.common import (
    EXIT_USER,
    UserError,
    emit_json,
    find_vault,
    note,
    open_vault,
    say,
    vault_at,
)
from memoryctl.wording import counted


def cmd_reindex(args: argparse.Namespace) -> None:
    from memoryctl.storage.index import Index, remove_index

    vault = _vault_without_sync(args)
    if args.full:
        remove_index(vault.db_path)  # --full rebuilds from nothing but the vault's files
    index = Index.open(vault.db_path, vault.root, vault.config)
    progress = _progress_printer() if sys.stderr.isatty() and not args.json else None
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
    from memoryctl.doctor import diagnose

    vault = open_vault(args)
    findings = diagnose(vault)
    if args.json:
        emit_json([f.as_json() for f in findings])
    elif not findings:
        say("No problems found.")
    else:
        for finding in findings:
            say(finding.line())
    if any(f.severity == "error" for f in findings):
        raise SystemExit(EXIT_USER)


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
    try:
        for report, paths in watch_vault(vault):
            if args.json:
                emit_json({"paths": paths, "changed": report.touched})
            else:
                say(f"Re-indexed {counted(len(paths), 'file')}: {', '.join(paths[:5])}")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass


def cmd_tui(args: argparse.Namespace) -> None:
    from memoryctl.storage.vault import Vault
    from memoryctl.tui.app import run_app

    root = vault_at(args.path) if getattr(args, "path", None) else find_vault(args.vault)
    run_app(Vault(root))


def register(command: Callable[..., argparse.ArgumentParser]) -> None:
    p = command("reindex", cmd_reindex, "bring the index up to date")
    p.add_argument("--full", action="store_true", help="rebuild the index from scratch")
    command("doctor", cmd_doctor, "report unreadable files, duplicate ids and other problems")
    p = command("history", cmd_history, "a memory's commits and diffs")
    p.add_argument("id", metavar="ID")
    command("watch", cmd_watch, "keep the index current while files change")
    p = command("tui", cmd_tui, "open the terminal UI")
    p.add_argument("path", nargs="?", metavar="VAULT")
