"""The unit of work of a decision: every file it writes, and one commit.

A decision is either the person's verdict on a proposal (review.py) or an action the
person takes directly: retire, restore, confirm, replace (`act`). What each action does
to a memory is its object's, in review_actions.py; a `Change` gathers what the actions
and the decision write: the memory files, the proposal files (the decision, the
proposals it makes, the ones it makes moot), and commits them together. A direct action
is recorded as a proposal file that is already approved, so `memoryctl review log`
lists every decision in one place.
"""

from __future__ import annotations

import datetime as dt
import itertools
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as replaced_copy
from typing import Any

from memoryctl import lineage, review_actions
from memoryctl.memory import Memory
from memoryctl.moments import iso
from memoryctl.proposals import (
    BY_DECISION,
    Decision,
    Listing,
    Proposal,
    ProposalError,
    ProposalStore,
    Suggestion,
    decided_bytes,
    new_proposal_bytes,
    proposal_from_file,
    proposal_id,
)
from memoryctl.storage import gitrepo, notefile
from memoryctl.storage.atomic import current_sha
from memoryctl.storage.config import PROPOSALS_DIR
from memoryctl.storage.vault import Loaded, Vault

# --- one change: memory files, proposal files, one commit ---------------------------------


@dataclass
class Change:
    vault: Vault
    store: ProposalStore
    queue: Listing  # the proposals as they were when the change started
    now: dt.datetime
    filed: list[Proposal] = field(default_factory=list)
    withdrawn: list[Proposal] = field(default_factory=list)
    reopened: list[Proposal] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # lines for the commit message
    _notes: dict[str, tuple[Loaded, notefile.NoteFile]] = field(default_factory=dict)
    _files: dict[str, tuple[bytes, str | None]] = field(default_factory=dict)
    _keys: set[str] = field(default_factory=set)
    _ids: set[str] = field(default_factory=set)
    _written: dict[str, Proposal] = field(default_factory=dict)
    # How to make again each decision memoryctl takes of its own accord (a withdrawal, a
    # reopening) on a proposal's file as it is when the change is written.
    _again: dict[str, Callable[[Proposal, bytes], None]] = field(default_factory=dict)

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

    def add_file(self, relpath: str, data: bytes) -> None:
        """A new file of the vault (a memory an import makes) in this change's commit."""
        self._files[relpath] = (data, None)

    def _sha(self, memory: Memory) -> str | None:
        if memory.path in self._notes:
            return notefile.sha256(self._notes[memory.path][1].to_bytes())
        return current_sha(self.vault.root / memory.path)

    def _indexed_shas(
        self, targets: Sequence[str], files: Mapping[str, tuple[str, str]]
    ) -> dict[str, str]:
        shas = {}
        for target in targets:
            if target in files:
                path, sha = files[target]
                edited = self._notes.get(path)
                shas[target] = notefile.sha256(edited[1].to_bytes()) if edited else sha
        return shas

    def _new_file(
        self, suggestion: Suggestion, shas: dict[str, str], decision: Decision | None
    ) -> Proposal:
        pid = self.store.free_id(suggestion.key, self._ids)
        self._ids.add(pid)
        self._keys.add(suggestion.key)
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
        # Each target's hash as the index last read it: what the check judged. A file
        # changed since is flagged "changed since proposed", as it should be; reading
        # every target again took a tenth of a first check's time.
        files = self.vault.index.files_of({t for s in fresh for t in s.targets})
        made = [self._new_file(s, self._indexed_shas(s.targets, files), None) for s in fresh]
        self.filed += made
        return made

    def record(self, suggestion: Suggestion, memory: Memory, note: str | None) -> Proposal:
        """A decision the person made directly, filed as an approved proposal."""
        decision = Decision(iso(self.now), "approved", note)
        sha = self._sha(memory)
        return self._new_file(suggestion, {memory.id: sha} if sha else {}, decision)

    def decide(
        self, proposal: Proposal, raw: bytes, state: str, note: str | None, by: str | None = None
    ) -> Proposal:
        """Record a decision in a proposal's file (read just before, as `raw`)."""
        decision = Decision(iso(self.now), state, note, by)
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

    def withdraw(self, proposals: Iterable[Proposal], note: str, *, by: str) -> None:
        for proposal in proposals:
            if proposal.path in self._files or not proposal.is_pending:
                continue
            self._withdraw(*self.store.read(proposal), note, by)

    def _withdraw(self, proposal: Proposal, raw: bytes, note: str, by: str) -> None:
        if proposal.is_pending:
            self.withdrawn.append(self.decide(proposal, raw, "withdrawn", note, by))
            self._again[proposal.path] = lambda p, r: self._withdraw(p, r, note, by)

    def reopen(self, proposals: Iterable[Proposal], note: str) -> list[Proposal]:
        """Make these withdrawn proposals pending again, each as it is on disk now."""
        before = len(self.reopened)
        for proposal in proposals:
            if proposal.path in self._files or proposal.state != "withdrawn":
                continue
            self._reopen(*self.store.read(proposal), note, proposal.key)
        return self.reopened[before:]

    def _reopen(self, proposal: Proposal, raw: bytes, note: str, key: str) -> None:
        if proposal.state == "withdrawn" and proposal.key == key:
            self.reopened.append(self.decide(proposal, raw, "pending", note))
            self._again[proposal.path] = lambda p, r: self._reopen(p, r, note, key)

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

    def withdraw_lineage(self, ancestor: str, trigger: str, note: str) -> None:
        """Withdraw the pending lineage proposals one decision about `ancestor` made."""
        self.withdraw(lineage_from(self.queue.proposals, ancestor, trigger), note, by=BY_DECISION)

    def supersede(self, memory: Memory, actions: Sequence[str], note: str) -> None:
        """Withdraw pending proposals that ask only for what was just done to `memory`."""
        self.withdraw(
            [
                p
                for p in self.queue.proposals
                if p.is_pending and p.targets == (memory.id,) and p.action in actions
            ],
            note,
            by=BY_DECISION,
        )

    def commit(
        self, message: str | Callable[[], str], *, lock_wait: float | None = None
    ) -> str | None:
        """Write and commit everything this change holds, under the write lock. What
        another face wrote meanwhile is taken into account first, so `message` may be
        worded only then, from what is left (`filed`, `withdrawn`, `reopened`)."""
        with self.vault.writing(lock_wait):
            self._leave_out_filed_elsewhere()
            self._decide_again_where_changed()
            if not self._notes and not self._files:
                return None
            files = [(path, data, expected) for path, (data, expected) in self._files.items()]
            text = message if isinstance(message, str) else message()
            commit = self.vault.write_many(list(self._notes.values()), files, text)
        self.store.remember(list(self._written.values()))
        return commit

    def _decide_again_where_changed(self) -> None:
        """Under the write lock: a proposal this change withdraws or reopens of its own
        accord, whose file changed since the change read it (another face decided it, or
        the person edited it), is read again and decided again as it is now, or left as
        it is when the decision no longer applies (already withdrawn, declined by hand).
        So another face's write never makes this one fail, and what is written is always
        made from the file as it is, never over an edit memoryctl has not read."""
        for relpath, again in list(self._again.items()):
            expected = self._files[relpath][1]
            try:
                raw: bytes | None = (self.vault.root / relpath).read_bytes()
            except FileNotFoundError:
                raw = None
            if raw is not None and notefile.sha256(raw) == expected:
                continue
            del self._files[relpath], self._again[relpath]
            created = self._written.pop(relpath).created
            self.withdrawn[:] = [p for p in self.withdrawn if p.path != relpath]
            self.reopened[:] = [p for p in self.reopened if p.path != relpath]
            if raw is None:
                continue  # removed meanwhile: nothing left to decide
            try:
                proposal = proposal_from_file(relpath, raw, created)
            except ProposalError:
                continue  # the person's edit made it unreadable: theirs to mend
            again(proposal, raw)

    def _leave_out_filed_elsewhere(self) -> None:
        """Under the write lock: a new pending proposal that another process filed since
        this change read the queue is theirs, not filed twice. A proposal's id follows
        from its key, so its file is the one this change chose, or, when the other
        process wrote it while this change was choosing (and so chose the next free
        name), one of the names before it."""
        for relpath, proposal in list(self._written.items()):
            if self._files.get(relpath, (b"", ""))[1] is not None or not proposal.is_pending:
                continue
            if any(self._filed_there(slot, proposal) for slot in _slots(proposal.key, relpath)):
                del self._files[relpath], self._written[relpath]
                self.filed = [p for p in self.filed if p.path != relpath]

    def _filed_there(self, relpath: str, proposal: Proposal) -> bool:
        try:
            raw = (self.vault.root / relpath).read_bytes()
        except FileNotFoundError:
            return False
        try:
            theirs = proposal_from_file(relpath, raw, proposal.created)
        except ProposalError:
            return False  # not a proposal memoryctl can read: the write refuses it
        return theirs.key == proposal.key


def _slots(key: str, chosen: str) -> Iterator[str]:
    """The file names a proposal with this key may have, up to the one chosen."""
    for attempt in itertools.count():
        relpath = f"{PROPOSALS_DIR}/{proposal_id(key, attempt)}.md"
        yield relpath
        if relpath == chosen:
            return


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
    taken = review_actions.action(action)
    change = Change.start(vault, now)
    memory = vault.resolve(ref)
    loaded = vault.load(memory)
    words = reason or note or taken.by_the_person
    suggestion = Suggestion(
        action=taken.name,
        targets=(loaded.memory.id,),
        reason=words,
        origin="user",
        ref=DIRECT,
        trigger=f"{iso(now)} {secrets.token_hex(4)}",  # every direct decision is its own
        body=body if taken is review_actions.REPLACE else None,
    )
    record = change.record(suggestion, loaded.memory, note)
    request = review_actions.Request(record.id, words, body, title)
    taken.apply(change, loaded, request)
    subject = f"{taken.verb} {loaded.memory.title}"
    commit = change.commit(lambda: commit_message(subject, record, [loaded.memory], change))
    return Outcome(
        vault.index.get(loaded.memory.id),
        record,
        change.filed,
        change.withdrawn,
        change.notices,
        commit,
    )
