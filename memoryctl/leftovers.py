"""What a write cut short leaves behind, found after the fact (for `memoryctl doctor`).

A process killed mid-write leaves the vault whole (every write is atomic), but it can
leave a temporary file, a git lock, a memory saved but not committed, or a memory whose
decision record names a proposal that was never written.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from memoryctl.storage import gitrepo
from memoryctl.storage.config import ALWAYS_IGNORED_DIRS, OWN_DIR
from memoryctl.storage.scan import is_memory_path
from memoryctl.storage.vault import Vault

# `.NAME.RANDOM.tmp`, as `atomic.write_atomic` names its temporary files.
_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")


@dataclass(frozen=True)
class Leftover:
    kind: str  # "temporary", "git-lock", "uncommitted", "dangling-decision"
    path: str  # relative to the vault
    detail: str = ""

    @property
    def removable(self) -> bool:
        """`doctor --fix` may delete it: it holds nothing anyone wrote on purpose."""
        return self.kind in ("temporary", "git-lock")


def temporary_files(root: Path) -> list[str]:
    """memoryctl's temporary files anywhere in the vault, its own `.memoryctl/` folder
    included (a write of the vault's id can be cut short too). The folders of git and
    of other tools are left alone, and so is every name memoryctl's writes do not give."""
    found = []
    for folder, dirs, files in os.walk(root):
        at_root = folder == str(root)
        dirs[:] = [d for d in dirs if d not in ALWAYS_IGNORED_DIRS or (at_root and d == OWN_DIR)]
        for name in files:
            if _TEMPORARY.fullmatch(name):
                found.append(Path(folder, name).relative_to(root).as_posix())
    return sorted(found)


def leftovers(vault: Vault, now: float | None = None) -> list[Leftover]:
    found = [Leftover("temporary", path) for path in temporary_files(vault.root)]
    if vault.is_git:
        lock = gitrepo.stale_lock(vault.root, now)
        if lock is not None:
            found.append(Leftover("git-lock", lock[0], f"{int(lock[1] // 60)} min"))
        # Only what memoryctl saved: the person's own uncommitted edits are theirs.
        uncommitted = set(gitrepo.uncommitted(vault.root))
        found += [
            Leftover("uncommitted", path)
            for path in vault.pending_commits()
            if path in uncommitted and is_memory_path(path, vault.config)
        ]
    found += dangling_decisions(vault)
    return found


def dangling_decisions(vault: Vault) -> list[Leftover]:
    """Memories whose `retired` record names a proposal that does not exist."""
    from memoryctl.audit import retired

    return [
        Leftover("dangling-decision", r.memory.path, r.proposal_id)
        for r in retired(vault)
        if r.proposal_id and r.proposal is None
    ]


def remove(vault: Vault, found: list[Leftover]) -> list[str]:
    """Delete the removable leftovers, holding the write lock so that no write of
    memoryctl's is in flight. A git lock is removed only while it is still stale."""
    removed = []
    with vault.writing():
        for leftover in found:
            if not leftover.removable:
                continue
            if leftover.kind == "git-lock" and gitrepo.stale_lock(vault.root, time.time()) is None:
                continue
            with contextlib.suppress(FileNotFoundError):
                os.remove(vault.root / leftover.path)
                removed.append(leftover.path)
    return removed
