"""The `memoryctl` command. Each command is a thin function over the core.

Exit codes: 0 on success, 1 on a user error (one line on stderr), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from memoryctl import __version__
from memoryctl.memory import KINDS, STATUSES, VISIBILITIES, Memory, marks

EXIT_USER = 1
EXIT_USAGE = 2


class UserError(Exception):
    pass


# --- output ---------------------------------------------------------------------------


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


def user_config_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("memoryctl")) / "config.toml"


def default_vault() -> Path | None:
    path = user_config_path()
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError) as error:
        raise UserError(f"{path}: {error}") from None
    value = data.get("vault")
    return Path(value).expanduser() if isinstance(value, str) else None


def find_vault(explicit: str | None) -> Path:
    """--vault, then $MEMORYCTL_VAULT, then the user's default, then the current folder."""
    from memoryctl.storage.vault import is_vault

    for candidate, origin in (
        (explicit, "--vault"),
        (os.environ.get("MEMORYCTL_VAULT"), "MEMORYCTL_VAULT"),
    ):
        if candidate:
            path = Path(candidate).expanduser()
            if not path.is_dir():
                raise UserError(f"{origin} {candidate}: no such folder")
            return path
    configured = default_vault()
    if configured is not None:
        if not configured.is_dir():
            raise UserError(
                f"the default vault {configured} (from {user_config_path()}) is missing"
            )
        return configured
    here = Path.cwd()
    for folder in (here, *here.parents):
        if is_vault(folder):
            return folder
    raise UserError(
        "no vault here: pass --vault PATH, set MEMORYCTL_VAULT, or run `memoryctl init PATH`"
    )


def open_vault(args: argparse.Namespace):  # -> Vault (import deferred for start-up time)
    from memoryctl.storage.vault import Vault

    root = find_vault(args.vault)
    vault = Vault(root)
    args.opened_vault = vault  # closed by main() when the command ends
    _ = vault.index
    for text in vault.notices:
        note(text)
    vault.index.notices.clear()
    if vault.last_sync and vault.last_sync.problems and not getattr(args, "quiet_problems", False):
        count = len(vault.last_sync.problems)
        note(f"{count} file(s) could not be read as memories; `memoryctl doctor` lists them.")
    return vault


def finish(vault) -> None:
    for text in vault.notices:
        note(text)


def read_body(value: str | None) -> str:
    if value is None:
        raise UserError("give the memory's text, or - to read it from standard input")
    if value == "-":
        return sys.stdin.read()
    return value


# --- commands ---------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace) -> None:
    from memoryctl.actions import init_vault

    path = Path(args.path or ".").expanduser()
    if path.exists() and not path.is_dir():
        raise UserError(f"{path} exists and is not a folder")
    created = init_vault(path)
    if args.json:
        emit_json({"vault": str(path.resolve()), "created": created})
        return
    if created:
        say(f"Initialized vault in {path.resolve()} ({', '.join(created)}).")
    else:
        say(f"{path.resolve()} is already a vault; nothing changed.")


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
    from memoryctl.actions import add_memory
    from memoryctl.reach import correct

    body = read_body(args.body)
    vault = open_vault(args)
    new = _new_memory(args, body)
    memory = correct(vault, new, force=args.force) if new.deprecates else add_memory(vault, new)
    finish(vault)
    if args.json:
        data = memory.as_json()
        if memory.deprecates:
            data["reach"] = _report_reach(vault, memory, args)["reached"]
        emit_json(data)
        return
    say(memory.id)
    if memory.deprecates:
        _print_reach_summary(vault, memory)


def _print_reach_summary(vault, memory: Memory) -> None:
    reached = vault.index.reach_of(memory.id)
    note(
        f"This correction reaches {len(reached)} older memor{'y' if len(reached) == 1 else 'ies'}."
    )
    for reached_memory, needle in reached[:20]:
        note(f"  {reached_memory.id}  {reached_memory.title}  ({needle})")
    if len(reached) > 20:
        note(f"  … and {len(reached) - 20} more (memoryctl reach {memory.id})")


def cmd_correct(args: argparse.Namespace) -> None:
    from memoryctl.reach import GuardTripped, correct

    body = read_body(args.body)
    if not args.deprecates:
        note("warning: this correction has no --deprecates, so it will reach no memory.")
    vault = open_vault(args)
    new = _new_memory(args, body)
    new.kind = new.kind or "correction"
    try:
        memory = correct(vault, new, force=args.force)
    except GuardTripped as tripped:
        if not sys.stdin.isatty() or args.json:
            raise
        worst = tripped.broad[0]
        note(f"{worst.needle!r} would reach {worst.count} memories (guard: {tripped.guard}):")
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


def cmd_reach(args: argparse.Namespace) -> None:
    from memoryctl.reach import reach_of

    vault = open_vault(args)
    correction, reached = reach_of(vault, args.id)
    if args.json:
        emit_json(
            {
                "id": correction.id,
                "title": correction.title,
                "deprecates": list(correction.deprecates),
                "count": len(reached),
                "reached": [{**short(m), "needle": needle} for m, needle in reached],
                "detached": list(correction.detached),
            }
        )
        return
    say(f"{correction.title} [{correction.id}] reaches {len(reached)} memories:")
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
    verb = "Reattached" if args.undo else "Detached"
    say(f"{verb}: {args.memory} {'to' if args.undo else 'from'} {correction.id}.")


def _now_json(now: Sequence[Memory]) -> list[dict[str, str]]:
    return [{"id": c.id, "text": c.text} for c in now]


def cmd_show(args: argparse.Namespace) -> None:
    from memoryctl.corrections import now_lines, render_with_now

    vault = open_vault(args)
    memory = vault.resolve(args.id)
    now = now_lines(vault.index, [memory])[memory.id]
    if args.json:
        emit_json({**memory.as_json(), "now": _now_json(now)})
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
    if memory.derived_from:
        say(f"derived from: {', '.join(memory.derived_from)}")
    for anchor in memory.anchors:
        say(f"anchor: {anchor.path}" + (f"#{anchor.symbol}" if anchor.symbol else ""))
    if memory.broken:
        say(f"error: {memory.broken}")
    for problem in memory.problems:
        say(f"problem: {problem}")
    say()
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
        note("No memories match.")


def cmd_search(args: argparse.Namespace) -> None:
    vault = open_vault(args)
    if args.limit < 1:
        raise UserError("--limit must be at least 1")
    memories = vault.index.search(args.query, limit=args.limit, include_retired=args.all)
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
    from memoryctl.storage.notefile import sha256

    vault = open_vault(args)
    memory = vault.resolve(args.id)
    path = vault.root / memory.path
    before = sha256(path.read_bytes())
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        result = subprocess.run([*editor.split(), str(path)])
    except FileNotFoundError:
        raise UserError(f"the editor {editor!r} was not found; set $EDITOR") from None
    if result.returncode != 0:
        raise UserError(f"the editor exited with status {result.returncode}; nothing recorded")
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
                say(f"Re-indexed {len(paths)} file(s): {', '.join(paths[:5])}")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass


def cmd_tui(args: argparse.Namespace) -> None:
    from memoryctl.app import run_app
    from memoryctl.storage.vault import Vault

    root = Path(args.path).expanduser() if getattr(args, "path", None) else find_vault(args.vault)
    if not root.is_dir():
        raise UserError(f"{root}: no such folder")
    run_app(Vault(root))


# --- parser -----------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
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

    p = command("init", cmd_init, "create a vault (a git repository with memoryctl.toml)")
    p.add_argument("path", nargs="?", metavar="PATH")

    def memory_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("body", nargs="?", metavar="BODY|-", help="the text, or - for stdin")
        p.add_argument("--title")
        p.add_argument("--kind", help=f"one of {', '.join(KINDS)} (others allowed)")
        p.add_argument("--tag", action="append", metavar="TAG")
        p.add_argument("--namespace", default="default")
        p.add_argument("--visibility", choices=VISIBILITIES)
        p.add_argument("--source", metavar="KIND[:REF]", help="user, tool, document or inference")
        p.add_argument("--created", metavar="ISO", help="back-date the memory")
        p.add_argument("--deprecates", action="append", metavar="S", help="an outdated string")
        p.add_argument("--derived-from", action="append", metavar="ID")
        p.add_argument("--anchor", action="append", metavar="PATH[#SYMBOL]")
        p.add_argument("--subject")
        p.add_argument("--predicate")
        p.add_argument("--value")
        p.add_argument("--force", action="store_true", help="skip the broad-string guard")

    p = command("add", cmd_add, "add a memory and print its id")
    memory_options(p)
    p.add_argument("--pin", action="store_true", help="pin it")

    p = command("correct", cmd_correct, "add a correction that replaces outdated strings")
    memory_options(p)

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
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--all", action="store_true", help="include retired memories")

    p = command("edit", cmd_edit, "edit a memory in $EDITOR")
    p.add_argument("id", metavar="ID")
    p = command("pin", cmd_pin, "pin a memory: it is always in context")
    p.add_argument("id", metavar="ID")
    p = command("unpin", lambda a: cmd_pin(a, False), "unpin a memory")
    p.add_argument("id", metavar="ID")

    p = command("reindex", cmd_reindex, "bring the index up to date")
    p.add_argument("--full", action="store_true", help="rebuild the index from scratch")
    command("doctor", cmd_doctor, "report unreadable files, duplicate ids and other problems")
    p = command("history", cmd_history, "a memory's commits and diffs")
    p.add_argument("id", metavar="ID")
    command("watch", cmd_watch, "keep the index current while files change")
    p = command("tui", cmd_tui, "open the terminal UI")
    p.add_argument("path", nargs="?", metavar="VAULT")

    from memoryctl import cli_bundle, cli_mcp, cli_review

    cli_bundle.register(command)
    cli_mcp.register(command)
    cli_review.register(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version and usage errors
        return int(exit_.code or 0)
    if args.command is None:
        args.func = cmd_tui
        args.path = None
    try:
        args.func(args)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    except KeyboardInterrupt:
        note("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # every error reaches the user as one line, never a traceback
        from memoryctl.errors import describe

        message, code = describe(error)
        note(f"memoryctl: {message}")
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
