"""Proposals: suggested changes to memories, each a file in the vault's `proposals/`.

A proposal asks the person to retire a memory, replace its text, or hold it for review.
Rules, explicit naming, code checks, expiry, lineage, agents and scripts make them;
only the person decides them (see `review.py`). Every proposal is a Markdown file with
YAML frontmatter, so an agent or a script can propose by writing one, and git keeps
every decision. The format is specified in docs/PROPOSALS.md.

This module holds what a proposal is (reading and writing its file) and the store that
lists them and files new ones without ever making the same proposal twice.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryctl import review_actions
from memoryctl.memory import new_id
from memoryctl.moments import iso, moment, parse_moment
from memoryctl.storage import notefile, yamlsubset
from memoryctl.storage.config import PROPOSALS_DIR
from memoryctl.storage.vault import Vault, VaultError, read_file

STATES = ("pending", "approved", "declined", "withdrawn")
# Who withdrew a proposal, as its decision records it: a check that no longer found it
# (and brings it back when it finds it again), a decision that made it moot, or the
# person undoing a decision they made directly.
BY_CHECK, BY_DECISION, BY_PERSON = "check", "decision", "person"
ORIGINS = ("rule", "explicit", "anchor", "expiry", "lineage", "agent", "user", "import", "sync")


CACHE_NAME = "proposals.json"
CACHE_VERSION = 1


class ProposalError(VaultError):
    """A proposal file cannot be read, or a reference names none; the message says why."""


class NoSuchProposal(ProposalError):
    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(f"no proposal with id {ref!r}")


class AmbiguousProposal(ProposalError):
    def __init__(self, ref: str, ids: Sequence[str]) -> None:
        self.ref = ref
        self.ids = tuple(ids)
        sample = ", ".join(self.ids[:5])
        super().__init__(f"{ref!r} matches several proposals ({sample}); give more of the id")


class UnreadableProposal(ProposalError):
    """The proposal a reference names is a file that cannot be read."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path} cannot be read: {problem}; fix the file")


@dataclass(frozen=True)
class Suggestion:
    """What a check (or an agent) found, before it becomes a proposal file.

    `trigger` says what in particular caused it (the newer value, the expiry date, the
    anchor's break). Together with the action, targets and origin it makes the
    proposal's key, so the same check on the same vault always makes the same key.
    """

    action: str
    targets: tuple[str, ...]
    reason: str
    origin: str
    ref: str | None = None
    trigger: str = ""
    body: str | None = None  # the new text of a replacement

    @property
    def key(self) -> str:
        return proposal_key(self.action, self.targets, self.origin, self.ref, self.trigger)


@dataclass(frozen=True)
class Decision:
    at: str
    state: str
    note: str | None = None
    by: str | None = None  # who withdrew it (BY_CHECK, ...); None in files from before

    def as_dict(self) -> dict[str, str]:
        data = {"at": self.at, "state": self.state}
        if self.note:
            data["note"] = self.note
        if self.by:
            data["by"] = self.by
        return data


@dataclass(frozen=True)
class Proposal:
    id: str
    path: str  # vault-relative
    action: str
    targets: tuple[str, ...]
    reason: str
    origin: str
    ref: str | None
    created: str
    state: str
    key: str
    target_sha: dict[str, str] = field(default_factory=dict)
    decision: Decision | None = None
    history: tuple[Decision, ...] = ()
    body: str = ""
    sha: str = ""  # of the file as read, so a decision never overwrites an unseen edit

    @property
    def is_pending(self) -> bool:
        return self.state == "pending"

    def describe_origin(self) -> str:
        return f"{self.origin} {self.ref}" if self.ref else self.origin

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "action": self.action,
            "targets": list(self.targets),
            "reason": self.reason,
            "origin": {"kind": self.origin, "ref": self.ref},
            "created": self.created,
            "state": self.state,
            "decision": (
                {"at": self.decision.at, "note": self.decision.note, "by": self.decision.by}
                if self.decision
                else None
            ),
            "history": [d.as_dict() for d in self.history],
            "key": self.key,
            "target_sha": dict(self.target_sha),
            "body": self.body if self.action in ("replace", "conflict") else None,
        }


# --- keys and ids ---------------------------------------------------------------------


def proposal_key(
    action: str, targets: Sequence[str], origin: str, ref: str | None, trigger: str
) -> str:
    """The dedup key: equal for the same proposal from the same trigger, and readable."""
    return f"{action}|{','.join(sorted(targets))}|{origin}:{ref or ''}|{trigger}"


def proposal_id(key: str, attempt: int = 0) -> str:
    """A proposal's id follows from its key, so two runs that race name the same file."""
    text = key if attempt == 0 else f"{key}#{attempt}"
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return new_id(int.from_bytes(digest[:7], "big"))


# --- reading ----------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.date | dt.datetime):
        return parse_moment(value)
    text = str(value).strip()
    return text or None


def _decision(value: Any, where: str) -> Decision:
    if not isinstance(value, dict):
        raise ProposalError(f"{where}: must be a mapping with at and state")
    try:
        at = parse_moment(value.get("at"))
    except ValueError:
        raise ProposalError(f"{where}: at is not a date") from None
    state = str(value.get("state") or "")
    if state not in STATES:
        raise ProposalError(f"{where}: state {state!r} is not one of {', '.join(STATES)}")
    return Decision(at, state, _text(value.get("note")), _text(value.get("by")))


def proposal_from_file(relpath: str, raw: bytes, fallback_created: str) -> Proposal:
    """Read one proposal file; ProposalError says what is wrong with it."""
    try:
        note = notefile.parse_bytes(raw)
    except notefile.NoteError as error:
        raise ProposalError(str(error)) from None
    if not note.has_frontmatter:
        raise ProposalError("no frontmatter: a proposal needs at least action and targets")
    data = note.data
    named = str(data.get("action") or "")
    known = review_actions.by_word(named)  # a hand-written file may say `review`
    if known is None:
        words = ", ".join(review_actions.PROPOSABLE)
        raise ProposalError(f"action: {named!r} is not one of {words}")
    action = known.name
    raw_targets = data.get("targets")
    if isinstance(raw_targets, str | int):
        raw_targets = [raw_targets]
    if not isinstance(raw_targets, list) or not all(
        isinstance(t, str | int) and str(t).strip() for t in raw_targets
    ):
        raise ProposalError("targets: must be a list of memory ids")
    targets = tuple(dict.fromkeys(str(t).strip() for t in raw_targets))
    if not targets:
        raise ProposalError("targets: names no memory")
    origin_value = data.get("origin")
    if isinstance(origin_value, dict):
        origin, ref = str(origin_value.get("kind") or ""), _text(origin_value.get("ref"))
    elif isinstance(origin_value, str):
        kind, _, rest = origin_value.partition(":")
        origin, ref = kind.strip(), rest.strip() or None
    elif origin_value is None:
        origin, ref = "agent", None  # a file someone wrote into proposals/ by hand
    else:
        raise ProposalError("origin: must be a mapping with kind and ref")
    if origin not in ORIGINS:
        raise ProposalError(f"origin: {origin!r} is not one of {', '.join(ORIGINS)}")
    state = str(data.get("state") or "pending")
    if state not in STATES:
        raise ProposalError(f"state: {state!r} is not one of {', '.join(STATES)}")
    try:
        created = parse_moment(data["created"]) if data.get("created") else fallback_created
    except ValueError:
        raise ProposalError(f"created: {str(data.get('created'))!r} is not a date") from None
    body = note.body.lstrip("\r\n")
    if known in (review_actions.REPLACE, review_actions.TAKE_OTHER) and not body.strip():
        raise ProposalError(f"a {known.name} proposal needs the new text in its body")
    reason = _text(data.get("reason")) or ""
    decision = None
    if data.get("decision") is not None:
        value = data["decision"]
        if not isinstance(value, dict):
            raise ProposalError("decision: must be a mapping with at and note")
        decision = _decision({**value, "state": state}, "decision")
    history_value = data.get("history") or []
    if not isinstance(history_value, list):
        raise ProposalError("history: must be a list of decisions")
    history = tuple(_decision(item, "history") for item in history_value)
    sha_value = data.get("target_sha") or {}
    if not isinstance(sha_value, dict):
        raise ProposalError("target_sha: must map memory ids to hashes")
    key = _text(data.get("key")) or proposal_key(action, targets, origin, ref, reason)
    stem = relpath.rsplit("/", 1)[-1]
    return Proposal(
        id=_text(data.get("id")) or stem[:-3],
        path=relpath,
        action=action,
        targets=targets,
        reason=reason,
        origin=origin,
        ref=ref,
        created=created,
        state=state,
        key=key,
        target_sha={str(k): str(v) for k, v in sha_value.items()},
        decision=decision,
        history=history,
        body=body,
        sha=notefile.sha256(raw),
    )


# --- writing ----------------------------------------------------------------------------


def new_proposal_bytes(
    suggestion: Suggestion,
    proposal_id_: str,
    now: dt.datetime,
    target_sha: dict[str, str],
    decision: Decision | None = None,
) -> bytes:
    """The file of a new proposal (or of a decision the person made directly), in the
    layout of `notefile.new_note`. The values go through the frontmatter writer, whose
    output always reads back (on the fast path); a cascade writes a thousand of these,
    so they are not parsed again here."""
    data: dict[str, Any] = {
        "id": proposal_id_,
        "action": suggestion.action,
        "targets": list(suggestion.targets),
        "reason": suggestion.reason,
        "origin": {
            "kind": suggestion.origin,
            **({"ref": suggestion.ref} if suggestion.ref else {}),
        },
        "created": moment(iso(now)),
        "state": decision.state if decision else "pending",
        "key": suggestion.key,
    }
    if target_sha:
        data["target_sha"] = dict(target_sha)
    if decision:
        data.update(decision_changes(decision, ()))
    text = "---\n" + "".join(yamlsubset.dump_item(k, v) for k, v in data.items()) + "---\n"
    body = (suggestion.body or "").replace("\r\n", "\n")
    if body:
        text += "\n" + body + ("" if body.endswith("\n") else "\n")
    return text.encode("utf-8")


def decision_changes(decision: Decision, history: Sequence[Decision]) -> dict[str, Any]:
    """The frontmatter keys a decision sets on a proposal file."""
    changes: dict[str, Any] = {"state": decision.state}
    if decision.state == "pending":
        changes["decision"] = None
    else:
        changes["decision"] = {
            "at": moment(decision.at),
            **({"note": decision.note} if decision.note else {}),
            **({"by": decision.by} if decision.by else {}),
        }
    entries = [*history, decision]
    changes["history"] = [
        {k: moment(v) if k == "at" else v for k, v in d.as_dict().items()} for d in entries
    ]
    return changes


def decided_bytes(proposal: Proposal, raw: bytes, decision: Decision) -> bytes:
    """A proposal file with a decision recorded, every other byte kept."""
    note = notefile.parse_bytes(raw)
    changes = decision_changes(decision, proposal.history)
    if "id" not in note.data:
        changes = {"id": proposal.id, **changes}
    return note.with_changes(changes).to_bytes()


# --- the store ----------------------------------------------------------------------------


@dataclass
class Listing:
    proposals: list[Proposal]
    problems: list[tuple[str, str]]  # (vault-relative path, why it was skipped)

    def by_key(self) -> dict[str, Proposal]:
        return {p.key: p for p in self.proposals}


class ProposalStore:
    """The proposals of one vault: `proposals/*.md` (and below).

    Every call reads the folder, so it always sees the files as they are. Parsing is
    cached (by path, size and modification time) in `cache`, a file outside the vault
    next to the index, so listing a queue of thousands stays fast; a missing or
    unreadable cache only costs the parsing.
    """

    def __init__(self, root: Path, cache: Path | None = None) -> None:
        self.root = root
        self.folder = root / PROPOSALS_DIR
        self.cache = cache

    @classmethod
    def of(cls, vault: Vault) -> ProposalStore:
        return cls(vault.root, vault.db_path.parent / CACHE_NAME)

    def _files(self) -> Iterable[tuple[str, os.DirEntry[str]]]:
        stack = [(self.folder, PROPOSALS_DIR)]
        while stack:
            folder, prefix = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except FileNotFoundError:
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue  # temporary files of an atomic write, editors' swap files
                relpath = f"{prefix}/{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), relpath))
                elif entry.name.lower().endswith(".md") and entry.is_file(follow_symlinks=False):
                    yield relpath, entry

    def _read_cache(self) -> dict[str, Any]:
        if self.cache is None:
            return {}
        try:
            data = json.loads(self.cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        files = data.get("files")
        return files if isinstance(files, dict) else {}

    def _write_cache(self, files: dict[str, Any]) -> None:
        if self.cache is None:
            return
        tmp = self.cache.with_name(f".{self.cache.name}.{os.getpid()}.tmp")
        try:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(
                json.dumps({"version": CACHE_VERSION, "files": files}, ensure_ascii=False),
                encoding="utf-8",
            )
            os.replace(tmp, self.cache)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def load(self, files: Iterable[tuple[str, os.DirEntry[str]]] | None = None) -> Listing:
        """Every readable proposal, oldest first; unreadable files are listed, not dropped.
        `files`: the queue's files, when the caller has just listed them."""
        proposals: list[Proposal] = []
        problems: list[tuple[str, str]] = []
        cached = self._read_cache()
        fresh: dict[str, Any] = {}
        for relpath, entry in self._files() if files is None else files:
            try:
                stat = entry.stat()
            except OSError as error:
                problems.append((relpath, f"cannot read: {error.strerror}"))
                continue
            stamp = [stat.st_size, stat.st_mtime_ns]
            hit = cached.get(relpath)
            if hit is not None and hit[:2] == stamp:
                fresh[relpath] = hit
                if "problem" in hit[2]:
                    problems.append((relpath, hit[2]["problem"]))
                else:
                    proposals.append(_from_cache(relpath, hit[2]))
                continue
            try:
                raw = Path(entry.path).read_bytes()
                fallback = iso(dt.datetime.fromtimestamp(stat.st_mtime, tz=dt.UTC))
                proposal = proposal_from_file(relpath, raw, fallback)
            except ProposalError as error:
                problems.append((relpath, str(error)))
                fresh[relpath] = [*stamp, {"problem": str(error)}]
            except OSError as error:
                problems.append((relpath, f"cannot read: {error.strerror}"))
            else:
                proposals.append(proposal)
                fresh[relpath] = [*stamp, _to_cache(proposal)]
        if fresh != cached:
            self._write_cache(fresh)
        proposals.sort(key=lambda p: (p.created, p.id))
        problems.sort()
        return Listing(proposals, problems)

    def remember(self, written: Sequence[Proposal]) -> None:
        """Put proposals memoryctl just wrote into the cache, so the next listing need
        not parse them again."""
        if self.cache is None or not written:
            return
        files = self._read_cache()
        for proposal in written:
            try:
                stat = (self.root / proposal.path).stat()
            except OSError:
                continue
            files[proposal.path] = [stat.st_size, stat.st_mtime_ns, _to_cache(proposal)]
        self._write_cache(files)

    def read(self, proposal: Proposal) -> tuple[Proposal, bytes]:
        """A proposal's file as it is now, to record a decision in it."""
        raw = read_file(self.root, proposal.path)
        return proposal_from_file(proposal.path, raw, proposal.created), raw

    def free_id(self, key: str, taken: set[str]) -> str:
        attempt = 0
        while True:
            candidate = proposal_id(key, attempt)
            path = self.folder / f"{candidate}.md"
            if candidate not in taken and not path.exists():
                return candidate
            attempt += 1


class PendingAbout:
    """The pending proposals about given memories, for a process that asks on every
    message (the bundle in the MCP server, under the TUI).

    Listing a queue of thousands reads every file's status, a tenth of a second at
    4,000 proposals. This lists it again only when the folder changed: a file added,
    removed or replaced (memoryctl writes every decision by an atomic rename, and git
    replaces the files it changes), or the listing's cache rewritten (after anything
    memoryctl files or decides), or the file of a proposal it is about to return
    changed. Only a hand edit in place of a proposal it does not return (a decided one
    set back to pending) waits for the next of these; so, on a file system whose clock
    is coarse, does a file another program replaces within the same tick as a change
    this already saw.
    """

    def __init__(self, store: ProposalStore) -> None:
        self.store = store
        self._seen: tuple[object, ...] | None = None
        self._by_target: dict[str, list[Proposal]] = {}
        self._stamps: dict[str, tuple[int, ...]] = {}
        self._folders: list[str] = [PROPOSALS_DIR]  # `proposals/` and the folders in it
        self._lock = threading.Lock()  # the TUI's workers ask from several threads

    def __call__(self, ids: Iterable[str]) -> list[Proposal]:
        ids = list(ids)
        with self._lock:
            seen = self._signature()
            if seen != self._seen:
                self._reload(seen)
            found = self._about(ids)
            if any(self._stamp(p.path) != self._stamps.get(p.path) for p in found):
                self._reload(seen)
                found = self._about(ids)
            return found

    def is_current(self) -> bool:
        """Whether the listing is up to date, so that asking costs only `stat` calls."""
        with self._lock:
            return self._signature() == self._seen

    def _signature(self) -> tuple[object, ...]:
        """What changes when a file in the queue is added, removed or replaced: each
        folder's size, time and inode, and the cache's. (Listing the names of 4,000 files
        instead took a fifth of a bundle's time.)"""
        cache = self.store.cache
        return (
            tuple(self._stamp(folder, inode=True) for folder in self._folders),
            self._stamp(cache, inode=True) if cache is not None else None,
        )

    def _about(self, ids: Iterable[str]) -> list[Proposal]:
        seen: dict[str, Proposal] = {}
        for mid in ids:
            for proposal in self._by_target.get(mid, ()):
                seen.setdefault(proposal.path, proposal)
        return sorted(seen.values(), key=lambda p: (p.created, p.id))

    def _reload(self, seen: tuple[object, ...]) -> None:
        files = list(self.store._files())
        folders = sorted({PROPOSALS_DIR, *(name.rpartition("/")[0] for name, _ in files)})
        if folders != self._folders:
            self._folders = folders
            seen = self._signature()
        pending = [p for p in self.store.load(files).proposals if p.is_pending]
        self._seen = seen if seen == self._signature() else None  # it changed as it was read
        self._by_target = {}
        for proposal in pending:
            for target in dict.fromkeys(proposal.targets):
                self._by_target.setdefault(target, []).append(proposal)
        self._stamps = {p.path: self._stamp(p.path) for p in pending}

    def _stamp(self, path: str | Path, *, inode: bool = False) -> tuple[int, ...]:
        try:
            stat = (self.store.root / path).stat()
        except OSError:
            return (-1,)
        return (stat.st_size, stat.st_mtime_ns, stat.st_ino if inode else 0)


def resolve(proposals: Sequence[Proposal], ref: str) -> Proposal:
    """The one proposal an id, an id prefix or a path names; ProposalError otherwise."""
    ref = ref.strip()
    exact = [p for p in proposals if p.id == ref or p.path == ref]
    if len(exact) == 1:
        return exact[0]
    found = exact
    if not found and ref:
        found = [p for p in proposals if p.id.lower().startswith(ref.lower())]
    if not found:
        raise NoSuchProposal(ref)
    if len(found) > 1:
        raise AmbiguousProposal(ref, [p.id for p in found])
    return found[0]


def _to_cache(proposal: Proposal) -> dict[str, Any]:
    data = {k: v for k, v in proposal.__dict__.items() if k not in ("path", "decision", "history")}
    data["targets"] = list(proposal.targets)
    data["decision"] = proposal.decision.__dict__ if proposal.decision else None
    data["history"] = [d.__dict__ for d in proposal.history]
    return data


def _from_cache(relpath: str, data: dict[str, Any]) -> Proposal:
    decision = data.get("decision")
    return Proposal(
        **{
            **data,
            "path": relpath,
            "targets": tuple(data["targets"]),
            "decision": Decision(**decision) if decision else None,
            "history": tuple(Decision(**d) for d in data["history"]),
        }
    )
