"""The `memoryctl` command: the parser and the entry point. Each command is a thin
function over the core, in the module of its group.

Exit codes: 0 on success, 1 on a user error (one line on stderr), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from memoryctl import __version__
from memoryctl.cli.common import EXIT_USAGE, check_changes, note


class Parser(argparse.ArgumentParser):
    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        """A command's own words and options in any order (`add Tea --kind preference
        after lunch`, `replace ID --title T new text`): argparse alone would take the
        words after the first option as unrecognized. A parser with commands under it
        parses as argparse does, since it hands the rest to the command's parser; so
        does one given `--`, which argparse's intermixed parsing would drop."""
        if self._subparsers is not None or self._intermixing or "--" in (args or ()):
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"memoryctl: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    def common_options(suppress: bool) -> argparse.ArgumentParser:
        # Options a user may give before or after the command; on the command's own
        # parser their defaults are suppressed so they never undo what came before it.
        common = argparse.ArgumentParser(add_help=False)
        default = {"default": argparse.SUPPRESS} if suppress else {}
        common.add_argument("--vault", metavar="PATH", help="the vault folder", **default)
        common.add_argument("--json", action="store_true", help="print JSON", **default)
        return common

    common = common_options(suppress=True)
    parser = Parser(
        prog="memoryctl",
        description="Keep an AI agent's memory correct. With no command, opens the TUI.",
        parents=[common_options(suppress=False)],
    )
    parser.add_argument("--version", action="version", version=f"memoryctl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    def command(name: str, func: Callable[..., None], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, parents=[common])
        p.set_defaults(func=func)
        return p

    from memoryctl.cli import bundle, importing, maintenance, memories, review, serve, sync

    for group in (memories, maintenance, bundle, serve, review, importing, sync):
        group.register(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # as the command ends (the vault closing): one line too
        note("interrupted")
        return 130


def parsed(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line's arguments; with no command, those of `tui` (every option the
    command line gave, and the TUI's own defaults)."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(words)
    if args.command is None:
        args = parser.parse_args([*words, "tui"])
    return args


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = parsed(argv)
    except SystemExit as exit_:  # --help, --version and usage errors
        return int(exit_.code or 0)
    try:
        args.func(args)
        vault = getattr(args, "opened_vault", None)
        if vault is not None and vault.last_sync is not None:
            check_changes(vault, getattr(args, "now", None))  # what the command changed
    except SystemExit as exit_:
        return int(exit_.code or 0)
    except KeyboardInterrupt:
        note("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # every error reaches the user as one line, never a traceback
        from memoryctl.cli.refusals import worded
        from memoryctl.errors import describe

        message, code = describe(error)
        note(f"memoryctl: {worded(error) or message}")
        if os.environ.get("MEMORYCTL_DEBUG"):
            raise
        return code
    finally:
        vault = getattr(args, "opened_vault", None)
        if vault is not None:
            vault.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
