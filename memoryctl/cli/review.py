"""The review queue on the command line: propose, check, review, and the person's
direct decisions (retire, restore, confirm, replace), with the audit of all of them.

Each command is a thin function over the core: checks.py, review.py, decisions.py,
anchors.py and audit.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memoryctl.cli.common import (
    EXIT_USAGE,
    UserError,
    emit_json,
    finish,
    moment_value,
    note,
    open_vault,
    read_body,
    say,
    text_argument,
    typed_text,
)

Command = Callable[[str, Callable[..., None], str], argparse.ArgumentParser]

STATE_CHOICES = ("pending", "approved", "declined", "withdrawn", "all")


def _utcnow() -> dt.datetime:
    from memoryctl.actions import utcnow

    return utcnow()


def _now(value: str | None) -> dt.datetime:
    """--now ISO, for checks that depend on the date; the clock otherwise."""
    if value is None:
        return _utcnow()
    from memoryctl.moments import moment, parse_moment

    try:
        return moment(parse_moment(value))
    except ValueError:
        raise UserError(f"--now {value!r} is not a date (use ISO 8601, like 2026-11-29)") from None


def _targets_text(item) -> str:
    parts = []
    for target in item.targets:
        title = target.memory.title if target.memory else "(no longer exists)"
        parts.append(f"{target.id} {title}")
    return "; ".join(parts)


def _word(action: str) -> str:
    from memoryctl.review_actions import word

    return word(action)


def _print_item(item) -> None:
    p = item.proposal
    action = _word(p.action)
    say(f"{p.id}  {action:<8} {_targets_text(item)}")
    say(f"            {p.describe_origin()} · {p.created[:10]} · {p.reason or '(no reason given)'}")
    if p.state != "pending":
        when = f" {p.decision.at[:10]}" if p.decision else ""
        said = f": {p.decision.note}" if p.decision and p.decision.note else ""
        say(f"            {p.state}{when}{said}")
    for flag in item.flags():
        say(f"            ! {flag}")


def _report_problems(problems: Sequence[tuple[str, str]]) -> None:
    for path, problem in problems:
        note(f"warning: {path}: {problem}; skipped (the file is kept as it is)")


def _print_outcome(verb: str, outcome) -> None:
    from memoryctl.review_actions import verb as verb_of

    p = outcome.proposal
    say(f"{verb} {p.id}: {verb_of(p.action).lower()} {', '.join(p.targets)}.")
    _print_consequences(outcome)


def _print_consequences(outcome) -> None:
    """What a decision set off: notices, lineage proposals, proposals withdrawn."""
    for text in outcome.notices:
        note(f"note: {text}")
    if outcome.filed:
        count = len(outcome.filed)
        note(
            f"Proposed for review: {count} memor{'y' if count == 1 else 'ies'} derived from it "
            "(memoryctl review --origin lineage)."
        )
    if outcome.withdrawn:
        note(f"Withdrawn as moot: {', '.join(w.id for w in outcome.withdrawn)}.")


# --- proposing ----------------------------------------------------------------------------


def cmd_propose(args: argparse.Namespace) -> None:
    from memoryctl.review import propose

    body = read_body(typed_text(args)) if args.action == "replace" else None
    if args.action != "replace" and args.body:
        raise UserError(f"propose {args.action} takes no text; give the reason with --reason")
    vault = open_vault(args)
    proposal, created = propose(
        vault,
        args.action,
        args.id,
        now=_utcnow(),
        reason=args.reason,
        body=body,
        origin=args.origin,
        origin_ref=args.ref,
    )
    finish(vault)
    if args.json:
        emit_json({**proposal.as_json(), "new": created})
        return
    say(proposal.id)
    if not created:
        when = f" on {proposal.decision.at[:10]}" if proposal.decision else ""
        note(f"Already proposed as {proposal.id} ({proposal.state}{when}); nothing new filed.")


def _print_check(vault, report, problems: Sequence[tuple[str, str]]) -> None:
    from memoryctl.checks import REOPENED

    _report_problems(problems)
    titles = {
        m.id: m.title
        for m in vault.index.get_many({t for p in report.proposed for t in p.targets}).values()
    }
    for proposal in report.proposed:
        action = _word(proposal.action)
        targets = "; ".join(f"{t} {titles.get(t, '')}".strip() for t in proposal.targets)
        say(f"proposed {proposal.id}  {action:<8} {targets}")
        say(f"            {proposal.describe_origin()} · {proposal.reason}")
    for proposal in report.withdrawn:
        why = proposal.decision.note if proposal.decision else ""
        say(f"withdrew {proposal.id}  {', '.join(proposal.targets)}: {why}")
    for proposal in report.reopened:
        say(f"reopened {proposal.id}  {', '.join(proposal.targets)}: {REOPENED}")
    for missing in report.unreplaced:
        note(
            f"unreplaced: {missing.memory.id} ({missing.memory.title}) retires "
            f"{missing.target}, which is no memory"
        )
    for memory, broken in report.refused:
        note(f"refused: {memory.id} ({memory.title}): {broken.detail}")
    if not report.proposed and not report.withdrawn and not report.reopened:
        say(f"Nothing new to propose ({report.already} already proposed).")
    elif report.proposed or report.reopened:
        note("Decide with memoryctl review.")


def cmd_check(args: argparse.Namespace) -> None:
    from memoryctl.checks import check_now
    from memoryctl.proposals import ProposalStore

    args.live_checks = False  # this command checks everything, and says what it found
    vault = open_vault(args)
    report = check_now(vault, now=_now(args.now))
    finish(vault)
    if args.json:
        emit_json(report.as_json())
        return
    _print_check(vault, report, ProposalStore.of(vault).load().problems)


def cmd_check_anchors(args: argparse.Namespace) -> None:
    from memoryctl.anchors import repo_root
    from memoryctl.checks import check_anchors

    vault = open_vault(args)
    repo = repo_root(vault.root, vault.config.anchors_repo, args.repo)
    report = check_anchors(vault, repo, now=_utcnow())
    finish(vault)
    if args.json:
        emit_json({**report.as_json(), "repo": str(repo)})
        return
    memories, anchors = report.checked["memories"], report.checked["anchors"]
    note(f"Checked {anchors} anchors of {memories} memories against {repo}.")
    _print_check(vault, report, [])


def cmd_anchor(args: argparse.Namespace) -> None:
    from memoryctl.anchors import anchor_memory, repo_root, spec

    vault = open_vault(args)
    repo = repo_root(vault.root, vault.config.anchors_repo, args.repo)
    memory, anchor = anchor_memory(vault, args.id, args.spec, repo)
    finish(vault)
    if args.json:
        emit_json({**memory.as_json(), "anchor": anchor.as_dict()})
        return
    say(f"Anchored {memory.id} ({memory.title}) to {spec(anchor)} (sha {anchor.sha}).")


# --- the queue ----------------------------------------------------------------------------


def cmd_review_list(args: argparse.Namespace) -> None:
    from memoryctl.review import queue

    vault = open_vault(args)
    state = None if args.state == "all" else args.state
    found = queue(vault, state=state, origin=args.origin)
    if args.json:
        emit_json(
            {
                "proposals": [i.as_json() for i in found.items],
                "problems": [{"path": p, "reason": r} for p, r in found.problems],
            }
        )
        return
    _report_problems(found.problems)
    for item in found.items:
        _print_item(item)
    count = len(found.items)
    what = f"{args.state} proposal" if args.state != "all" else "proposal"
    if count == 0:
        say(f"No {what}s.")
    elif args.state == "pending":
        note(f"{count} {what}{'' if count == 1 else 's'}. memoryctl review show ID for the diff.")


def cmd_review_show(args: argparse.Namespace) -> None:
    from memoryctl.review import find, preview

    vault = open_vault(args)
    item = find(vault, args.proposal)
    diffs = preview(vault, item, _utcnow()) if item.proposal.is_pending else {}
    if args.json:
        emit_json({**item.as_json(), "diff": diffs})
        return
    p = item.proposal
    say(f"Proposal {p.id} · {_word(p.action)} · {p.state}")
    say(f"origin:  {p.describe_origin()}")
    say(f"created: {p.created}")
    say(f"reason:  {p.reason or '(no reason given)'}")
    for target in item.targets:
        m = target.memory
        if m is None:
            say(f"target:  {target.id} (no longer exists)")
            continue
        details = [m.path, m.status] + (["pinned"] if m.pinned else [])
        say(f"target:  {m.id}  {m.title}  ({', '.join(details)})")
    if p.decision:
        said = f": {p.decision.note}" if p.decision.note else ""
        say(f"decided: {p.state} {p.decision.at}{said}")
    for flag in item.flags():
        say(f"! {flag}")
    for diff in diffs.values():
        say()
        sys.stdout.write(diff if diff.endswith("\n") or not diff else diff + "\n")


def _decide(args: argparse.Namespace, verb: str, run: Callable[..., Any]) -> None:
    vault = open_vault(args)
    outcome = run(vault, args.proposal, now=_utcnow(), note=args.note)
    finish(vault)
    if args.json:
        emit_json(outcome.as_json())
        return
    _print_outcome(verb, outcome)


def cmd_review_approve(args: argparse.Namespace) -> None:
    from memoryctl.review import approve, approve_all

    if args.all:
        _decide_all(
            args,
            "approve",
            "Approved",
            lambda vault: approve_all(
                vault, now=_utcnow(), origin=args.origin, note=args.note, force=args.force
            ),
        )
        return
    _one_proposal(args, "approve")
    _decide(
        args,
        "Approved",
        lambda vault, ref, **kw: approve(vault, ref, force=args.force, **kw),
    )


def cmd_review_decline(args: argparse.Namespace) -> None:
    from memoryctl.review import decline, decline_all

    if args.all:
        _decide_all(
            args,
            "decline",
            "Declined",
            lambda vault: decline_all(vault, now=_utcnow(), origin=args.origin, note=args.note),
        )
        return
    _one_proposal(args, "decline")
    _decide(args, "Declined", decline)


def _one_proposal(args: argparse.Namespace, verb: str) -> None:
    if args.origin:
        raise UserError("--origin chooses a batch; use it with --all")
    if not args.proposal:
        raise UserError("give a proposal id (memoryctl review lists them), or --all")
    if len(args.proposal) > 1:
        raise UserError(f"{verb} one proposal at a time, or a batch with --all --origin KIND")
    args.proposal = args.proposal[0]


def _decide_all(
    args: argparse.Namespace, action: str, verb: str, run: Callable[[Any], Any]
) -> None:
    """Decide every pending proposal (of --origin), after asking: on a terminal the
    person answers; elsewhere --yes is the answer, and without it nothing is read."""
    from memoryctl.review import queue

    if args.proposal:
        raise UserError("give proposal ids or --all, not both")
    asking = not args.yes
    if asking and not sys.stdin.isatty():
        note(
            f"memoryctl: review {action} --all decides every pending proposal at once; "
            "add --yes to do so when not at a terminal"
        )
        raise SystemExit(EXIT_USAGE)
    vault = open_vault(args)
    which = f" from {args.origin}" if args.origin else ""
    items = queue(vault, origin=args.origin).items
    count = len(items)
    if asking and count:
        note(f"{count} pending proposal{'' if count == 1 else 's'}{which}:")
        for item in items[:20]:
            note(f"  {item.proposal.id}  {_word(item.proposal.action):<8} {_targets_text(item)}")
        if count > 20:
            note(f"  … and {count - 20} more (memoryctl review)")
        answer = input(f"{action.capitalize()} all {count}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            raise UserError(f"nothing {verb.lower()}")
    done, skipped = run(vault)
    finish(vault)
    if args.json:
        emit_json(
            {
                verb.lower(): [o.as_json() for o in done],
                "skipped": [{"proposal": p.id, "reason": why} for p, why in skipped],
            }
        )
    else:
        for outcome in done:
            _print_outcome(verb, outcome)
        for proposal, why in skipped:
            note(f"skipped {proposal.id}: {why}")
        if not done and not skipped:
            say(f"No pending proposals{which}.")
    if skipped:
        raise SystemExit(1)


def cmd_review_undo(args: argparse.Namespace) -> None:
    from memoryctl.review import undo

    _decide(args, "Undid", undo)


def cmd_review_log(args: argparse.Namespace) -> None:
    from memoryctl.proposals import ProposalStore
    from memoryctl.review import decision_log, since_moment

    vault = open_vault(args)
    loaded = ProposalStore.of(vault).load()
    entries = decision_log(loaded.proposals, since_moment(args.since))
    if args.json:
        emit_json([e.as_json() for e in entries])
        return
    _report_problems(loaded.problems)
    for entry in entries:
        p = entry.proposal
        decision = "reopened" if entry.state == "pending" else entry.state
        action = _word(p.action)
        said = f": {entry.note}" if entry.note else ""
        say(
            f"{entry.at}  {decision:<9} {p.id}  {action} {', '.join(p.targets)}  "
            f"({p.describe_origin()}){said}"
        )
    if not entries:
        say("No decisions yet.")


# --- direct decisions ---------------------------------------------------------------------


def _act(args: argparse.Namespace, action: str, **extra: Any) -> None:
    from memoryctl.decisions import act
    from memoryctl.review_actions import ACTIONS

    vault = open_vault(args)
    outcome = act(vault, action, args.id, now=_utcnow(), note=args.note, **extra)
    finish(vault)
    if args.json:
        emit_json(outcome.as_json())
        return
    memory = outcome.memory
    name = f"{memory.id} ({memory.title})" if memory else args.id
    say(f"{ACTIONS[action].past} {name}; recorded as {outcome.proposal.id}.")
    _print_consequences(outcome)


def cmd_retire(args: argparse.Namespace) -> None:
    if not args.reason or not args.reason.strip():
        raise UserError("say why with --reason; `memoryctl retired` shows it later")
    _act(args, "retire", reason=args.reason.strip())


def cmd_restore(args: argparse.Namespace) -> None:
    _act(args, "restore")


def cmd_confirm(args: argparse.Namespace) -> None:
    _act(args, "confirm")


def _edit_in_editor(text: str) -> str:
    from memoryctl.editor_command import run_editor

    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as handle:
        handle.write(text)
        path = Path(handle.name)
    try:
        status = run_editor(path)
        if status != 0:
            raise UserError(f"the editor exited with status {status}; nothing replaced")
        return path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)


def cmd_replace(args: argparse.Namespace) -> None:
    if args.editor:
        if args.body:
            raise UserError("give the new text or --editor, not both")
        vault = open_vault(args)
        current = vault.resolve(args.id)
        body = _edit_in_editor(current.body)
        if body.strip() == current.body.strip():
            say("No change.")
            return
    else:
        body = read_body(typed_text(args))
    _act(args, "replace", body=body, title=args.title)


# --- the audit ----------------------------------------------------------------------------


def cmd_retired(args: argparse.Namespace) -> None:
    from memoryctl.audit import retired
    from memoryctl.review import since_moment

    vault = open_vault(args)
    found = retired(vault, since_moment(args.since))
    if args.json:
        emit_json([r.as_json() for r in found])
        return
    for entry in found:
        m = entry.memory
        say(f"{m.id}  {(entry.at or 'unknown date')[:10]}  {m.title}")
        say(f"            why: {entry.reason or '(no reason recorded)'}")
        p = entry.proposal
        if entry.on_import:
            say(f"            out of use in its source when imported: {m.source_ref}")
        elif entry.by_hand:
            say("            retired by hand (status edited in the file): no decision on record")
        elif p is None:
            say(f"            decision: {entry.proposal_id} (its proposal file is missing)")
        else:
            when = f" {p.decision.at[:10]}" if p.decision else ""
            said = f": {p.decision.note}" if p.decision and p.decision.note else ""
            say(f"            decision: {p.id} ({p.describe_origin()}), {p.state}{when}{said}")
    if not found:
        say("Nothing retired" + (f" since {args.since}." if args.since else "."))


def cmd_predicates(args: argparse.Namespace) -> None:
    from memoryctl.rules import exclusions, load_registry

    vault = open_vault(args)
    registry = load_registry(vault.config)
    both_ways = exclusions(registry)
    rows = [
        {
            "name": p.name,
            "cardinality": p.cardinality,
            "excludes": sorted(both_ways.get(p.name, ())),
        }
        for p in sorted(registry.values(), key=lambda p: p.name)
    ]
    if args.json:
        emit_json(rows)
        return
    for row in rows:
        excludes = f"  excludes {', '.join(row['excludes'])}" if row["excludes"] else ""
        say(f"{row['name']:<16} {row['cardinality']:<6}{excludes}")


# --- the parser ---------------------------------------------------------------------------


def _common() -> argparse.ArgumentParser:
    # The same --vault and --json as every command, for the subcommands of `review`.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--vault", metavar="PATH", help="the vault folder", default=argparse.SUPPRESS
    )
    common.add_argument("--json", action="store_true", help="print JSON", default=argparse.SUPPRESS)
    return common


def with_note(parser: argparse.ArgumentParser) -> None:
    """Every decision can carry a note, kept with it in the proposal file."""
    parser.add_argument("--note", help="a note kept with the decision")


def batch(parser: argparse.ArgumentParser) -> None:
    """--all, its --origin, and the --yes that answers its question without a terminal."""
    from memoryctl.proposals import ORIGINS

    parser.add_argument("--all", action="store_true", help="every pending proposal")
    parser.add_argument(
        "--origin", choices=ORIGINS, default=argparse.SUPPRESS, help="with --all: only this origin"
    )
    parser.add_argument("--yes", action="store_true", help="with --all: decide them without asking")


def register(command: Command) -> None:
    from memoryctl.proposals import ORIGINS
    from memoryctl.review_actions import PROPOSAL_WORDS

    p = command("propose", cmd_propose, "propose retiring, replacing or reviewing a memory")
    p.add_argument("action", choices=PROPOSAL_WORDS)
    p.add_argument("id", metavar="ID")
    text_argument(p, "replace: the new text (quotes are not needed), or -")
    p.add_argument("--reason", help="why, in words (required for retire and review)")
    p.add_argument(
        "--origin",
        choices=("agent", "user"),
        default="user",
        help="who proposes: you (the default) or an agent, named with --ref",
    )
    p.add_argument("--ref", metavar="REF", help="who or what proposes (an agent session)")

    p = command("check", cmd_check, "propose from retires, the predicate rules, expiry, lineage")
    p.add_argument(
        "--now", metavar="ISO", type=moment_value, help="check as of this moment (default: now)"
    )

    p = command("check-anchors", cmd_check_anchors, "check code anchors against the repository")
    p.add_argument("--repo", metavar="PATH", help="the code repository ([anchors] repo)")

    p = command("anchor", cmd_anchor, "point a memory at a file or symbol, with its hash")
    p.add_argument("id", metavar="ID")
    p.add_argument("spec", metavar="PATH[#SYMBOL]")
    p.add_argument("--repo", metavar="PATH", help="the code repository ([anchors] repo)")

    review = command("review", cmd_review_list, "list proposals, show, approve, decline, undo")
    review.add_argument("--state", choices=STATE_CHOICES, default="pending")
    review.add_argument("--origin", choices=ORIGINS)
    actions = review.add_subparsers(
        dest="review_action", metavar="ACTION", parser_class=type(review)
    )
    common = _common()

    def action(name: str, func: Callable[..., None], help: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help, description=help, parents=[common])
        sub.set_defaults(func=func)
        return sub

    # An action's --state and --origin are those of `review` itself, which may come
    # before the action: their defaults are suppressed so they never undo it.
    sub = action("list", cmd_review_list, "list proposals (pending by default)")
    sub.add_argument("--state", choices=STATE_CHOICES, default=argparse.SUPPRESS)
    sub.add_argument("--origin", choices=ORIGINS, default=argparse.SUPPRESS)
    sub = action("show", cmd_review_show, "a proposal: its targets, reason and diff")
    sub.add_argument("proposal", metavar="ID")
    sub = action("approve", cmd_review_approve, "approve a proposal (or --all of an --origin)")
    sub.add_argument("proposal", nargs="*", metavar="ID")
    with_note(sub)
    sub.add_argument("--force", action="store_true", help="even if a target changed since")
    batch(sub)
    sub = action("decline", cmd_review_decline, "decline a proposal; the memory stays as it is")
    sub.add_argument("proposal", nargs="*", metavar="ID")
    with_note(sub)
    batch(sub)
    sub = action("undo", cmd_review_undo, "reverse a decision and reopen the proposal")
    sub.add_argument("proposal", metavar="ID")
    with_note(sub)
    sub = action("log", cmd_review_log, "every decision, newest first")
    sub.add_argument("--since", metavar="DATE", type=moment_value)

    p = command("retire", cmd_retire, "retire a memory now (kept as history)")
    p.add_argument("id", metavar="ID")
    p.add_argument("--reason", help="why (required)")
    with_note(p)

    p = command("restore", cmd_restore, "restore a retired memory")
    p.add_argument("id", metavar="ID")
    with_note(p)

    p = command("confirm", cmd_confirm, "confirm a memory is current (sets checked)")
    p.add_argument("id", metavar="ID")
    with_note(p)

    p = command("replace", cmd_replace, "replace a memory's text in place (git keeps the old)")
    p.add_argument("id", metavar="ID")
    text_argument(p, "the new text (quotes are not needed), or - for stdin")
    p.add_argument("--editor", action="store_true", help="write the new text in $EDITOR")
    p.add_argument("--title", help="a new title as well")
    with_note(p)

    p = command("retired", cmd_retired, "every retired memory, why, and the decision behind it")
    p.add_argument("--since", metavar="DATE", type=moment_value)

    command("predicates", cmd_predicates, "the predicate registry the typed-fact rules use")
