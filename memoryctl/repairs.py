"""`memoryctl doctor --fix`: repairs that a person approves as one plan.

Each repair says in one line what it would change, and all of them are applied as one
commit. The first kind puts back an owner's `status` that an earlier memoryctl wrote
over: earlier versions wrote `status: active` (or `retired`, `needs_review`) over a
value such as `status: accepted` when a note was retired, held or restored. The
owner's value is still in git; the repair writes its lines back exactly, and keeps the
memory's state in memoryctl's own key, `lifecycle`, when it is not current.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memoryctl.lifecycle import KEY, is_state, owner_status
from memoryctl.storage import gitrepo, notefile
from memoryctl.storage.vault import Vault, VaultError

_STATUS_LINE = r"^status:"


@dataclass(frozen=True)
class OwnerStatusRepair:
    """Put back the owner's `status` that a memoryctl commit wrote over."""

    path: str
    owner_text: str  # the key's lines as the owner wrote them
    written: str  # the line memoryctl wrote instead
    commit: str
    state: str  # the memory's state, kept in `lifecycle` when it is not active

    def line(self) -> str:
        owner = " ".join(self.owner_text.split())
        keep = f", and keep `{KEY}: {self.state}`" if self.state != "active" else ""
        return (
            f"{self.path}: put back `{owner}` (memoryctl wrote `{self.written}` over it "
            f"in {self.commit[:8]}){keep}"
        )

    def changed(self, note: notefile.NoteFile) -> notefile.NoteFile:
        restored = note.with_key_text("status", self.owner_text)
        if self.state == "active":
            return restored.with_changes({KEY: None}) if KEY in restored.data else restored
        return restored.with_changes({KEY: self.state})


def _by_memoryctl(message: str) -> bool:
    """Decision commits carry an `action:` line, which a person's commit rarely has."""
    return any(line.startswith("action: ") for line in message.splitlines())


def owner_status_repairs(vault: Vault) -> list[OwnerStatusRepair]:
    """The notes whose `status` memoryctl once took over and that still show its value."""
    if not vault.is_git:
        return []
    repairs: dict[str, OwnerStatusRepair] = {}
    for change in gitrepo.line_changes(vault.root, _STATUS_LINE):
        # Newest first: the latest takeover of each file is the one to undo.
        if change.path in repairs or not _by_memoryctl(change.message):
            continue
        if not change.removed or len(change.added) != 1:
            continue
        written = change.added[0]
        if not is_state(written.partition(":")[2].strip()):
            continue
        before = gitrepo.show_file(vault.root, f"{change.sha}^", change.path)
        if before is None:
            continue
        try:
            old = notefile.parse_text(before)
        except notefile.NoteError:
            continue
        if not owner_status(old.data):
            continue  # memoryctl replaced its own value: nothing was taken
        memory = vault.index.by_path(change.path)
        if memory is None or memory.broken:
            continue
        loaded = vault.load(memory)
        if owner_status(loaded.note.data) or "status" not in loaded.note.data:
            continue  # the owner has written a value of their own since
        owner_text = next(text for key, text in old.segments if key == "status")
        repairs[change.path] = OwnerStatusRepair(
            change.path, owner_text, written, change.sha, loaded.memory.status
        )
    return sorted(repairs.values(), key=lambda r: r.path)


def planned_repairs(vault: Vault) -> list[OwnerStatusRepair]:
    """Every repair `doctor --fix` would make, in the order it lists them."""
    return owner_status_repairs(vault)


def apply_repairs(vault: Vault, repairs: Sequence[OwnerStatusRepair]) -> str | None:
    """Write every repair and commit them together; returns the commit."""
    notes = []
    for repair in repairs:
        memory = vault.index.by_path(repair.path)
        if memory is None:
            raise VaultError(f"{repair.path} no longer exists; run doctor --fix again")
        loaded = vault.load(memory)
        try:
            notes.append((loaded, repair.changed(loaded.note)))
        except notefile.NoteError as error:
            raise VaultError(f"the repair would make {repair.path} unreadable: {error}") from None
    lines = [r.line() for r in repairs]
    message = "Put back the owners' own status\n\n" + "\n".join(lines)
    return vault.write_many(notes, [], message)
