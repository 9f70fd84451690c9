"""`memoryctl import SOURCE PATH`: another tool's memories into the vault."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path

from memoryctl.cli.common import UserError, emit_json, finish, note, open_vault, say

# A progress bar only where it helps: a large import, shown on a terminal.
PROGRESS_FROM = 1000


def _progress() -> Callable[[str, int, int], None]:
    def show(stage: str, done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        if stage == "writing":
            sys.stderr.write(f"\rWriting {total} memories and proposals, in one commit…\n")
        else:
            width = 30
            filled = width * done // max(total, 1)
            bar = "█" * filled + "·" * (width - filled)
            sys.stderr.write(f"\rChecking {bar} {done}/{total} parts")
            if done >= total:
                sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def cmd_import(args: argparse.Namespace) -> None:
    from memoryctl.importers.base import ImportSourceError
    from memoryctl.importing import run_import

    vault = open_vault(args)
    progress = _progress() if sys.stderr.isatty() and not args.json else None
    try:
        report = run_import(
            vault,
            args.source,
            Path(args.path).expanduser(),
            namespace=args.namespace,
            dry_run=args.dry_run,
            now=dt.datetime.now(dt.UTC),
            progress=progress,
        )
    except ImportSourceError as error:
        raise UserError(f"cannot import {args.source}: {error}") from None
    finish(vault)
    if args.json:
        emit_json(report.as_json())
        return
    for made in report.made:
        retired = f", retired: {made.retired}" if made.retired else ""
        say(f"made      {made.id}  {made.title}  ({made.ref}{retired})")
    for proposed in report.proposed:
        which = f", proposal {proposed.proposal}" if proposed.proposal else ""
        say(f"replace   {proposed.id}  {proposed.title}  (its source changed{which})")
    for skipped in report.skipped:
        say(f"skipped   {skipped.ref}: {skipped.reason}")
    say(report.summary + (f" Commit {report.commit[:12]}." if report.commit else ""))
    if report.dry_run:
        note("Dry run: nothing was written.")


def register(command) -> None:
    from memoryctl.importers import NAMES

    p = command("import", cmd_import, "import memories from another tool, once")
    p.add_argument("source", choices=NAMES, metavar="SOURCE", help=", ".join(NAMES))
    p.add_argument("path", metavar="PATH", help="the file or folder to read (never changed)")
    p.add_argument("--namespace", "-n", help="the namespace of the new memories (default: default)")
    p.add_argument("--dry-run", action="store_true", help="report what would happen; write nothing")
