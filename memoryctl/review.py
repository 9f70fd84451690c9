"""Deciding proposals: the review queue, what approving would change, approve, decline
and undo, proposing by hand, and the log of every decision.

Nothing leaves the agent's context without a decision the person can see. Approving
takes the proposal's action (one object per action, in review_actions.py) on its
targets and records the decision in the proposal's file, in one commit (a
`decisions.Change`). Declining records the decision and leaves the memory
alone; the same trigger never proposes it again, because the declined proposal keeps
its key. Undo reverses a decision and reopens the proposal.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memoryctl import review_actions
from memoryctl.decisions import DIRECT, Change, Outcome, commit_message
from memoryctl.memory import Memory
from memoryctl.moments import parse_moment
from memoryctl.proposals import (
    BY_PERSON,
    NoSuchProposal,
    Proposal,
    ProposalError,
    ProposalStore,
    Suggestion,
    UnreadableProposal,
    resolve,
)
from memoryctl.review_actions import Request, ReviewError
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault, VaultError

CHANGED = "changed since proposed: review again"

# --- what stops a decision -----------------------------------------------------------------


@dataclass(eq=False)
class NotPending(ReviewError):
    """The proposal was decided already: only undo reopens it."""

    proposal_id: str
    state: str
    decided_at: str | None = None
    note: str | None = None

    @classmethod
    def of(cls, proposal: Proposal) -> NotPending:
        decided = proposal.decision
        return cls(proposal.id, proposal.state, decided and decided.at, decided and decided.note)

    def text(self) -> str:
        when = f" on {self.decided_at[:10]}" if self.decided_at else ""
        note = f" ({self.note})" if self.note else ""
        return f"{self.proposal_id} was already {self.state}{when}{note}"


@dataclass(eq=False)
class NothingToApprove(ReviewError):
    """The file records a direct decision (a restore, a confirmation): nobody proposed it."""

    proposal_id: str
    action: str

    def text(self) -> str:
        return f"{self.proposal_id} records a decision already made; nothing to approve"


@dataclass(eq=False)
class Unresolved(ReviewError):
    """A target of the proposal no longer exists; the proposal can only be declined."""

    proposal_id: str
    missing: tuple[str, ...]

    def text(self) -> str:
        return f"{self.proposal_id} is unresolved: {', '.join(self.missing)} no longer exists"


@dataclass(eq=False)
class SharedId(ReviewError):
    """Several files carry the id the proposal targets; which one is meant is unclear."""

    proposal_id: str
    memory_id: str

    def text(self) -> str:
        return f"id {self.memory_id} is used by several files, so {self.proposal_id} waits"


@dataclass(eq=False)
class ChangedSinceProposed(ReviewError):
    """A target's file changed after the proposal was made: the person looks again."""

    proposal_id: str
    path: str
    proposed_sha: str
    current_sha: str

    def text(self) -> str:
        return f"{self.proposal_id}: {CHANGED}. {self.path} changed after the proposal was made"


@dataclass(eq=False)
class AlreadyDone(ReviewError):
    """The memory is already as approving would leave it."""

    proposal_id: str
    memory_id: str
    title: str
    status: str

    def text(self) -> str:
        return (
            f"{self.proposal_id} asks for what is already done: {self.memory_id} "
            f"({self.title}) is {self.status.replace('_', ' ')}"
        )


@dataclass(eq=False)
class NothingToUndo(ReviewError):
    proposal_id: str

    def text(self) -> str:
        return f"{self.proposal_id} is pending: there is no decision to undo"


@dataclass(eq=False)
class DirectUndone(ReviewError):
    """A decision made directly was undone already; nobody proposed it, so it does not
    reopen: the person takes the action again."""

    proposal_id: str
    action: str

    def text(self) -> str:
        return (
            f"{self.proposal_id} records a decision made directly, and it was undone; "
            "to make it again, take the action again"
        )


@dataclass(eq=False)
class NotProposable(ReviewError):
    action: str

    def text(self) -> str:
        *some, last = review_actions.PROPOSAL_WORDS
        return f"cannot propose {self.action!r}; propose {', '.join(some)} or {last}"


@dataclass(eq=False)
class ReasonRequired(ReviewError):
    action: str

    def text(self) -> str:
        return "say why: the person decides on it"


@dataclass(eq=False)
class NotADate(ReviewError):
    value: str

    def text(self) -> str:
        return f"{self.value!r} is not a date (use ISO 8601, like 2026-11-01)"


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
                raise UnreadableProposal(path, problem) from None
        raise
    return items(vault, [proposal])[0]


# --- what approving would change ----------------------------------------------------------


def _request(proposal: Proposal) -> Request:
    return Request(proposal.id, proposal.reason, proposal.body or None)


def preview(vault: Vault, item: Item, now: dt.datetime) -> dict[str, str]:
    """For each target, a unified diff of its file now and after approval."""
    proposal = item.proposal
    taken = review_actions.ACTIONS.get(proposal.action)
    diffs: dict[str, str] = {}
    for target in item.targets:
        if target.memory is None:
            diffs[target.id] = f"(unresolved: {target.id} no longer exists)\n"
            continue
        if taken is None or not taken.proposable:
            continue
        loaded = vault.load(target.memory)
        before = loaded.note.to_text()
        after = taken.preview(vault, loaded, now, _request(proposal)).to_text()
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


def _open(vault: Vault, ref: str, now: dt.datetime) -> tuple[Change, Proposal, bytes]:
    change = Change.start(vault, now)
    try:
        proposal = resolve(change.queue.proposals, ref)
    except NoSuchProposal:
        find(vault, ref)  # names a malformed file, if that is what ref points at
        raise
    fresh, raw = change.store.read(proposal)
    return change, fresh, raw


def _targets(vault: Vault, proposal: Proposal) -> list[Memory]:
    found = vault.index.get_many(proposal.targets)
    missing = [t for t in proposal.targets if t not in found]
    if missing:
        raise Unresolved(proposal.id, tuple(missing))
    for target in proposal.targets:
        if len([m for m in vault.index.resolve(target) if m.id == target]) > 1:
            raise SharedId(proposal.id, target)
    return [found[t] for t in proposal.targets]


def _subject(verb: str, proposal: Proposal, memories: Sequence[Memory]) -> str:
    titles = ", ".join(m.title for m in memories) or ", ".join(proposal.targets)
    return f"{verb} {proposal.id}: {review_actions.verb(proposal.action).lower()} {titles}"


def approve(
    vault: Vault, ref: str, *, now: dt.datetime, note: str | None = None, force: bool = False
) -> Outcome:
    """Approve a pending proposal: its action is taken on every target, and the decision
    recorded in its file, in one commit. `force` approves it even when a target changed
    after it was proposed (the person has looked at the file as it is now)."""
    change, proposal, raw = _open(vault, ref, now)
    if not proposal.is_pending:
        raise NotPending.of(proposal)
    taken = review_actions.action(proposal.action)
    if not taken.proposable:
        raise NothingToApprove(proposal.id, proposal.action)
    memories = _targets(vault, proposal)
    loadeds = [vault.load(m) for m in memories]
    if not force:
        for loaded in loadeds:
            recorded = proposal.target_sha.get(loaded.memory.id)
            if recorded and recorded != loaded.sha:
                raise ChangedSinceProposed(proposal.id, loaded.memory.path, recorded, loaded.sha)
    for m in (loaded.memory for loaded in loadeds):
        if taken.fulfilled(m):
            raise AlreadyDone(proposal.id, m.id, m.title, m.status)
    decided = change.decide(proposal, raw, "approved", note)
    for loaded in loadeds:
        taken.apply(change, loaded, _request(proposal))
    return _committed(vault, change, "Approve", decided, decided, memories)


def decline(vault: Vault, ref: str, *, now: dt.datetime, note: str | None = None) -> Outcome:
    change, proposal, raw = _open(vault, ref, now)
    if not proposal.is_pending:
        raise NotPending.of(proposal)
    memories = list(vault.index.get_many(proposal.targets).values())
    decided = change.decide(proposal, raw, "declined", note)
    commit = change.commit(
        lambda: commit_message(_subject("Decline", decided, memories), decided, memories, change)
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
) -> tuple[list[Outcome], list[tuple[Proposal, VaultError]]]:
    """Approve every pending proposal (of one origin); each is its own decision and commit.

    A proposal that cannot be approved (unresolved, changed since proposed, already
    done) is skipped with what stopped it, and the others go ahead.
    """
    return _each_pending(
        vault, origin, lambda ref: approve(vault, ref, now=now, note=note, force=force)
    )


def decline_all(
    vault: Vault, *, now: dt.datetime, origin: str | None = None, note: str | None = None
) -> tuple[list[Outcome], list[tuple[Proposal, VaultError]]]:
    """Decline every pending proposal (of one origin); each is its own decision and commit.
    No memory is touched."""
    return _each_pending(vault, origin, lambda ref: decline(vault, ref, now=now, note=note))


def _each_pending(
    vault: Vault, origin: str | None, decide: Callable[[str], Outcome]
) -> tuple[list[Outcome], list[tuple[Proposal, VaultError]]]:
    chosen = [i.proposal for i in queue(vault, origin=origin).items]
    done: list[Outcome] = []
    skipped: list[tuple[Proposal, VaultError]] = []
    for proposal in chosen:
        try:
            done.append(decide(proposal.id))
        except VaultError as error:
            skipped.append((proposal, error))
    return done, skipped


def undo(vault: Vault, ref: str, *, now: dt.datetime, note: str | None = None) -> Outcome:
    """Reverse a decision: a declined or withdrawn proposal is pending again; an approved
    one has its change reversed first. A decision made directly (origin user) is
    withdrawn rather than left waiting: nobody proposed it."""
    change, proposal, raw = _open(vault, ref, now)
    if proposal.is_pending:
        raise NothingToUndo(proposal.id)
    memories = list(vault.index.get_many(proposal.targets).values())
    direct = proposal.origin == "user" and proposal.ref == DIRECT
    if direct and proposal.state != "approved":
        raise DirectUndone(proposal.id, proposal.action)
    if proposal.state == "approved":
        taken = review_actions.action(proposal.action)
        for memory in memories:
            taken.reverse(change, vault, vault.load(memory), proposal.id)
    state = "withdrawn" if direct else "pending"
    decided = change.decide(proposal, raw, state, note or "undone", BY_PERSON if direct else None)
    return _committed(vault, change, "Undo", proposal, decided, memories)


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
        raise NotADate(text) from None


# --- proposing by hand (an agent, a script, the person) -----------------------------------


def suggestion_for(
    vault: Vault,
    action: str,
    ref: str,
    *,
    reason: str | None = None,
    body: str | None = None,
    origin: str = "agent",
    origin_ref: str | None = None,
) -> tuple[Memory, Suggestion]:
    """The proposal asked for, checked against the memory as it is now (nothing is
    written): a typed error says what stops it."""
    taken = review_actions.by_word(action)
    if taken is None or not taken.proposable or not taken.by_hand:
        raise NotProposable(action)
    memory = vault.resolve(ref)
    reason = (reason or "").strip()
    if taken is review_actions.REPLACE:
        taken.guard(memory, Request("", reason, body))
        assert body is not None  # the guard refuses a replacement without text
        reason = reason or "new text proposed"
        trigger = "text " + notefile.sha256(body.strip().encode("utf-8"))[:16]
        body = body.strip("\n") + "\n"
    else:
        if not reason:
            raise ReasonRequired(taken.name)
        taken.guard(memory, Request("", reason))
        trigger = " ".join(reason.casefold().split())
        body = None
    suggestion = Suggestion(
        action=taken.name,
        targets=(memory.id,),
        reason=reason,
        origin=origin,
        ref=origin_ref,
        trigger=trigger,
        body=body,
    )
    return memory, suggestion


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

    `action` is an action's name or word (`review` holds for review). `trailer` ends
    the commit message (an agent's name and tool, say).

    The same proposal (same action, memory, origin and reason, or the same new text)
    is filed once: asking again returns the existing one, in whatever state it is.
    """
    memory, suggestion = suggestion_for(
        vault, action, ref, reason=reason, body=body, origin=origin, origin_ref=origin_ref
    )
    # Under the write lock from reading the queue to the commit: two agents proposing
    # the same thing at once file it once, and both are told which it is.
    with vault.writing():
        change = Change.start(vault, now)
        existing = change.queue.by_key().get(suggestion.key)
        if existing is not None:
            return existing, False
        [proposal] = change.propose([suggestion])
        verb = review_actions.verb(suggestion.action).lower()
        change.commit(
            f"Propose: {verb} {memory.title}\n\nproposal: {proposal.id}\n"
            f"action: {proposal.action}\ntarget: {memory.id} {memory.title}\n"
            f"origin: {proposal.describe_origin()}\nreason: {suggestion.reason}"
            + (f"\n\n{trailer}" if trailer else "")
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
        lambda: commit_message(_subject(verb, named, memories), decided, memories, change)
    )
    return Outcome(
        vault.index.get(memories[0].id) if len(memories) == 1 else None,
        decided,
        change.filed,
        change.withdrawn,
        change.notices,
        commit,
    )
