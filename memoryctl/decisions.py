"""Decisions about memories, and what each one writes.

A decision is either the person's verdict on a proposal (review.py) or an action the
person takes directly: retire, restore, confirm, replace. Either way the memory file
stays where it is and keeps its id: retiring sets `status: retired` and a `retired`
record, holding for review sets `status: needs_review` and a `needs_review` record,
replacing rewrites the body in place and adds a `replaced` entry naming the commit
that holds the old text. A direct action is recorded as a proposal file that is
already approved, so `memoryctl review log` lists every decision in one place.

Every decision is one `Change`: the memory files, the proposal files (the decision,
the proposals it makes, the ones it makes moot) and one git commit.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as replaced_copy
from typing import Any

from memoryctl import lineage
from memoryctl.memory import Memory, iso, moment
from memoryctl.proposals import (
    Decision,
    Listing,
    Proposal,
    ProposalStore,
    Suggestion,
    decided_bytes,
    new_proposal_bytes,
)
from memoryctl.storage import gitrepo, notefile
from memoryctl.storage.atomic import current_sha
from memoryctl.storage.config import PROPOSALS_DIR
from memoryctl.storage.vault import Loaded, Vault, VaultError

# --- what a decision writes into the memory -----------------------------------------------


def retire_changes(now: dt.datetime, decision_id: str, reason: str) -> dict[str, Any]:
    record = {"at": moment(iso(now)), "proposal": decision_id, "reason": reason}
    return {"status": "retired", "retired": record}


def hold_changes(now: dt.datetime, decision_id: str, reason: str) -> dict[str, Any]:
    record = {"at": moment(iso(now)), "proposal": decision_id, "reason": reason}
    return {"status": "needs_review", "needs_review": record}


def confirm_changes(now: dt.datetime) -> dict[str, Any]:
    return {"status": "active", "needs_review": None, "checked": moment(iso(now))}


def restore_changes() -> dict[str, Any]:
    return {"status": "active", "retired": None}


def release_changes() -> dict[str, Any]:
    """Undoing a hold: back to active, without claiming the memory was checked."""
    return {"status": "active", "needs_review": None}


def replaced_entries(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    value = data.get("replaced")
    if isinstance(value, dict):
        value = [value]
    return (
        [dict(item) for item in value if isinstance(item, dict)] if isinstance(value, list) else []
    )


def replace_changes(
    now: dt.datetime,
    data: Mapping[str, Any],
    *,
    commit: str | None,
    decision_id: str,
    title: str | None = None,
    undo_of: str | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"at": moment(iso(now))}
    if commit:
        entry["commit"] = commit
    if undo_of:
        entry["undo_of"] = undo_of  # the text `commit` holds is what that decision wrote
    else:
        entry["proposal"] = decision_id
    changes: dict[str, Any] = {
        "updated": moment(iso(now)),
        "checked": moment(iso(now)),
        "replaced": [*replaced_entries(data), entry],
    }
    if data.get("status") == "needs_review":
        changes.update(release_changes())
    if title:
        changes["title"] = title
    return changes


def decided_by(data: Mapping[str, Any], key: str) -> str | None:
    """The proposal named in a memory's `retired` or `needs_review` record."""
    record = data.get(key)
    if isinstance(record, dict) and record.get("proposal") is not None:
        return str(record["proposal"])
    return None


# --- one change: memory files, proposal files, one commit ---------------------------------


@dataclass
class Change:
    vault: Vault
    store: ProposalStore
    queue: Listing  # the proposals as they were when the change started
    now: dt.datetime
    filed: list[Proposal] = field(default_factory=list)
    withdrawn: list[Proposal] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # lines for the commit message
    _notes: dict[str, tuple[Loaded, notefile.NoteFile]] = field(default_factory=dict)
    _files: dict[str, tuple[bytes, str | None]] = field(default_factory=dict)
    _keys: set[str] = field(default_factory=set)
    _ids: set[str] = field(default_factory=set)
    _written: dict[str, Proposal] = field(default_factory=dict)

    @classmethod
    def start(cls, vault: Vault, now: dt.datetime) -> Change:
        store = ProposalStore.of(vault)
        queue = store.load()
        change = cls(vault, store, queue, now)
        change._keys = {p.key for p in queue.proposals}
        change._ids = {p.id for p in queue.proposals}
        return change

    @property
    def edited_paths(self) -> set[str]:
        return set(self._notes)

    def edit(self, loaded: Loaded, changes: dict[str, Any], body: str | None = None) -> None:
        self._notes[loaded.memory.path] = (
            loaded,
            self.vault.changed_note(loaded, changes, body),
        )

    def _sha(self, memory: Memory) -> str | None:
        if memory.path in self._notes:
            return notefile.sha256(self._notes[memory.path][1].to_bytes())
        return current_sha(self.vault.root / memory.path)

    def _new_file(
        self, suggestion: Suggestion, targets: Mapping[str, Memory], decision: Decision | None
    ) -> Proposal:
        pid = self.store.free_id(suggestion.key, self._ids)
        self._ids.add(pid)
        self._keys.add(suggestion.key)
        shas = {
            t: sha for t in suggestion.targets if t in targets and (sha := self._sha(targets[t]))
        }
        relpath = f"{PROPOSALS_DIR}/{pid}.md"
        data = new_proposal_bytes(suggestion, pid, self.now, shas, decision)
        self._files[relpath] = (data, None)
        proposal = Proposal(
            id=pid,
            path=relpath,
            action=suggestion.action,
            targets=suggestion.targets,
            reason=suggestion.reason,
            origin=suggestion.origin,
            ref=suggestion.ref,
            created=iso(self.now),
            state=decision.state if decision else "pending",
            key=suggestion.key,
            target_sha=shas,
            decision=decision,
            history=(decision,) if decision else (),
            body=suggestion.body or "",
            sha=notefile.sha256(data),
        )
        self._written[relpath] = proposal
        return proposal

    def propose(self, suggestions: Sequence[Suggestion]) -> list[Proposal]:
        """File the suggestions that no proposal (in any state) has made yet."""
        fresh = [
            s for s in dict((s.key, s) for s in suggestions).values() if s.key not in self._keys
        ]
        if not fresh:
            return []
        targets = self.vault.index.get_many({t for s in fresh for t in s.targets})
        made = [self._new_file(s, targets, None) for s in fresh]
        self.filed += made
        return made

    def record(self, suggestion: Suggestion, memory: Memory, note: str | None) -> Proposal:
        """A decision the person made directly, filed as an approved proposal."""
        decision = Decision(iso(self.now), "approved", note)
        return self._new_file(suggestion, {memory.id: memory}, decision)

    def decide(self, proposal: Proposal, raw: bytes, state: str, note: str | None) -> Proposal:
        """Record a decision in a proposal's file (read just before, as `raw`)."""
        decision = Decision(iso(self.now), state, note)
        data = decided_bytes(proposal, raw, decision)
        self._files[proposal.path] = (data, proposal.sha)
        decided = replaced_copy(
            proposal,
            state=state,
            decision=None if state == "pending" else decision,
            history=(*proposal.history, decision),
            sha=notefile.sha256(data),
        )
        self._written[proposal.path] = decided
        return decided

    def withdraw(self, proposals: Iterable[Proposal], note: str) -> None:
        for proposal in proposals:
            if proposal.path in self._files or not proposal.is_pending:
                continue
            fresh, raw = self.store.read(proposal)
            if fresh.is_pending:
                self.withdrawn.append(self.decide(fresh, raw, "withdrawn", note))

    def previous_commit(self, memory: Memory) -> str | None:
        """The commit that holds a memory's text as it is now, committing an outside edit
        first so that the text being replaced is never lost."""
        root = self.vault.root
        if not self.vault.is_git:
            self.notices.append(
                f"{memory.path}: the vault is not a git repository, so the replaced text "
                "is not kept anywhere"
            )
            return None
        if not gitrepo.is_committed_clean(root, memory.path):
            if self.vault.config.autocommit:
                self.vault.commit(
                    [memory.path],
                    f"Record an edit of {memory.title} before replacing it\n\nmemory: {memory.id}",
                )
            else:
                self.notices.append(
                    f"{memory.path} has uncommitted changes and autocommit is off, so the "
                    "replaced text is not in any commit"
                )
                return None
        return gitrepo.last_commit(root, memory.path)

    def cascade(self, ancestor: Memory, event: str, trigger: str) -> list[Proposal]:
        """Propose review of everything derived from `ancestor` (not what this change edits)."""
        found = lineage.descendants([ancestor.id], self.vault.index.derived_children)
        if not found:
            return []
        memories = {
            mid: m
            for mid, m in self.vault.index.get_many(d.id for d in found).items()
            if m.path not in self._notes
        }
        return self.propose(
            lineage.lineage_suggestions(ancestor, found, memories, event=event, trigger=trigger)
        )

    def supersede(self, memory: Memory, actions: Sequence[str], note: str) -> None:
        """Withdraw pending proposals that ask only for what was just done to `memory`."""
        self.withdraw(
            [
                p
                for p in self.queue.proposals
                if p.is_pending and p.targets == (memory.id,) and p.action in actions
            ],
            note,
        )

    def commit(self, message: str) -> str | None:
        if not self._notes and not self._files:
            return None
        files = [(path, data, expected) for path, (data, expected) in self._files.items()]
        commit = self.vault.write_many(list(self._notes.values()), files, message)
        self.store.remember(list(self._written.values()))
        return commit


# --- applying an action to one memory -----------------------------------------------------


def apply_action(
    change: Change,
    action: str,
    loaded: Loaded,
    *,
    decision_id: str,
    reason: str,
    body: str | None = None,
    title: str | None = None,
) -> None:
    """What approving `action` (or taking it directly) does to one memory."""
    memory = loaded.memory
    data = loaded.note.data
    name = f"{memory.id} ({memory.title})"
    if memory.broken:
        raise VaultError(f"{memory.path} cannot be read as a memory; fix the file first")
    if action in ("retire", "needs_review", "replace", "confirm") and memory.status == "retired":
        if action == "retire":
            raise VaultError(f"{name} is already retired")
        raise VaultError(f"{name} is retired; restore it first (memoryctl restore {memory.id})")
    if action == "retire":
        change.edit(loaded, retire_changes(change.now, decision_id, reason))
        change.cascade(memory, f"was retired: {reason}", f"retired:{decision_id}")
        change.supersede(memory, ("retire", "needs_review"), f"{memory.id} was retired")
        if memory.pinned:
            change.notices.append(
                f"{name} is pinned: while it is retired it is left out of the agent's "
                f"context (its pin stays; memoryctl unpin {memory.id} drops it)"
            )
    elif action == "needs_review":
        if memory.status == "needs_review":
            raise VaultError(f"{name} is already held for review")
        change.edit(loaded, hold_changes(change.now, decision_id, reason))
        change.supersede(memory, ("needs_review",), f"{memory.id} is held for review")
        if memory.pinned:
            change.notices.append(
                f"{name} is pinned: it is left out of the agent's context until you "
                f"confirm it (memoryctl confirm {memory.id}) or replace it"
            )
    elif action == "replace":
        if body is None or not body.strip():
            raise VaultError("a replacement needs some text")
        if body.strip() == memory.body.strip() and not title:
            raise VaultError(f"the new text of {name} is the same as its current text")
        commit = change.previous_commit(memory)
        changes = replace_changes(
            change.now, data, commit=commit, decision_id=decision_id, title=title
        )
        change.edit(loaded, changes, body=body.strip("\n") + "\n")
        change.log.append(f"previous text of {memory.id}: {commit or 'not in git'}")
        change.cascade(memory, "was replaced with new text", f"replaced:{decision_id}")
        if memory.pinned:
            change.notices.append(
                f"{name} is pinned: the agent sees the new text from its next turn"
            )
    elif action == "confirm":
        change.edit(loaded, confirm_changes(change.now))
        change.supersede(memory, ("needs_review",), f"{memory.id} was confirmed")
    elif action == "restore":
        if memory.status != "retired":
            raise VaultError(f"{name} is not retired (it is {memory.status})")
        change.edit(loaded, restore_changes())
        retired_by = decided_by(data, "retired")
        change.withdraw(
            lineage_from(change.queue.proposals, memory.id, f"retired:{retired_by or ''}"),
            f"{memory.id} was restored",
        )
    else:
        raise VaultError(f"unknown action {action!r}")


def lineage_from(proposals: Iterable[Proposal], ancestor: str, trigger: str) -> list[Proposal]:
    """The pending lineage proposals one decision about `ancestor` made."""
    return [
        p
        for p in proposals
        if p.is_pending
        and p.origin == "lineage"
        and p.ref == ancestor
        and p.key.endswith("|" + trigger)
    ]


# --- direct actions -----------------------------------------------------------------------


@dataclass
class Outcome:
    memory: Memory | None
    proposal: Proposal  # the proposal decided, or the record of a direct action
    filed: list[Proposal]  # proposals the decision made (lineage)
    withdrawn: list[Proposal]  # proposals it made moot
    notices: list[str]
    commit: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "proposal": self.proposal.as_json(),
            "memory": self.memory.as_json() if self.memory else None,
            "proposed": [p.as_json() for p in self.filed],
            "withdrawn": [p.id for p in self.withdrawn],
            "notices": list(self.notices),
            "commit": self.commit,
        }


# The origin ref of a decision the person made directly, without a proposal.
DIRECT = "direct"

VERBS = {
    "retire": "Retire",
    "restore": "Restore",
    "confirm": "Confirm",
    "replace": "Replace",
    "needs_review": "Hold for review",
}


def commit_message(
    subject: str, proposal: Proposal, memories: Sequence[Memory], change: Change
) -> str:
    lines = [subject, "", f"proposal: {proposal.id}", f"action: {proposal.action}"]
    lines += [f"target: {m.id} {m.title}" for m in memories]
    lines.append(f"origin: {proposal.describe_origin()}")
    if proposal.reason:
        lines.append(f"reason: {proposal.reason}")
    if proposal.decision and proposal.decision.note:
        lines.append(f"note: {proposal.decision.note}")
    lines += change.log
    if change.filed:
        lines.append(f"proposed for review: {len(change.filed)} derived memories")
    if change.withdrawn:
        lines.append(f"withdrawn: {', '.join(p.id for p in change.withdrawn)}")
    return "\n".join(lines)


def act(
    vault: Vault,
    action: str,
    ref: str,
    *,
    now: dt.datetime,
    reason: str | None = None,
    note: str | None = None,
    body: str | None = None,
    title: str | None = None,
) -> Outcome:
    """Retire, restore, confirm or replace a memory directly: a decision already made."""
    change = Change.start(vault, now)
    memory = vault.resolve(ref)
    loaded = vault.load(memory)
    words = (
        reason
        or note
        or {
            "retire": "retired by the person",
            "restore": "restored by the person",
            "confirm": "confirmed by the person",
            "replace": "replaced by the person",
        }[action]
    )
    suggestion = Suggestion(
        action=action,
        targets=(loaded.memory.id,),
        reason=words,
        origin="user",
        ref=DIRECT,
        trigger=f"{iso(now)} {secrets.token_hex(4)}",  # every direct decision is its own
        body=body if action == "replace" else None,
    )
    record = change.record(suggestion, loaded.memory, note)
    apply_action(
        change, action, loaded, decision_id=record.id, reason=words, body=body, title=title
    )
    subject = f"{VERBS[action]} {loaded.memory.title}"
    commit = change.commit(commit_message(subject, record, [loaded.memory], change))
    return Outcome(
        vault.index.get(loaded.memory.id),
        record,
        change.filed,
        change.withdrawn,
        change.notices,
        commit,
    )
