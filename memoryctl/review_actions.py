"""What a decision does to a memory: retire, hold for review, replace, confirm, restore.

Each is one object that owns, in one place:

- its words: `name` in a proposal file, `word` as a person or an agent types it, `verb`
  for a heading or a commit subject, `past` for what was done;
- its guard: whether it can be taken on a memory as it is now;
- its frontmatter changes, and what else taking it sets off (a cascade to what was
  derived from the memory, the pending proposals it makes moot, a notice);
- its preview: the file approving would write, without writing it;
- its reverse: what undoing an approval of it writes.

The memory file stays where it is and keeps its id: retiring sets `status: retired`
and a `retired` record, holding for review sets `status: needs_review` and a
`needs_review` record, replacing rewrites the body in place and adds a `replaced` entry
naming the commit that holds the old text.

An action writes nothing itself: it asks the unit of work it is part of (`Work`, which
`decisions.Change` is) to edit a file, propose, withdraw. Its errors are typed and carry
data; their text names no command of any face, so each face words them for its reader.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from memoryctl import lifecycle
from memoryctl.memory import DecisionRecord, Memory
from memoryctl.moments import iso, moment
from memoryctl.storage import gitrepo, notefile
from memoryctl.storage.vault import Loaded, Vault, VaultError

# --- errors -------------------------------------------------------------------------------


@dataclass(eq=False)
class ReviewError(VaultError):
    """A decision the review core refuses. Each subclass carries what stops it; its text is
    a plain sentence that names no command, which each face may add its advice to."""

    def __post_init__(self) -> None:
        super().__init__(self.text())

    def text(self) -> str:
        raise NotImplementedError


def named(memory_id: str, title: str) -> str:
    return f"{memory_id} ({title})"


@dataclass(eq=False)
class Unreadable(ReviewError):
    path: str

    def text(self) -> str:
        return f"{self.path} cannot be read as a memory; fix the file first"


@dataclass(eq=False)
class MemoryRefused(ReviewError):
    """An action refused for the state of one memory."""

    memory_id: str
    title: str
    status: str
    action: str

    @classmethod
    def about(cls, memory: Memory, action: str) -> MemoryRefused:
        return cls(memory.id, memory.title, memory.status, action)

    @property
    def name(self) -> str:
        return named(self.memory_id, self.title)


class AlreadyRetired(MemoryRefused):
    def text(self) -> str:
        return f"{self.name} is already retired"


class IsRetired(MemoryRefused):
    """Only restoring can be done to a retired memory."""

    def text(self) -> str:
        return f"{self.name} is retired; restore it first"


class NotRetired(MemoryRefused):
    def text(self) -> str:
        return f"{self.name} is not retired (it is {self.status})"


class AlreadyHeld(MemoryRefused):
    def text(self) -> str:
        return f"{self.name} is already held for review"


class SameText(MemoryRefused):
    def text(self) -> str:
        return f"the new text of {self.name} is the same as its current text"


class NoNewText(ReviewError):
    def text(self) -> str:
        return "a replacement needs some text"


@dataclass(eq=False)
class NotReversible(ReviewError):
    """Undo does not reverse this action; `instead` is the action that does."""

    proposal_id: str
    action: str
    instead: str

    def text(self) -> str:
        return f"{self.proposal_id} {ACTIONS[self.action].not_undone}"


@dataclass(eq=False)
class ReplacedSince(ReviewError):
    """The memory was replaced again after the replacement being undone."""

    proposal_id: str
    memory_id: str
    title: str

    def text(self) -> str:
        name = named(self.memory_id, self.title)
        return f"{name} was replaced again after {self.proposal_id}; undo by hand"


@dataclass(eq=False)
class OldTextMissing(ReviewError):
    proposal_id: str

    def text(self) -> str:
        return f"the text {self.proposal_id} replaced is not in git, so it cannot be put back"


@dataclass(eq=False)
class OldTextUnreadable(ReviewError):
    path: str
    detail: str

    def text(self) -> str:
        return f"the old text of {self.path} cannot be read: {self.detail}"


@dataclass(eq=False)
class UnknownAction(ReviewError):
    action: str

    def text(self) -> str:
        return f"unknown action {self.action!r}"


# --- what an action is given, and what it asks of the change it is part of ---------------


@dataclass(frozen=True)
class Request:
    """One decision about one memory: the proposal it is recorded as, why, and for a
    replacement the new text (and title)."""

    decision_id: str
    reason: str
    body: str | None = None
    title: str | None = None


class Work(Protocol):
    """The unit of work an action writes through (`decisions.Change`)."""

    now: dt.datetime
    notices: list[str]
    log: list[str]

    def edit(self, loaded: Loaded, changes: dict[str, Any], body: str | None = None) -> None: ...

    def cascade(self, ancestor: Memory, event: str, trigger: str) -> Sequence[object]: ...

    def supersede(self, memory: Memory, actions: Sequence[str], note: str) -> None: ...

    def withdraw_lineage(self, ancestor: str, trigger: str, note: str) -> None: ...

    def previous_commit(self, memory: Memory) -> str | None: ...


def _record(now: dt.datetime, decision_id: str, reason: str) -> dict[str, Any]:
    return {"at": moment(iso(now)), "proposal": decision_id, "reason": reason}


def decided_by(record: DecisionRecord | None) -> str | None:
    """The proposal a memory's `retired` or `needs_review` record names."""
    return record.proposal if record else None


def replaced_entries(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    value = data.get("replaced")
    if isinstance(value, dict):
        value = [value]
    return (
        [dict(item) for item in value if isinstance(item, dict)] if isinstance(value, list) else []
    )


# --- the actions --------------------------------------------------------------------------


class Action:
    name: ClassVar[str]  # in a proposal file
    word: ClassVar[str]  # as a person or an agent types it
    verb: ClassVar[str]  # "Retire": a heading, a commit subject
    past: ClassVar[str]  # "Retired": what was done
    proposable: ClassVar[bool] = True  # False: only ever a decision the person made directly
    by_hand: ClassVar[bool] = True  # False: only memoryctl itself proposes it (sync)
    by_the_person: ClassVar[str]  # the reason a direct decision records when none is given
    not_undone: ClassVar[str] = ""  # why undo does not reverse it, and what does

    def guard(self, memory: Memory, request: Request | None = None) -> None:
        """Raise the typed error that stops this action on `memory` as it is now."""
        if memory.broken:
            raise Unreadable(memory.path)
        self.check(memory, request)

    def check(self, memory: Memory, request: Request | None) -> None:
        """The guard on a readable memory."""
        if memory.status == "retired":
            raise IsRetired.about(memory, self.name)

    def allows(self, memory: Memory) -> bool:
        """The guard lets this action be taken on `memory` as it is now. Only a refusal for
        the memory counts: what the person has yet to give (a reason, a new text) is asked
        for when they take it."""
        try:
            self.guard(memory, None)
        except (Unreadable, MemoryRefused):
            return False
        except ReviewError:
            return True
        return True

    def fulfilled(self, memory: Memory) -> bool:
        """The memory is already as approving would leave it."""
        return False

    def changes(
        self, now: dt.datetime, data: Mapping[str, Any], request: Request
    ) -> dict[str, Any]:
        """The frontmatter keys taking this action sets."""
        raise NotImplementedError

    def apply(self, work: Work, loaded: Loaded, request: Request) -> None:
        """Take the action on one memory, within `work`."""
        self.guard(loaded.memory, request)
        work.edit(loaded, self.changes(work.now, loaded.note.data, request))
        self.then(work, loaded.memory, request)

    def then(self, work: Work, memory: Memory, request: Request) -> None:
        """What taking the action sets off, besides the memory's own keys."""

    def preview(
        self, vault: Vault, loaded: Loaded, now: dt.datetime, request: Request
    ) -> notefile.NoteFile:
        """The memory's file as approving would write it (nothing is written)."""
        return vault.changed_note(loaded, self.changes(now, loaded.note.data, request))

    def reverse(self, work: Work, vault: Vault, loaded: Loaded, proposal_id: str) -> None:
        """Undo the approval `proposal_id` recorded of this action on one memory."""
        raise NotImplementedError


class Retire(Action):
    name = "retire"
    word = "retire"
    verb = "Retire"
    past = "Retired"
    by_the_person = "retired by the person"

    def check(self, memory: Memory, request: Request | None) -> None:
        if memory.status == "retired":
            raise AlreadyRetired.about(memory, self.name)

    def fulfilled(self, memory: Memory) -> bool:
        return memory.status == "retired"

    def changes(
        self, now: dt.datetime, data: Mapping[str, Any], request: Request
    ) -> dict[str, Any]:
        return {"status": "retired", "retired": _record(now, request.decision_id, request.reason)}

    def then(self, work: Work, memory: Memory, request: Request) -> None:
        work.cascade(memory, f"was retired: {request.reason}", f"retired:{request.decision_id}")
        work.supersede(memory, ("retire", "needs_review"), f"{memory.id} was retired")
        if memory.pinned:
            work.notices.append(
                f"{named(memory.id, memory.title)} is pinned: while it is retired it is left "
                "out of the agent's context (its pin stays until you unpin it)"
            )

    def reverse(self, work: Work, vault: Vault, loaded: Loaded, proposal_id: str) -> None:
        current = loaded.memory
        if current.status == "retired" and decided_by(current.retired_record) == proposal_id:
            work.edit(loaded, RESTORE.changes(work.now, loaded.note.data, Request(proposal_id, "")))
            work.withdraw_lineage(current.id, f"retired:{proposal_id}", f"{proposal_id} was undone")
        else:
            work.notices.append(
                f"{named(current.id, current.title)} is no longer retired by {proposal_id}; "
                "left as it is"
            )


class Hold(Action):
    name = "needs_review"
    word = "review"
    verb = "Hold for review"
    past = "Held for review"
    by_the_person = "held for review by the person"

    def check(self, memory: Memory, request: Request | None) -> None:
        super().check(memory, request)
        if memory.status == "needs_review":
            raise AlreadyHeld.about(memory, self.name)

    def fulfilled(self, memory: Memory) -> bool:
        return memory.status == "needs_review"

    def changes(
        self, now: dt.datetime, data: Mapping[str, Any], request: Request
    ) -> dict[str, Any]:
        record = _record(now, request.decision_id, request.reason)
        return {"status": "needs_review", "needs_review": record}

    def then(self, work: Work, memory: Memory, request: Request) -> None:
        work.supersede(memory, ("needs_review",), f"{memory.id} is held for review")
        if memory.pinned:
            work.notices.append(
                f"{named(memory.id, memory.title)} is pinned: it is left out of the agent's "
                "context until you confirm it or replace it"
            )

    def reverse(self, work: Work, vault: Vault, loaded: Loaded, proposal_id: str) -> None:
        current = loaded.memory
        if current.status == "needs_review" and decided_by(current.review_record) == proposal_id:
            work.edit(loaded, released())
        else:
            work.notices.append(
                f"{named(current.id, current.title)} is no longer held for review by "
                f"{proposal_id}; left as it is"
            )


def released() -> dict[str, Any]:
    """Out of a hold: back to active, without claiming the memory was checked."""
    return {"status": "active", "needs_review": None}


class Replace(Action):
    name = "replace"
    word = "replace"
    verb = "Replace"
    past = "Replaced"
    by_the_person = "replaced by the person"

    def check(self, memory: Memory, request: Request | None) -> None:
        super().check(memory, request)
        body = request.body if request else None
        if body is None or not body.strip():
            raise NoNewText()
        if body.strip() == memory.body.strip() and not (request and request.title):
            raise SameText.about(memory, self.name)

    def changes(
        self, now: dt.datetime, data: Mapping[str, Any], request: Request
    ) -> dict[str, Any]:
        return replaced(now, data, commit=None, decision_id=request.decision_id)

    def apply(self, work: Work, loaded: Loaded, request: Request) -> None:
        memory = loaded.memory
        self.guard(memory, request)
        commit = work.previous_commit(memory)
        changes = replaced(
            work.now,
            loaded.note.data,
            commit=commit,
            decision_id=request.decision_id,
            title=request.title,
        )
        work.edit(loaded, changes, body=_text(request.body))
        work.log.append(f"previous text of {memory.id}: {commit or 'not in git'}")
        work.cascade(memory, "was replaced with new text", f"replaced:{request.decision_id}")
        if memory.pinned:
            work.notices.append(
                f"{named(memory.id, memory.title)} is pinned: the agent sees the new text from "
                "its next turn"
            )

    def preview(
        self, vault: Vault, loaded: Loaded, now: dt.datetime, request: Request
    ) -> notefile.NoteFile:
        path = loaded.memory.path
        commit = gitrepo.last_commit(vault.root, path) if vault.is_git else None
        changes = replaced(now, loaded.note.data, commit=commit, decision_id=request.decision_id)
        return vault.changed_note(loaded, changes, _text(request.body))

    def reverse(self, work: Work, vault: Vault, loaded: Loaded, proposal_id: str) -> None:
        current = loaded.memory
        data = loaded.note.data
        entries = replaced_entries(data)
        last = entries[-1] if entries else {}
        if str(last.get("proposal")) != proposal_id:
            raise ReplacedSince(proposal_id, current.id, current.title)
        commit = last.get("commit")
        old = gitrepo.show_file(vault.root, str(commit), current.path) if commit else None
        if old is None:
            raise OldTextMissing(proposal_id)
        try:
            before = notefile.parse_text(old)
        except notefile.NoteError as error:
            raise OldTextUnreadable(current.path, str(error)) from None
        title = before.data.get("title")
        changes = replaced(
            work.now,
            data,
            commit=work.previous_commit(current),
            decision_id=proposal_id,
            title=str(title) if title and title != data.get("title") else None,
            undo_of=proposal_id,
        )
        work.edit(loaded, changes, body=before.body.lstrip("\r\n"))
        work.withdraw_lineage(current.id, f"replaced:{proposal_id}", f"{proposal_id} was undone")


def _text(body: str | None) -> str:
    return (body or "").strip("\n") + "\n"


def replaced(
    now: dt.datetime,
    data: Mapping[str, Any],
    *,
    commit: str | None,
    decision_id: str,
    title: str | None = None,
    undo_of: str | None = None,
) -> dict[str, Any]:
    """The keys a replacement sets: a `replaced` entry naming the commit that holds the
    old text, and the memory counted as checked (a hold ends)."""
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
    if lifecycle.state_of(data)[0] == "needs_review":
        changes.update(released())
    if title:
        changes["title"] = title
    return changes


class Confirm(Action):
    name = "confirm"
    word = "confirm"
    verb = "Confirm"
    past = "Confirmed"
    proposable = False
    by_the_person = "confirmed by the person"
    not_undone = "confirmed a memory; to hold it for review again, propose it"

    def changes(
        self, now: dt.datetime, data: Mapping[str, Any], request: Request
    ) -> dict[str, Any]:
        return {**released(), "checked": moment(iso(now))}

    def then(self, work: Work, memory: Memory, request: Request) -> None:
        work.supersede(memory, ("needs_review",), f"{memory.id} was confirmed")

    def reverse(self, work: Work, vault: Vault, loaded: Loaded, proposal_id: str) -> None:
        raise NotReversible(proposal_id, self.name, HOLD.name)


class Restore(Action):
    name = "restore"
    word = "restore"
    verb = "Restore"
    past = "Restored"
    proposable = False
    by_the_person = "restored by the person"
    not_undone = "restored a memory; to undo it, retire the memory again"

    def check(self, memory: Memory, request: Request | None) -> None:
        if memory.status != "retired":
            raise NotRetired.about(memory, self.name)

    def changes(
        self, now: dt.datetime, data: Mapping[str, Any], request: Request
    ) -> dict[str, Any]:
        return {"status": "active", "retired": None}

    def apply(self, work: Work, loaded: Loaded, request: Request) -> None:
        super().apply(work, loaded, request)
        retired_by = decided_by(loaded.memory.retired_record)
        memory = loaded.memory
        work.withdraw_lineage(memory.id, f"retired:{retired_by or ''}", f"{memory.id} was restored")

    def reverse(self, work: Work, vault: Vault, loaded: Loaded, proposal_id: str) -> None:
        raise NotReversible(proposal_id, self.name, RETIRE.name)


class OtherVersionUnreadable(ReviewError):
    def __init__(self, proposal_id: str, detail: str) -> None:
        self.proposal_id = proposal_id
        self.detail = detail
        super().__init__()

    def text(self) -> str:
        return f"the other version {self.proposal_id} holds cannot be read: {self.detail}"


class TakeOther(Action):
    """A conflict from sync: both devices changed one memory differently. The file kept
    this device's version and the proposal's body is the other device's whole file;
    approving takes it (every key and the text), declining keeps this one."""

    name = "conflict"
    word = "conflict"
    verb = "Take the other version"
    past = "Took the other version"
    by_hand = False
    by_the_person = "the other version, taken by the person"
    not_undone = (
        "took the other device's version of a file; git keeps this device's version in "
        "the commit before, to replace the text with"
    )

    def check(self, memory: Memory, request: Request | None) -> None:
        self._other(request)  # a conflict may be about a retired memory too

    def _other(self, request: Request | None) -> notefile.NoteFile:
        if request is None or not (request.body or "").strip():
            raise NoNewText()
        try:
            return notefile.parse_text(request.body or "")
        except notefile.NoteError as error:
            raise OtherVersionUnreadable(request.decision_id, str(error)) from None

    def changes(
        self, now: dt.datetime, data: Mapping[str, Any], request: Request
    ) -> dict[str, Any]:
        other = self._other(request).data
        changed: dict[str, Any] = {k: v for k, v in other.items() if data.get(k) != v}
        return {**changed, **{k: None for k in data if k not in other}}

    def apply(self, work: Work, loaded: Loaded, request: Request) -> None:
        self.guard(loaded.memory, request)
        body = self._other(request).body
        work.edit(loaded, self.changes(work.now, loaded.note.data, request), body=body)

    def preview(
        self, vault: Vault, loaded: Loaded, now: dt.datetime, request: Request
    ) -> notefile.NoteFile:
        changes = self.changes(now, loaded.note.data, request)
        return vault.changed_note(loaded, changes, self._other(request).body)

    def reverse(self, work: Work, vault: Vault, loaded: Loaded, proposal_id: str) -> None:
        raise NotReversible(proposal_id, self.name, REPLACE.name)


# --- the registry -------------------------------------------------------------------------

RETIRE, REPLACE, HOLD, CONFIRM, RESTORE = Retire(), Replace(), Hold(), Confirm(), Restore()
TAKE_OTHER = TakeOther()

ACTIONS: dict[str, Action] = {
    a.name: a for a in (RETIRE, REPLACE, HOLD, CONFIRM, RESTORE, TAKE_OTHER)
}
# What can be proposed, by name; the others are only recorded as direct decisions.
PROPOSABLE = tuple(name for name, a in ACTIONS.items() if a.proposable)
# What a person or an agent types to propose each.
PROPOSAL_WORDS = tuple(a.word for a in ACTIONS.values() if a.proposable and a.by_hand)


def action(name: str) -> Action:
    """The action a proposal file names; UnknownAction otherwise."""
    try:
        return ACTIONS[name]
    except KeyError:
        raise UnknownAction(name) from None


def by_word(word: str) -> Action | None:
    """The action a person, an agent or a hand-written file names, by word or by name."""
    for candidate in ACTIONS.values():
        if word in (candidate.word, candidate.name):
            return candidate
    return None


def verb(name: str) -> str:
    """How a heading names an action, for any name a file may hold."""
    found = ACTIONS.get(name)
    return found.verb if found else name


def word(name: str) -> str:
    """How a person types an action, for any name a file may hold."""
    found = ACTIONS.get(name)
    return found.word if found else name
