"""Conflicts from sync, as decisions for the person.

When two devices changed the same key or the same lines of a memory, the merge keeps
this device's version in the file and records the other. Here each recorded conflict
becomes a "conflict from sync" proposal whose body is the other version of the whole
file (the merge with the other device winning each conflict), so the Review screen can
show both and their diff, and the person keeps this one (decline), takes the other
(approve), or edits the file. Two memories that only share a file name are both kept;
what cannot be settled here is said in a notice.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memoryctl import review_actions
from memoryctl.moments import moment
from memoryctl.proposals import Suggestion, new_proposal_bytes, proposal_id
from memoryctl.storage import notefile, seal
from memoryctl.storage.config import PROPOSALS_DIR
from memoryctl.storage.merge import BODY
from memoryctl.storage.vault import Vault

ACTION = review_actions.TAKE_OTHER.name
ORIGIN = "sync"
REASON = "conflict from sync"


@dataclass(frozen=True)
class Conflict:
    """One file both devices changed differently, and the proposal that holds the other."""

    path: str
    keys: tuple[str, ...]
    proposal: str | None

    @property
    def what(self) -> str:
        """What both devices changed, as a person reads it."""
        return ", ".join("the text" if key == BODY else key for key in self.keys)

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "keys": list(self.keys), "proposal": self.proposal}


@dataclass
class Filed:
    conflicts: list[Conflict] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def reason_for(keys: Sequence[str]) -> str:
    return f"{REASON}: both devices changed {Conflict('', tuple(keys), None).what}"


def conflict_suggestion(memory_id: str, path: str, keys: Sequence[str], other: bytes, ref: str):
    digest = hashlib.sha256(other).hexdigest()[:16]
    return Suggestion(
        action=ACTION,
        targets=(memory_id,),
        reason=reason_for(keys),
        origin=ORIGIN,
        ref=ref[:12],
        trigger=f"{path}@{digest}",
        body=other.decode("utf-8", errors="replace"),
    )


def file_conflicts(vault: Vault, recorded: Sequence[dict[str, Any]], theirs: str, at: str) -> Filed:
    """Write the proposals and files the recorded conflicts call for, in one commit."""
    filed = Filed()
    written: list[str] = []
    files: list[tuple[str, bytes]] = []
    added = 0  # memories both devices added by one file name
    for entry in recorded:
        path = str(entry.get("path"))
        kind = entry.get("kind")
        other = base64.b64decode(str(entry.get("other", "")))
        if kind == "sealed":
            filed.notices.append(
                f"{path}: sealed and changed on both devices; {entry.get('reason')}. This "
                f"device's version is kept; the other is in git at {theirs[:12]}."
            )
            continue
        if kind == "both-added":
            stem = path[:-3] if path.lower().endswith(".md") else path
            folder, _, name = stem.rpartition("/")
            new_path = vault.free_path(folder or ".", name).removeprefix("./")
            files.append((new_path, other))
            added += 1
            filed.notices.append(
                f"{path}: both devices added a memory by this name; the other device's is "
                f"kept as {new_path}."
            )
            continue
        if kind == "approval-holds":
            where = "this device" if entry.get("approved") == "ours" else "the other device"
            filed.notices.append(
                f"{path}: both devices decided this proposal differently, and {where} "
                "approved it; the approval holds, since its change is in the memory. The "
                f"other decision is in git at {theirs[:12]}."
            )
            continue
        if path.startswith(f"{PROPOSALS_DIR}/"):
            filed.notices.append(
                f"{path}: both devices decided this proposal differently; this device's "
                f"decision is kept, the other is in git at {theirs[:12]}."
            )
            continue
        keys = tuple(str(k) for k in entry.get("keys") or ())
        vault.index.sync_paths([path])
        memory = vault.index.by_path(path)
        if memory is None:
            filed.notices.append(f"{path}: both devices changed it differently; kept this one")
            continue
        suggestion = conflict_suggestion(memory.id, path, keys, other, theirs)
        pid = proposal_id(suggestion.key)
        relpath = f"{PROPOSALS_DIR}/{pid}.md"
        if (vault.root / relpath).exists():
            filed.conflicts.append(Conflict(path, keys, pid))
            continue
        current = notefile.sha256((vault.root / path).read_bytes())
        data = new_proposal_bytes(suggestion, pid, moment(at), {memory.id: current})
        if seal.is_secret(other) or memory.visibility == "secret":
            # The other version of a secret memory is as secret as the memory.
            note = notefile.parse_bytes(data)
            data = note.with_changes({"visibility": "secret"}).to_bytes()
        files.append((relpath, data))
        filed.conflicts.append(Conflict(path, keys, pid))
    for relpath, data in files:
        vault.write_file(relpath, data, None)
        written.append(relpath)
    if written:
        count = len(filed.conflicts)
        said = [f"{count} conflict(s) to decide"] if count else []
        if added:
            names = "memory" if added == 1 else "memories"
            said.append(f"{added} {names} both devices added by one name")
        vault.commit(written, f"Sync: {', '.join(said)}, both kept")
        memories = [p for p in written if not p.startswith(f"{PROPOSALS_DIR}/")]
        if memories:
            vault.index.sync_paths(memories)
    return filed
