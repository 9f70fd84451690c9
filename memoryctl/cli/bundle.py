"""`memoryctl preview` and `memoryctl export`: the bundle, as the agent will see it."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from memoryctl.cli.common import UserError, emit_json, moment_value, note, open_vault, say
from memoryctl.moments import parse_moment
from memoryctl.storage.config import FORMATS


def _now(value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return dt.datetime.fromisoformat(parse_moment(value).replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"--now {value!r} is not a date (use ISO 8601)") from None


def _message(value: str | None) -> str | None:
    if value == "-":
        return sys.stdin.read()
    return value


def _bundle(args: argparse.Namespace):
    from memoryctl.context import context_bundle

    vault = open_vault(args)
    bundle = context_bundle(
        vault,
        profile=args.profile,
        message=_message(args.message),
        budget=args.budget,
        now=_now(args.now),
    )
    return vault, bundle


def summary(bundle) -> str:
    held = len(bundle.excluded)
    parts = [
        f"{bundle.used}/{bundle.budget} tokens ({bundle.method})",
        f"{len(bundle.pinned)} pinned ({bundle.sections.get('pinned', 0)} tokens)",
        f"{len(bundle.recalled)} recalled ({bundle.sections.get('recalled', 0)} tokens)",
        f"{len(bundle.conflicts)} conflicts",
        f"{held} held out",
    ]
    return "profile " + bundle.profile.name + ": " + " · ".join(parts)


def _report(bundle) -> None:
    note(summary(bundle))
    for warning in bundle.warnings:
        note(f"WARNING: {warning}")


def cmd_preview(args: argparse.Namespace) -> None:
    from memoryctl.bundle_formats import render

    _, bundle = _bundle(args)
    fmt = "json" if args.json else args.format
    sys.stdout.write(render(bundle, fmt))
    _report(bundle)
    if args.targets:
        from memoryctl.export import tool_loads

        for target in tool_loads(bundle, Path.cwd()):
            note(f"{target.fmt}: {target.message()}")


def cmd_export(args: argparse.Namespace) -> None:
    from memoryctl.export import ExportError, Written, export

    _, bundle = _bundle(args)
    args.format = args.format or bundle.profile.format
    try:
        result = export(bundle, args.format, args.out, Path.cwd())
    except ExportError as error:
        raise UserError(str(error)) from None
    if isinstance(result, str):
        sys.stdout.write(result)
        _report(bundle)
        return
    assert isinstance(result, Written)
    if args.json:
        load = result.load
        emit_json(
            {
                "path": str(result.path),
                "changed": result.changed,
                "format": args.format,
                "notes": list(result.notes),
                "load": None if load is None else {"cut": load.is_cut, "text": load.message()},
            }
        )
    else:
        verb = "Wrote" if result.changed else "Unchanged:"
        say(f"{verb} {result.path}")
    for line in result.notes:
        note(line)
    if result.load is not None and (result.load.is_cut or not args.json):
        note(("WARNING: " if result.load.is_cut else "") + result.load.message())
    _report(bundle)


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--message", "-m", metavar="TEXT|-", help="the user's next message")
    p.add_argument("--profile", "-p", help="the agent profile (default: default)")
    p.add_argument("--budget", type=int, help="override the profile's token budget")
    p.add_argument(
        "--now", metavar="ISO", type=moment_value, help="judge the age of memories at this moment"
    )


def register(command) -> None:
    p = command("preview", cmd_preview, "print exactly what the agent will see next turn")
    _options(p)
    p.add_argument("--format", choices=("markdown", "json"), default="markdown")
    p.add_argument(
        "--targets",
        action="store_true",
        help="also say what each agent will load of its file (AGENTS.md, CLAUDE.md, …) here",
    )
    p = command("export", cmd_export, "write the bundle for an agent to read")
    _options(p)
    p.add_argument("--format", choices=FORMATS, help="default: the profile's format")
    p.add_argument("--out", metavar="PATH", help="where to write (default per format)")
