"""`memoryctl sync` and `memoryctl keys`: many devices, one memory."""

from __future__ import annotations

import argparse
import getpass
import sys

from memoryctl.cli.common import (
    UserError,
    emit_json,
    finish,
    note,
    open_vault,
    say,
    subcommand_options,
)
from memoryctl.wording import counted, first_few

# A sync with many conflicts names this many of them; the review queue holds them all.
CONFLICTS_SHOWN = 10


def _utcnow():
    from memoryctl.actions import utcnow

    return utcnow()


def cmd_sync(args: argparse.Namespace) -> None:
    from memoryctl.sync import sync

    vault = open_vault(args)
    report = sync(
        vault,
        remote=args.remote,
        force_with_lease=args.force_with_lease,
        include_edits=args.include_edits,
        seal_history=args.seal_history,
        now=_utcnow(),
    )
    finish(vault)
    if args.json:
        emit_json(report.as_json())
        return
    for text in report.notices:
        say(text)
    shown, more = first_few(report.conflicts, CONFLICTS_SHOWN)
    for conflict in shown:
        say(
            f"Conflict in {conflict.path} ({conflict.what}): this device's version "
            f"is kept; the other is in proposal {conflict.proposal} "
            f"(memoryctl review show {conflict.proposal})."
        )
    if more:
        say(
            f"…and {counted(more, 'more conflict')} like these to decide; "
            "memoryctl review --origin sync lists them all."
        )
    where = f"{report.remote}/{report.branch}"
    if report.forced:
        say(f"Synced with {where}: this device's history is on the remote again.")
    elif not report.received and not report.sent:
        say(f"Up to date with {where}.")
    else:
        say(
            f"Synced with {where}: received {_commits(report.received)}, "
            f"sent {_commits(report.sent)}."
        )


def _commits(count: int) -> str:
    return f"{count} commit" if count == 1 else f"{count} commits"


def cmd_keys_new(args: argparse.Namespace) -> None:
    from memoryctl.sealing import new_key

    vault = open_vault(args)
    key = new_key(vault)
    if args.json:
        emit_json({"key": key.id})
        return
    say(f"Made this vault's sealing key ({key.id}); it is in the keyring.")
    say("Carry it to your other devices with memoryctl keys export and memoryctl keys import.")


def cmd_keys_export(args: argparse.Namespace) -> None:
    from memoryctl.sealing import export_key

    vault = open_vault(args)
    text = export_key(vault)
    if args.json:
        emit_json({"key": text})
        return
    say(text)
    note(
        "This line is the key to every secret memory in this vault. Paste it into "
        "memoryctl keys import on your other device; do not save it in a file."
    )


def cmd_keys_import(args: argparse.Namespace) -> None:
    from memoryctl.sealing import import_key

    vault = open_vault(args)
    if sys.stdin.isatty():
        text = getpass.getpass("Paste the key (it is not shown): ")
    else:
        text = sys.stdin.readline()
    if not text.strip():
        raise UserError("no key given; paste the line memoryctl keys export printed")
    key, opened = import_key(vault, text)
    finish(vault)
    if args.json:
        emit_json({"key": key.id, **opened.as_json()})
        return
    say(f"Imported the sealing key {key.id}; opened {len(opened.opened)} sealed memories.")
    for path, reason in opened.unopened:
        note(f"{path}: {reason}")


def _keys_usage(args: argparse.Namespace) -> None:
    raise UserError("name an action: memoryctl keys new|export|import")


def register(command) -> None:
    common = subcommand_options()
    p = command("sync", cmd_sync, "fetch, merge and push the vault through its git remote")
    p.add_argument("--remote", metavar="NAME", help="the remote (default: upstream or origin)")
    p.add_argument(
        "--force-with-lease",
        action="store_true",
        help="put this device's history back on a remote whose history was rewritten",
    )
    p.add_argument(
        "--include-edits",
        action="store_true",
        help="commit your own uncommitted edits to memories first, as yours",
    )
    p.add_argument(
        "--seal-history",
        action="store_true",
        help="rewrite the commits the remote lacks with each secret memory in them sealed",
    )
    p = command("keys", _keys_usage, "the key that seals secret memories")
    sub = p.add_subparsers(dest="keys_command", metavar="ACTION", parser_class=type(p))
    a = sub.add_parser("new", parents=[common], help="make this vault's sealing key")
    a.set_defaults(func=cmd_keys_new)
    a = sub.add_parser("export", parents=[common], help="print the key once, for another device")
    a.set_defaults(func=cmd_keys_export)
    a = sub.add_parser("import", parents=[common], help="read a key from the terminal")
    a.set_defaults(func=cmd_keys_import)
