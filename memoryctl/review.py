"""Deciding proposals: the review queue, what approving would change, approve, decline
and undo, and the log of every decision.

Nothing leaves the agent's context without a decision the person can see. Approving
applies the proposal (decisions.apply_action) and records the decision in the
proposal's file, in one commit. Declining records the decision and leaves the memory
alone; the same trigger never proposes it again, because the declined proposal keeps
its key. Undo reverses a decision and reopens the proposal.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memoryctl.decisions import (
    DIRECT,
    VERBS,
    Change,
    Outcome,
    apply_action,
    commit_message,
    decided_by,
    hold_changes,
    lineage_from,
    release_changes,
    replace_changes,
    replaced_entries,
    restore_changes,
    retire_changes,
)
from memoryctl.memory import Memory, parse_moment
from memoryctl.proposals import (
    ACTIONS,
    Proposal,
    ProposalError,
    ProposalStore,
    Suggestion,
    resolve,
)
from memoryctl.storage import gitrepo, notefile
from memoryctl.storage.vault import Vault, VaultError

CHANGED = "changed since proposed: review again"

# --- the queue ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    id: str
    memory: Memory | None  # None: the memory no longer exists, the proposal is unresolved
    changed: bool  # its file changed after the proposal was made

    def as_json(self) -> dict[str, Any]:
        m = self.memory
        return {
            "id": self.id,
            "title": m.title if m else None,
            "path": m.path if m else None,
            "status": m.status if m else None,
            "pinned": bool(m and m.pinned),
            "unresolved": m is None,
            "changed_since_proposed": self.changed,
        }


@dataclass(frozen=True)
class Item:
    """A proposal with what is known of its targets now."""

    proposal: Proposal
    targets: tuple[Target, ...]

    @property
    def unresolved(self) -> bool:
        return any(t.memory is None for t in self.targets)

    @property
    def changed(self) -> bool:
        return any(t.changed for t in self.targets)

    @property
    def pinned(self) -> bool:
        return any(t.memory is not None and t.memory.pinned for t in self.targets)

    def flags(self) -> list[str]:
        flags = []
        if self.unresolved:
            missing = ", ".join(t.id for t in self.targets if t.memory is None)
            flags.append(f"unresolved: {missing} no longer exists")
        if self.changed and self.proposal.is_pending:
            flags.append(CHANGED)
        if self.pinned:
            flags.append("targets a pinned memory")
        return flags

    def as_json(self) -> dict[str, Any]:
        return {
            **self.proposal.as_json(),
            "targets": [t.as_json() for t in self.targets],
            "unresolved": self.unresolved,
            "changed_since_proposed": self.changed,
            "pinned": self.pinned,
            "flags": self.flags(),
        }


def items(vault: Vault, proposals: Sequence[Proposal]) -> list[Item]:
    ids = list(dict.fromkeys(t for p in proposals for t in p.targets))
    memories = vault.index.get_many(ids)
    shas = vault.index.file_shas(ids)
    result = []
    for proposal in proposals:
        targets = []
        for tid in proposal.targets:
            memory = memories.get(tid)
            recorded = proposal.target_sha.get(tid)
            changed = bool(memory and recorded and shas.get(tid) not in (None, recorded))
            targets.append(Target(tid, memory, changed))
        result.append(Item(proposal, tuple(targets)))
    return result


@dataclass
class Queue:
    items: list[Item]
    problems: list[tuple[str, str]]  # malformed proposal files: (path, why), skipped


def queue(vault: Vault, *, state: str | None = "pending", origin: str | None = None) -> Queue:
    """The proposals in one state (None: all), oldest first, with their targets."""
    loaded = ProposalStore.of(vault).load()
    chosen = [
        p
        for p in loaded.proposals
        if (state is None or p.state == state) and (origin is None or p.origin == origin)
    ]
    return Queue(items(vault, chosen), loaded.problems)


def find(vault: Vault, ref: str) -> Item:
    loaded = ProposalStore.of(vault).load()
    try:
        proposal = resolve(loaded.proposals, ref)
    except ProposalError:
        for path, problem in loaded.problems:
            stem = path.rsplit("/", 1)[-1][:-3]
            if ref in (path, stem) or (ref and stem.startswith(ref)):
                raise ProposalError(f"{path} cannot be read: {problem}; fix the file") from None
        raise
    return items(vault, [proposal])[0]


# --- what approving would change ----------------------------------------------------------


def preview(vault: Vault, item: Item, now: dt.datetime) -> dict[str, str]:
    """For each target, a unified diff of its file now and after approval."""
    proposal = item.proposal
    diffs: dict[str, str] = {}
    for target in item.targets:
        if target.memory is None:
            diffs[target.id] = f"(unresolved: {target.id} no longer exists)\n"
            continue
        loaded = vault.load(target.memory)
        body = None
        if proposal.action == "retire":
            changes = retire_changes(now, proposal.id, proposal.reason)
        elif proposal.action == "needs_review":
            changes = hold_changes(now, proposal.id, proposal.reason)
        elif proposal.action == "replace":
            commit = gitrepo.last_commit(vault.root, loaded.memory.path) if vault.is_git else None
            changes = replace_changes(now, loaded.note.data, commit=commit, decision_id=proposal.id)
            body = proposal.body.strip("\n") + "\n"
        else:
            continue
        before = loaded.note.to_text()
        after = vault.changed_note(loaded, changes, body).to_text()
        path = loaded.memory.path
        diffs[target.id] = "".join(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=f"a/{path}",
                tofile=f"b/{path}",
            )
        )
    return diffs


# --- deciding -----------------------------------------------------------------------------


def explain_state(proposal: Proposal) -> str:
    """Why a proposal cannot be decided again, and how to reopen it."""
    when = f" on {proposal.decision.at[:10]}" if proposal.decision else ""
    note = f" ({proposal.decision.note})" if proposal.decision and proposal.decision.note else ""
    return (
        f"{proposal.id} was already {proposal.state}{when}{note}; "
        f"memoryctl review undo {proposal.id} reopens it"
    )


def _open(vault: Vault, ref: str, now: dt.datetime) -> tuple[Change, Proposal, bytes]:
    change = Change.start(vault, now)
    try:
        proposal = resolve(change.queue.proposals, ref)
    except ProposalError:
        find(vault, ref)  # names a malformed file, if that is what ref points at
        raise
    fresh, raw = change.store.read(proposal)
    return change, fresh, raw


def _targets(vault: Vault, proposal: Proposal) -> list[Memory]:
    found = vault.index.get_many(proposal.targets)
    missing = [t for t in proposal.targets if t not in found]
    if missing:
        raise VaultError(
            f"{proposal.id} is unresolved: {', '.join(missing)} no longer exists; "
            f"decline it (memoryctl review decline {proposal.id})"
        )
    for target in proposal.targets:
        if len([m for m in vault.index.resolve(target) if m.id == target]) > 1:
            raise VaultError(
                f"id {target} is used by several files; run memoryctl doctor, then decide "
                f"{proposal.id}"
            )
    return [found[t] for t in proposal.targets]


def _subject(verb: str, proposal: Proposal, memories: Sequence[Memory]) -> str:
    titles = ", ".join(m.title for m in memories) or ", ".join(proposal.targets)
    return f"{verb} {proposal.id}: {VERBS.get(proposal.action, proposal.action).lower()} {titles}"


def approve(
    vault: Vault, ref: str, *, now: dt.datetime, note: str | None = None, force: bool = False
) -> Outcome:
    change, proposal, raw = _open(vault, ref, now)
    if not proposal.is_pending:
        raise VaultError(explain_state(proposal))
    if proposal.action not in ACTIONS:
        raise VaultError(f"{proposal.id} records a decision already made; nothing to approve")
    memories = _targets(vault, proposal)
    loadeds = [vault.load(m) for m in memories]
    if not force:
        for loaded in loadeds:
            recorded = proposal.target_sha.get(loaded.memory.id)
            if recorded and recorded != loaded.sha:
                raise VaultError(
                    f"{proposal.id}: {CHANGED}. {loaded.memory.path} changed after the "
                    f"proposal was made; look at it (memoryctl review show {proposal.id}), "
                    "then approve with --force"
                )
    for loaded in loadeds:
        done = {"retire": "retired", "needs_review": "needs_review"}.get(proposal.action)
        if done and loaded.memory.status == done:
            raise VaultError(
                f"{proposal.id} asks for what is already done: {loaded.memory.id} "
                f"({loaded.memory.title}) is {done.replace('_', ' ')}; decline it "
                f"(memoryctl review decline {proposal.id})"
            )
    decided = change.decide(proposal, raw, "approved", note)
    for loaded in loadeds:
        apply_action(
            change,
            proposal.action,
            loaded,
            decision_id=proposal.id,
            reason=proposal.reason,
            body=proposal.body,
        )
    return _committed(vault, change, "Approve", decided, decided, memories)


def decline(vault: Vault, ref: str, *, now: dt.datetime, note: str | None = None) -> Outcome:
    change, proposal, raw = _open(vault, ref, now)
    if not proposal.is_pending:
        raise VaultError(explain_state(proposal))
    memories = list(vault.index.get_many(proposal.targets).values())
    decided = change.decide(proposal, raw, "declined", note)
    commit = change.commit(
        commit_message(_subject("Decline", decided, memories), decided, memories, change)
    )
    notices = [
        f"{m.id} ({m.title}) is pinned: it stays as it is, in the agent's context"
        for m in memories
        if m.pinned
    ]
    return Outcome(None, decided, [], [], notices, commit)


def approve_all(
    vault: Vault,
    *,
    now: dt.datetime,
    origin: str | None = None,
    note: str | None = None,
    force: bool = False,
) -> tuple[list[Outcome], list[tuple[Proposal, str]]]:
    """Approve every pending proposal (of one origin); each is its own decision and commit.

    A proposal that cannot be approved (unresolved, changed since proposed, already
    done) is skipped with the reason, and the others go ahead.
    """
    chosen = [i.proposal for i in queue(vault, origin=origin).items]
    done: list[Outcome] = []
    skipped: list[tuple[Proposal, str]] = []
    for proposal in chosen:
        try:
            done.append(approve(vault, proposal.id, now=now, note=note, force=force))
        except VaultError as error:
            skipped.append((proposal, str(error)))
    return done, skipped


def undo(vault: Vault, ref: str, *, now: dt.datetime, note: str | None = None) -> Outcome:
    """Reverse a decision: a declined or withdrawn proposal is pending again; an approved
    one has its change reversed first. A decision made directly (origin user) is
    withdrawn rather than left waiting: nobody proposed it."""
    change, proposal, raw = _open(vault, ref, now)
    if proposal.is_pending:
        raise VaultError(f"{proposal.id} is pending: there is no decision to undo")
    memories = list(vault.index.get_many(proposal.targets).values())
    direct = proposal.origin == "user" and proposal.ref == DIRECT
    if direct and proposal.state != "approved":
        raise VaultError(
            f"{proposal.id} records a decision made directly, and it was undone; to make it "
            f"again, run the command again (memoryctl {proposal.action} ...)"
        )
    if proposal.state == "approved":
        if proposal.action == "restore":
            raise VaultError(
                f"{proposal.id} restored a memory; to undo it, retire the memory again "
                "(memoryctl retire ID --reason R)"
            )
        if proposal.action == "confirm":
            raise VaultError(
                f"{proposal.id} confirmed a memory; to hold it for review again, propose it "
                "(memoryctl propose review ID --reason R)"
            )
        for memory in memories:
            _reverse(change, vault, proposal, memory)
    state = "withdrawn" if direct else "pending"
    decided = change.decide(proposal, raw, state, note or "undone")
    return _committed(vault, change, "Undo", proposal, decided, memories)


def _reverse(change: Change, vault: Vault, proposal: Proposal, memory: Memory) -> None:
    loaded = vault.load(memory)
    data = loaded.note.data
    current = loaded.memory
    name = f"{current.id} ({current.title})"
    if proposal.action == "retire":
        if current.status == "retired" and decided_by(data, "retired") == proposal.id:
            change.edit(loaded, restore_changes())
            change.withdraw(
                lineage_from(change.queue.proposals, current.id, f"retired:{proposal.id}"),
                f"{proposal.id} was undone",
            )
        else:
            change.notices.append(f"{name} is no longer retired by {proposal.id}; left as it is")
    elif proposal.action == "needs_review":
        if current.status == "needs_review" and decided_by(data, "needs_review") == proposal.id:
            change.edit(loaded, release_changes())
        else:
            change.notices.append(
                f"{name} is no longer held for review by {proposal.id}; left as it is"
            )
    elif proposal.action == "replace":
        entries = replaced_entries(data)
        last = entries[-1] if entries else {}
        if str(last.get("proposal")) != proposal.id:
            raise VaultError(
                f"{name} was replaced again after {proposal.id}; undo by hand "
                f"(memoryctl history {current.id} shows every version)"
            )
        commit = last.get("commit")
        old = gitrepo.show_file(vault.root, str(commit), current.path) if commit else None
        if old is None:
            raise VaultError(
                f"the text {proposal.id} replaced is not in git, so it cannot be put back"
            )
        try:
            before = notefile.parse_text(old)
        except notefile.NoteError as error:
            raise VaultError(f"the old text of {current.path} cannot be read: {error}") from None
        previous = change.previous_commit(current)
        title = before.data.get("title")
        changes = replace_changes(
            change.now,
            data,
            commit=previous,
            decision_id=proposal.id,
            title=str(title) if title and title != data.get("title") else None,
            undo_of=proposal.id,
        )
        change.edit(loaded, changes, body=before.body.lstrip("\r\n"))
        change.withdraw(
            lineage_from(change.queue.proposals, current.id, f"replaced:{proposal.id}"),
            f"{proposal.id} was undone",
        )


# --- the log ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogEntry:
    at: str
    state: str  # approved, declined, withdrawn, or pending (reopened)
    note: str | None
    proposal: Proposal

    def as_json(self) -> dict[str, Any]:
        p = self.proposal
        return {
            "at": self.at,
            "decision": "reopened" if self.state == "pending" else self.state,
            "note": self.note,
            "proposal": p.id,
            "action": p.action,
            "targets": list(p.targets),
            "origin": {"kind": p.origin, "ref": p.ref},
            "reason": p.reason,
        }


def decision_log(proposals: Iterable[Proposal], since: str | None = None) -> list[LogEntry]:
    """Every decision ever recorded, newest first."""
    entries = []
    for proposal in proposals:
        history = proposal.history or ((proposal.decision,) if proposal.decision else ())
        for position, decision in enumerate(history):
            if decision is not None and (since is None or decision.at >= since):
                entry = LogEntry(decision.at, decision.state, decision.note, proposal)
                entries.append(((decision.at, proposal.id, position), entry))
    # Within one second, a proposal's own decisions keep their order.
    return [entry for _, entry in sorted(entries, key=lambda e: e[0], reverse=True)]


def since_moment(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return parse_moment(text)
    except ValueError:
        raise VaultError(
            f"--since {text!r} is not a date (use ISO 8601, like 2026-11-01)"
        ) from None


# --- proposing by hand (an agent, a script, the person) -----------------------------------


def propose(
    vault: Vault,
    action: str,
    ref: str,
    *,
    now: dt.datetime,
    reason: str | None = None,
    body: str | None = None,
    origin: str = "agent",
    origin_ref: str | None = None,
    trailer: str | None = None,
) -> tuple[Proposal, bool]:
    """File a proposal for one memory; (the proposal, whether it is new).

    `trailer` ends the commit message (an agent's name and tool, say).

    The same proposal (same action, memory, origin and reason, or the same new text)
    is filed once: asking again returns the existing one, in whatever state it is.
    """
    if action not in ACTIONS:
        raise VaultError(f"cannot propose {action!r}; propose retire, replace or review")
    memory = vault.resolve(ref)
    name = f"{memory.id} ({memory.title})"
    reason = (reason or "").strip()
    if action == "replace":
        if not body or not body.strip():
            raise VaultError("a replacement needs the new text (BODY, or - for stdin)")
        if body.strip() == memory.body.strip():
            raise VaultError(f"the new text of {name} is the same as its current text")
        reason = reason or "new text proposed"
        trigger = "text " + notefile.sha256(body.strip().encode("utf-8"))[:16]
    else:
        if not reason:
            raise VaultError("say why with --reason; the person decides on it")
        trigger = " ".join(reason.casefold().split())
        body = None
    if memory.status == "retired":
        raise VaultError(f"{name} is already retired")
    if action == "needs_review" and memory.status == "needs_review":
        raise VaultError(f"{name} is already held for review")
    suggestion = Suggestion(
        action=action,
        targets=(memory.id,),
        reason=reason,
        origin=origin,
        ref=origin_ref,
        trigger=trigger,
        body=body.strip("\n") + "\n" if body else None,
    )
    change = Change.start(vault, now)
    existing = change.queue.by_key().get(suggestion.key)
    if existing is not None:
        return existing, False
    [proposal] = change.propose([suggestion])
    verb = VERBS.get(action, action).lower()
    change.commit(
        f"Propose: {verb} {memory.title}\n\nproposal: {proposal.id}\naction: {action}\n"
        f"target: {memory.id} {memory.title}\norigin: {proposal.describe_origin()}\n"
        f"reason: {reason}" + (f"\n\n{trailer}" if trailer else "")
    )
    return proposal, True


def _committed(
    vault: Vault,
    change: Change,
    verb: str,
    named: Proposal,
    decided: Proposal,
    memories: list[Memory],
) -> Outcome:
    """Commit one decision and say what it did."""
    commit = change.commit(
        commit_message(_subject(verb, named, memories), decided, memories, change)
    )
    return Outcome(
        vault.index.get(memories[0].id) if len(memories) == 1 else None,
        decided,
        change.filed,
        change.withdrawn,
        change.notices,
        commit,
    )
