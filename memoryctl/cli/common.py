"""What every command shares: output, errors, and opening the vault."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memoryctl.memory import Memory, marks
from memoryctl.wording import counted

EXIT_USER = 1
EXIT_USAGE = 2


class UserError(Exception):
    pass


# --- output ---------------------------------------------------------------------------


def subcommand_options() -> argparse.ArgumentParser:
    """--vault and --json for the parser of a command's own action (`keys import`), with
    their defaults suppressed so they never undo what came before the action."""
    common = argparse.ArgumentParser(add_help=False)
    hidden = argparse.SUPPRESS
    common.add_argument("--vault", metavar="PATH", help="the vault folder", default=hidden)
    common.add_argument("--json", action="store_true", help="print JSON", default=hidden)
    return common


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def note(text: str) -> None:
    sys.stderr.write(text + "\n")


def short(memory: Memory) -> dict[str, str]:
    return {"id": memory.id, "title": memory.title, "path": memory.path}


def line_for(memory: Memory, overtaken: bool = False) -> str:
    when = memory.created[:10]
    return f"{marks(memory, overtaken)} {memory.id}  {when}  {memory.kind:<10}  {memory.title}"


# --- vault resolution -------------------------------------------------------------------


def find_vault(explicit: str | None) -> Path:
    """--vault, then $MEMORYCTL_VAULT, then the user's default, then the current folder."""
    from memoryctl.storage import location

    try:
        return location.find_vault(explicit)
    except location.VaultNotFound as error:
        raise vault_not_found(error) from None


def vault_at(path: str) -> Path:
    """The vault a command names as its argument (`memoryctl tui PATH`)."""
    from memoryctl.storage import location

    try:
        return location.vault_at(path, "explicit")
    except location.VaultNotFound as error:
        raise vault_not_found(error) from None


def vault_not_found(error: Exception) -> UserError:
    from memoryctl.storage import location

    if isinstance(error, location.NotAVault):
        return UserError(f"{error.path} is not a vault; memoryctl init {error.path} makes one")
    if isinstance(error, location.NoSuchFolder):
        origin = "--vault" if error.origin == "explicit" else location.ENV_VAULT
        return UserError(f"{origin} {error.path}: no such folder")
    if isinstance(error, location.NoVaultHere):
        return UserError(
            "no vault here: pass --vault PATH, set MEMORYCTL_VAULT, or run `memoryctl init PATH`"
        )
    return UserError(str(error))


def open_vault(args: argparse.Namespace):  # -> Vault (import deferred for start-up time)
    from memoryctl.storage.vault import Vault

    root = find_vault(args.vault)
    vault = Vault(root)
    args.opened_vault = vault  # closed by main() when the command ends
    _ = vault.index
    for text in vault.notices:
        note(text)
    vault.index.notices.clear()
    if getattr(args, "live_checks", True):
        check_changes(vault, getattr(args, "now", None))
    if vault.last_sync and vault.last_sync.problems and not getattr(args, "quiet_problems", False):
        count = len(vault.last_sync.problems)
        note(
            f"{counted(count, 'file')} could not be read as memories; "
            "`memoryctl doctor` lists them."
        )
    return vault


def check_changes(vault, now: str | None = None) -> None:
    """Run the live checks over what the index just took in; say what they proposed.

    `now` is the command's --now, when it has one (proposals are dated by it, so an
    export at a fixed moment is the same every time); the clock otherwise. The checks
    never stop the command: one that cannot run (git refuses the commit, say) is a
    warning, and the next command tries again."""
    if not vault.index.live_checks_due():
        return  # nothing changed since they last ran: not even their code is loaded
    from memoryctl.actions import utcnow
    from memoryctl.errors import describe
    from memoryctl.live_checks import check_changes as run
    from memoryctl.moments import moment, parse_moment

    try:
        when = moment(parse_moment(now)) if now else utcnow()
    except ValueError:
        when = utcnow()  # the command itself says what is wrong with its --now
    try:
        report = run(vault, now=when)
    except Exception as error:
        note(f"warning: the checks on what changed could not run: {describe(error)[0]}")
        return
    if report.proposed:
        count = len(report.proposed)
        note(f"{count} new proposal{'' if count == 1 else 's'} to review (memoryctl review).")
    if report.withdrawn:
        count = len(report.withdrawn)
        note(
            f"{count} proposal{'' if count == 1 else 's'} withdrawn: what proposed "
            f"{'it' if count == 1 else 'them'} changed (memoryctl review --state withdrawn)."
        )
    if report.reopened:
        count = len(report.reopened)
        note(
            f"{count} withdrawn proposal{' is' if count == 1 else 's are'} pending again: what "
            f"proposed {'it' if count == 1 else 'them'} is back (memoryctl review)."
        )


def finish(vault) -> None:
    from memoryctl.cli.refusals import after_commit

    for text in vault.notices:
        note(text)
    advice = after_commit(vault.last_commit.failed if vault.last_commit else None)
    if advice:
        note(advice)


def text_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """A memory's text as the words typed after the command: the shell has split them,
    so they need no quotes (`typed_text` joins them again)."""
    parser.add_argument("body", nargs="*", metavar="BODY|-", help=help)


def typed_text(args: argparse.Namespace) -> str | None:
    return " ".join(args.body) if args.body else None


def read_body(value: str | None) -> str:
    if value is None:
        raise UserError("give the memory's text, or - to read it from standard input")
    if value == "-":
        return sys.stdin.read()
    return value


# --- option values: a malformed one is a usage error (exit 2), found before any work -----


def moment_value(text: str) -> str:
    """An ISO 8601 date or moment (`--now`, `--since`), as typed."""
    from memoryctl.moments import parse_moment

    try:
        parse_moment(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (use ISO 8601, like 2026-11-01 or 2026-11-01T09:00Z)"
        ) from None
    return text


def port_value(text: str) -> int:
    """A TCP port: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535; 0 picks one)")
    return port
