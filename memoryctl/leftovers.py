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

from memoryctl.storage import gitrepo, gitsync
from memoryctl.storage.config import ALWAYS_IGNORED_DIRS, OWN_DIR
from memoryctl.storage.scan import is_memory_path
from memoryctl.storage.vault import Vault

# `.NAME.RANDOM.tmp`, as `atomic.write_atomic` names its temporary files.
_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")


SYNC = "sync"  # the detail of a temporary file a sync (or the merge driver) left


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


# Names an earlier memoryctl gave its temporary files in the git folder: sync's state,
# and a conflict the merge driver recorded (the process id, then a digest).
_OLD_SYNC_TEMPORARY = re.compile(r"sync\.tmp|[0-9]+-[0-9a-f]{20}\.tmp")


def sync_temporary_files(root: Path, now: float | None = None) -> list[str]:
    """memoryctl's temporary files in what sync keeps in the git folder (`.git/memoryctl/`),
    paths relative to the vault. Sync and the merge driver write there without the
    vault's write lock (a `git pull` by hand runs the driver), so only a file older than
    a running write could be is counted as left by one that stopped."""
    folder = gitsync.state_dir(root)
    moment = now or time.time()
    found = []
    for parent, _, files in os.walk(folder):
        for name in files:
            if not (_TEMPORARY.fullmatch(name) or _OLD_SYNC_TEMPORARY.fullmatch(name)):
                continue
            path = Path(parent, name)
            with contextlib.suppress(OSError):
                if moment - path.stat().st_mtime >= gitrepo.STALE_LOCK_SECONDS:
                    found.append(Path(os.path.relpath(path, root)).as_posix())
    return sorted(found)


def leftovers(vault: Vault, now: float | None = None) -> list[Leftover]:
    found = [Leftover("temporary", path) for path in temporary_files(vault.root)]
    if vault.is_git:
        found += [
            Leftover("temporary", path, SYNC) for path in sync_temporary_files(vault.root, now)
        ]
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
    memoryctl's is in flight. A git lock, and a temporary file of sync's, is removed only
    while it is still stale."""
    removed = []
    with vault.writing():
        still_stale = set(sync_temporary_files(vault.root)) if vault.is_git else set()
        for leftover in found:
            if not leftover.removable:
                continue
            if leftover.kind == "git-lock" and gitrepo.stale_lock(vault.root, time.time()) is None:
                continue
            if leftover.detail == SYNC and leftover.path not in still_stale:
                continue
            with contextlib.suppress(FileNotFoundError):
                os.remove(vault.root / leftover.path)
                removed.append(leftover.path)
    return removed
