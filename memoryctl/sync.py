"""Syncing a vault through a git remote: fetch, merge, push.

memoryctl builds no sync protocol of its own: a remote is any git remote the person's
own git can reach, with their credentials, ssh-agent and hooks. `sync` merges (it never
rebases) so that every commit keeps its id, both devices' histories stay as they were
made, and each file changed on both sides is merged once, by the memory merge driver.
A conflict never leaves markers in a file: the file keeps this device's version and a
"conflict from sync" proposal holds the other, for the person to decide. docs/SYNC.md
says what and why.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from memoryctl.conflicts import Conflict
from memoryctl.moments import iso
from memoryctl.storage import atomic, clear_secrets, gitdriver, gitsync, seal
from memoryctl.storage.gitrepo import GitError, _git, _run, refuse_unless_usable, write_blobs
from memoryctl.storage.merge import merge_plain, merges_by_key
from memoryctl.storage.scan import is_memory_path
from memoryctl.storage.vault import Vault, VaultError
from memoryctl.wording import first_few

STATE_FILE = "sync.json"
CONFLICT_ACTION = "conflict"
MERGE_SUBJECT = "Sync with "  # how sync's own merge commits begin


class SyncError(VaultError):
    """Sync stopped; nothing was lost and the local commits are kept."""


class NoRemote(SyncError):
    def __init__(self) -> None:
        super().__init__(
            "the vault has no git remote to sync with; add one with "
            "`git remote add origin URL`, then sync again"
        )


class Unreachable(SyncError):
    def __init__(self, remote: str, reason: str) -> None:
        super().__init__(f"could not reach {remote}: {reason}; nothing changed")
        self.remote = remote
        self.reason = reason


class Refused(SyncError):
    def __init__(self, remote: str, reason: str) -> None:
        super().__init__(
            f"{remote} refused the push: {reason}; your commits are kept here, sync again"
        )
        self.remote = remote
        self.reason = reason


class NotAVault(SyncError):
    def __init__(self, remote: str, ref: str) -> None:
        super().__init__(
            f"{remote} is not a memoryctl vault ({ref} has no memoryctl.toml); nothing changed"
        )
        self.remote = remote
        self.ref = ref


class Unrelated(SyncError):
    def __init__(self, remote: str, ref: str) -> None:
        super().__init__(
            f"{ref} shares no history with this vault: {remote} holds another vault; "
            "nothing changed"
        )
        self.remote = remote
        self.ref = ref


class Rewritten(SyncError):
    def __init__(self, remote: str, ref: str, last: str, now: str) -> None:
        super().__init__(
            f"the history of {ref} was rewritten since the last sync (it no longer holds "
            f"{last[:12]}, it is now {now[:12]}); nothing changed. If this device's history "
            "is the one to keep, run `memoryctl sync --force-with-lease`"
        )
        self.remote = remote
        self.ref = ref
        self.last = last
        self.now = now


class EditsInTheWay(SyncError):
    """The remote changed files the person is editing and has not committed, or adds
    files where they have untracked files of their own."""

    def __init__(
        self, remote: str, editing: list[str], untracked: list[str], include_edits: bool
    ) -> None:
        said = []
        if editing:
            said.append(
                f"{remote} changed {_files(len(editing))} you are editing and have not "
                f"committed ({_listed(editing)})"
            )
        if untracked:
            one = len(untracked) == 1
            said.append(
                ("an untracked file of yours is" if one else "untracked files of yours are")
                + f" in the way at {_listed(untracked)}, where {remote} adds "
                + ("a file" if one else "files")
            )
        them = "it" if len(editing) + len(untracked) == 1 else "them"
        how = f"Move {them} aside or commit {them}" if untracked else f"Commit {them}"
        if include_edits:
            how += f", or run `memoryctl sync --include-edits` to commit {them} as your own"
        super().__init__(f"{'; and '.join(said)}; nothing changed. {how}, then sync again")
        self.remote = remote
        self.paths = [*editing, *untracked]
        self.editing = editing
        self.untracked = untracked


class StagedInTheWay(SyncError):
    """git merges only into an index that holds no staged change."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(
            f"{_files(len(paths))} staged and not committed ({_listed(paths)}), and git merges "
            "only when nothing is staged; nothing changed. Commit or unstage them, then sync again"
        )
        self.paths = paths


class TextConflicts(SyncError):
    """Both devices changed the same lines of files that are not memories: those are the
    person's, and memoryctl leaves their merge to them rather than pick one side."""

    def __init__(self, ref: str, paths: list[str]) -> None:
        which = "it is not a memory" if len(paths) == 1 else "they are not memories"
        super().__init__(
            f"both devices changed the same lines of {_listed(paths)}, and {which}: "
            "memoryctl merges only memories; nothing changed. Merge by hand (`git merge "
            f"{ref}`, settle the lines between the conflict markers, `git commit`), then "
            "sync again"
        )
        self.ref = ref
        self.paths = paths


class SecretsInClear(SyncError):
    """Commits the remote lacks hold a secret memory unsealed (committed before sealing
    was set up here, or by hand where it was not): pushing them would put its text on
    the remote for good."""

    def __init__(self, remote: str, found: list[clear_secrets.InClear]) -> None:
        first = found[0]
        more = f" (and {_files(len(found) - 1)} more)" if len(found) > 1 else ""
        super().__init__(
            f"{first.path}{more} is a secret memory stored in clear in commit "
            f"{first.commit[:12]}, which {remote} does not have yet; nothing was pushed, and "
            f"your commits are kept here. Pushing would put its text on {remote} for good. "
            "`memoryctl sync --seal-history` rewrites the commits this device has not pushed "
            "with every secret memory sealed, then syncs"
        )
        self.remote = remote
        self.found = found


def _files(count: int) -> str:
    return "1 file" if count == 1 else f"{count} files"


def _listed(paths: list[str], most: int = 5) -> str:
    """The first few paths, and how many more."""
    shown, more = first_few(paths, most)
    return ", ".join(shown) + (f" and {more} more" if more else "")


class Unfinished(SyncError):
    """The person left a git operation unfinished in the vault (a merge, a rebase)."""

    def __init__(self, operation: str, how: str) -> None:
        super().__init__(
            f"{operation} is in progress in the vault and not finished; nothing changed. "
            f"Finish it ({how}), then sync again"
        )
        self.operation = operation
        self.how = how


class MergeStopped(SyncError):
    def __init__(self, reason: str) -> None:
        super().__init__(f"the merge could not be made: {reason}; nothing changed")
        self.reason = reason


@dataclass
class SyncReport:
    remote: str
    branch: str
    received: int = 0  # commits brought in from the remote
    sent: int = 0  # commits the remote did not have
    merged: bool = False
    forced: bool = False
    conflicts: list[Conflict] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # vault files the sync changed here
    at: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "received": self.received,
            "sent": self.sent,
            "merged": self.merged,
            "forced": self.forced,
            "conflicts": [c.as_json() for c in self.conflicts],
            "notices": list(self.notices),
            "changed": list(self.changed),
            "at": self.at,
        }


@dataclass(frozen=True)
class SyncState:
    """What the header shows: how far this device and the remote are apart."""

    remote: str | None
    branch: str | None
    ahead: int = 0
    behind: int = 0
    last_synced: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "ahead": self.ahead,
            "behind": self.behind,
            "last_synced": self.last_synced,
        }


# --- what this device remembers -----------------------------------------------------------


def _state_path(root: Path) -> Path:
    return gitsync.state_dir(root) / STATE_FILE


def _read_state(root: Path) -> dict[str, Any]:
    try:
        data = json.loads(_state_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(root: Path, remote: str, branch: str, sha: str, at: str) -> None:
    data = _read_state(root)
    data.setdefault("remotes", {})[f"{remote}/{branch}"] = {"sha": sha, "at": at}
    atomic.replace_file(_state_path(root), (json.dumps(data, indent=2) + "\n").encode())


def pick_remote(root: Path, branch: str, remote: str | None) -> str:
    known = gitsync.remotes(root)
    if remote is not None:
        if remote not in known:
            names = ", ".join(known) or "none"
            raise SyncError(f"the vault has no remote named {remote!r} (remotes: {names})")
        return remote
    chosen = gitsync.upstream_remote(root, branch)
    if chosen:
        return chosen
    if "origin" in known:
        return "origin"
    if len(known) == 1:
        return known[0]
    if not known:
        raise NoRemote()
    raise SyncError(
        f"the vault has several remotes ({', '.join(known)}); give the branch an upstream "
        "(`git branch --set-upstream-to REMOTE/BRANCH`), or run `memoryctl sync --remote "
        "NAME`"
    )


def state(vault: Vault, remote: str | None = None) -> SyncState:
    """Ahead, behind and last synced, from what the last fetch saw (no network)."""
    root = vault.root
    if not vault.is_git:
        return SyncState(None, None)
    try:
        branch = gitsync.current_branch(root)
        name = pick_remote(root, branch, remote)
    except (SyncError, GitError):
        return SyncState(None, None)
    last = _read_state(root).get("remotes", {}).get(f"{name}/{branch}", {})
    tracking = gitsync.rev(root, f"refs/remotes/{name}/{branch}")
    ahead = behind = 0
    if tracking and gitsync.rev(root, "HEAD"):
        ahead, behind = gitsync.counts(root, "HEAD", tracking)
    return SyncState(name, branch, ahead, behind, last.get("at"))


# --- setting up ------------------------------------------------------------------------------


def set_up(vault: Vault) -> list[str]:
    """Install the merge driver and the sealing filter; say what changed."""
    setup = gitsync.install(vault.root)
    said = []
    if setup.config:
        said.append(
            "Set up the memory merge driver and the sealing filter in this repository's git config."
        )
    if setup.attributes:
        vault.commit([gitsync.ATTRIBUTES], "Merge memory files key by key and seal secrets")
        said.append(f"Wrote {gitsync.ATTRIBUTES}: memory files merge key by key.")
    return said


# --- syncing ------------------------------------------------------------------------------------


def sync(
    vault: Vault,
    *,
    remote: str | None = None,
    force_with_lease: bool = False,
    include_edits: bool = False,
    seal_history: bool = False,
    now: dt.datetime,
) -> SyncReport:
    """Fetch, merge, push. The person's own uncommitted edits are merged around, never
    committed, unless `include_edits`: then they are committed first, as theirs.

    What changes the working tree, git's index and the commits runs under the vault's
    write lock, so a face writing meanwhile (an `add`, an agent's `remember`) waits for
    the merge rather than meet it halfway; the fetch and the push, which wait on the
    network, run outside it."""
    root = vault.root
    refuse_unless_usable(root)
    if not vault.is_git:
        raise SyncError(f"{root} is not a git repository, so it cannot sync")
    with vault.writing():
        branch, name, report = _prepare(vault, remote, include_edits, now)

    fetched = _git(root, "fetch", "--no-tags", "--prune", name, check=False)
    if fetched.returncode != 0:
        raise Unreachable(name, _first_line(fetched.stderr))
    theirs = gitsync.rev(root, f"refs/remotes/{name}/{branch}")
    with vault.writing():
        before = gitsync.rev(root, "HEAD")
        rewritten = _take_in(vault, report, theirs, force_with_lease)
        if seal_history:
            _seal_history(vault, report)
        head = gitsync.rev(root, "HEAD")
        assert head is not None
        if not rewritten:
            report.sent = gitsync.counts(root, "HEAD", theirs)[0] if theirs else 1
        _reindex(vault, report, before, head)

    if rewritten:
        assert theirs is not None
        _refuse_secrets_in_clear(vault, name, head)
        return _push_over(vault, report, name, branch, theirs)
    if theirs != head and (theirs is None or report.sent):
        _refuse_secrets_in_clear(vault, name, head)
        _push(root, name, branch, [])
    _write_state(root, name, branch, head, report.at)
    return report


def _take_in(vault: Vault, report: SyncReport, theirs: str | None, force: bool) -> bool:
    """Check what was fetched and merge it, under the write lock; True when the remote's
    history was rewritten and `force` (--force-with-lease) asks to push over it."""
    root, name = vault.root, report.remote
    short_ref = f"{name}/{report.branch}"
    if theirs is None:
        _new_branch_of_this_vault(root, name)
        return False
    if not gitsync.has_path(root, theirs, "memoryctl.toml"):
        raise NotAVault(name, short_ref)
    last = _read_state(root).get("remotes", {}).get(short_ref, {}).get("sha")
    if last and gitsync.rev(root, last) and not gitsync.is_ancestor(root, last, theirs):
        if not force:
            raise Rewritten(name, short_ref, last, theirs)
        return True
    if not gitsync.shares_history(root, "HEAD", theirs):
        raise Unrelated(name, short_ref)
    report.received = gitsync.counts(root, "HEAD", theirs)[1]
    if report.received:
        fast_forward = gitsync.is_ancestor(root, "HEAD", theirs)
        _around_edits(vault, name, theirs, merging=not fast_forward)
        _merge(vault, report, theirs, short_ref)
    return False


def _prepare(
    vault: Vault, remote: str | None, include_edits: bool, now: dt.datetime
) -> tuple[str, str, SyncReport]:
    """Before the fetch, under the write lock: undo a sync stopped midway, file the
    conflicts a merge left, set up the merge driver and the filter, and commit the
    person's edits when they ask. (branch, remote, the report begun.)"""
    root = vault.root
    undone = _undo_stopped_sync(vault)
    branch = gitsync.current_branch(root)
    name = pick_remote(root, branch, remote)
    report = SyncReport(name, branch, at=iso(now))
    report.notices += undone
    if not undone:
        # Conflicts a merge recorded without filing them: a sync stopped after its merge
        # commit, or a `git pull` by hand, which runs the merge driver.
        _conflicts_to_proposals(vault, report, None)
    have = gitsync.configured(root)
    had_driver = f"merge.{gitsync.DRIVER}.driver" in have
    had_sealing = f"filter.{gitsync.DRIVER}.process" in have
    report.notices += set_up(vault)
    if not had_sealing:
        # Files checked out before the filter was set up are still sealed: open them.
        from memoryctl import sealing

        opened = sealing.open_sealed(vault)
        if opened.opened:
            report.notices.append(f"Opened {len(opened.opened)} sealed memories with the key.")
    if not had_driver:
        report.notices.append(
            "The merge driver was missing on this device, so merges made here by hand used "
            "git's own merge; it is set up now."
        )
    if include_edits:
        _commit_own_edits(vault, report)
    return branch, name, report


def _new_branch_of_this_vault(root: Path, remote: str) -> None:
    """A branch the remote lacks is pushed as a new branch of the vault, but only to a
    remote that holds this vault (or nothing yet): a vault made on its own on another
    device, under another branch name, is not put beside the remote's as a second one."""
    found = _git(root, "for-each-ref", "--format=%(refname)", f"refs/remotes/{remote}/")
    branches = [ref for ref in found.stdout.split() if not ref.endswith("/HEAD")]
    for ref in branches:
        if not gitsync.has_path(root, ref, "memoryctl.toml"):
            raise NotAVault(remote, ref.removeprefix("refs/remotes/"))
    related = (gitsync.shares_history(root, "HEAD", ref) for ref in branches)
    if branches and not any(related):
        raise Unrelated(remote, branches[0].removeprefix("refs/remotes/"))


def _undo_stopped_sync(vault: Vault) -> list[str]:
    """A merge that sync itself began and did not finish (the process was stopped) is
    undone, to be made again; any other unfinished git operation is the person's, and
    sync leaves it alone."""
    root = vault.root
    busy = gitsync.unfinished(root)
    if busy is None:
        return []
    what, how = busy
    if what != "a merge" or not gitsync.merge_message(root).startswith(MERGE_SUBJECT):
        raise Unfinished(what, how)
    if not _abort_merge(vault):
        raise Unfinished(what, how)
    return [
        "A sync stopped before it finished its merge; that merge was undone and is made again now."
    ]


def _abort_merge(vault: Vault) -> bool:
    """Undo sync's own merge in progress; whether git could. Safe: sync merges only
    where the person has no uncommitted edit, and aborting leaves every other file as
    it is."""
    root = vault.root
    touched = gitsync.changed_paths(root, "HEAD", "MERGE_HEAD")
    if _git(root, "merge", "--abort", check=False).returncode != 0:
        return False
    gitsync.take_conflicts(root)  # recorded by the merge just undone
    memories = [path for path in touched if is_memory_path(path, vault.config)]
    if memories:  # a face's watcher may have read a file the merge had written
        vault.index.sync_paths(memories)
    return True


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return _reason(lines[-1] if lines else "")


def _first_line(text: str) -> str:
    """Why git could not reach a remote: its first line names the cause (a host it could
    not resolve, a path that is no repository); the lines after it are git's advice."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return _reason(lines[0] if lines else "")


def _reason(line: str) -> str:
    line = line.removeprefix("fatal: ").removeprefix("error: ").rstrip(".")
    return line or "git gave no reason"


def _commit_own_edits(vault: Vault, report: SyncReport) -> None:
    """Commit the person's uncommitted edits to memories and proposals, saying they are
    theirs: only when they ask for it (`--include-edits`)."""
    edited = gitsync.edited(vault.root)
    paths = [path for path in [*edited.staged, *edited.unstaged] if _yours_to_commit(path, vault)]
    paths = list(dict.fromkeys(paths))
    if not paths:
        return
    listing = "".join(f"\n- {path}" for path in paths)
    vault.commit(
        paths,
        f"Your own edits to {_files(len(paths))}, committed as you asked (sync --include-edits)"
        f"\n\nmemoryctl did not make these changes; it committed the files as they were:"
        f"{listing}",
    )
    report.notices.append(f"Committed your own edits to {_files(len(paths))} before syncing.")


def _around_edits(vault: Vault, remote: str, theirs: str, *, merging: bool) -> None:
    """Refuse, before anything changes, a merge that would meet the person's own
    uncommitted edits: a file they are editing that the remote changed, or (for a merge
    that is not a fast-forward) anything staged. Edits elsewhere are merged around."""
    root = vault.root
    edited = gitsync.edited(root)
    if merging and edited.staged:
        raise StagedInTheWay(edited.staged)
    touched = set(gitsync.changed_since_fork(root, "HEAD", theirs))
    meets = [path for path in dict.fromkeys([*edited.staged, *edited.unstaged]) if path in touched]
    if meets:
        untracked = [path for path in meets if path in edited.untracked]
        editing = [path for path in meets if path not in edited.untracked]
        committable = all(_yours_to_commit(path, vault) for path in meets)
        raise EditsInTheWay(remote, editing, untracked, committable)


def _yours_to_commit(path: str, vault: Vault) -> bool:
    """What `--include-edits` commits: memories and proposals, never any other file."""
    return merges_by_key(path, vault.config)


_CONFLICT_LINE = re.compile(r"^CONFLICT \(([^)]*)\): (.*)$", re.M)


def _merge(vault: Vault, report: SyncReport, theirs: str, short_ref: str) -> None:
    root = vault.root
    # Every memory file both sides changed is left to `_settle`, which merges it the way
    # the merge driver does, in this process: starting Python once per file would make
    # a sync of a thousand such files take minutes. A `git pull` by hand uses the driver.
    result = _git(
        root,
        "-c",
        f"merge.{gitsync.DRIVER}.driver=false",
        "merge",
        "--no-edit",
        "-m",
        f"{MERGE_SUBJECT}{short_ref}",
        theirs,
        check=False,
    )
    report.merged = True
    if result.returncode != 0:
        unmerged, modes = _unmerged(root)
        if not unmerged:
            if gitsync.rev(root, "MERGE_HEAD"):
                _git(root, "merge", "--abort", check=False)
            raise MergeStopped(_last_line(result.stderr or result.stdout))
        named: set[str] = set()
        for kind, text in _CONFLICT_LINE.findall(result.stdout):
            # A rename git could not merge names both paths; a file deleted on one side
            # and changed on the other is said once, by `_settle`, in memoryctl's words.
            if kind.startswith("rename"):
                named.update(path for path in unmerged if path in text)
                said = text.strip().rstrip(".")
                report.notices.append(f"{said}; nothing was deleted, both paths are kept")
        _settle(vault, report, unmerged, modes, named, short_ref)
        done = _git(root, *gitsync.NO_FILTER, "commit", "--no-edit", check=False)
        if done.returncode != 0:  # a hook of the person's refused it, say
            _abort_merge(vault)
            raise MergeStopped(_last_line(done.stderr or done.stdout))
    _conflicts_to_proposals(vault, report, theirs)


def _unmerged(root: Path) -> tuple[dict[str, dict[int, str]], dict[str, str]]:
    """Paths git could not merge, with their stages (1 ancestor, 2 ours, 3 theirs), and
    the mode git would give each merged file."""
    found: dict[str, dict[int, str]] = {}
    modes: dict[str, dict[int, str]] = {}
    listing = _git(root, "ls-files", "-u", "-z").stdout
    for entry in listing.split("\0"):
        if not entry:
            continue
        info, _, path = entry.partition("\t")
        mode, blob, stage = info.split()
        found.setdefault(path, {})[int(stage)] = blob
        modes.setdefault(path, {})[int(stage)] = mode
    return found, {path: _merged_mode(stages) for path, stages in modes.items()}


def _merged_mode(modes: dict[int, str]) -> str:
    """A merged file's mode, as git merges modes: the side that changed it from the
    ancestor's (an executable bit set on one device), else this device's."""
    base, ours, theirs = modes.get(1), modes.get(2), modes.get(3)
    if ours is not None and theirs is not None and ours == base:
        return theirs
    return ours or theirs or "100644"


def _blobs(root: Path, ids: set[str]) -> dict[str, bytes]:
    """Many blobs read by one `git cat-file --batch`."""
    return clear_secrets.read_objects(root, sorted(ids))


def _settle(
    vault: Vault,
    report: SyncReport,
    unmerged: dict[str, dict[int, str]],
    modes: dict[str, str],
    named: set[str],
    short_ref: str,
) -> None:
    """Resolve the paths git left unmerged, keeping every version that exists: memories
    key by key, other files as git merges text, which must merge cleanly. Each keeps
    the mode git would give it (`modes`)."""
    root = vault.root
    blobs = _blobs(root, {blob for stages in unmerged.values() for blob in stages.values()})
    plain = _plain_merges(vault, unmerged, blobs)
    clashing = sorted(path for path, merged in plain.items() if merged is None)
    if clashing:
        _abort_merge(vault)
        raise TextConflicts(short_ref, clashing)
    keys = gitdriver.Keys(root)
    settled: dict[str, bytes] = {}
    for path, stages in unmerged.items():
        stored = plain.get(path)
        if stored is not None:
            pass  # not a memory, and its text merged cleanly
        elif 2 in stages and 3 in stages:
            base = blobs[stages[1]] if 1 in stages else None
            stored = gitdriver.merge_stored(
                root, path, base, blobs[stages[2]], blobs[stages[3]], keys
            )
            if stored is None:
                _abort_merge(vault)
                raise MergeStopped(f"{path} is secret and this device has no key to seal it")
        else:
            # Deleted on one side and changed (or renamed) on the other: keep the file.
            stored = blobs[stages[2] if 2 in stages else stages[3]]
            if path not in named:
                report.notices.append(
                    f"{path}: deleted on one device and changed on the other; the file is kept"
                )
        _write_worktree(root, path, stored, keys, executable=modes[path] == "100755")
        settled[path] = stored
    # Staged as stored (sealed where secret), so git starts no filter to add them.
    blobs = write_blobs(root, list(settled.values()))
    entries = "".join(
        f"0 {'0' * 40}\t{path}\x00{modes[path]} {blob}\t{path}\x00"
        for path, blob in zip(settled, blobs, strict=True)
    )
    _run(root, [*gitsync.NO_FILTER, "update-index", "-z", "--index-info"], entries.encode())


def _plain_merges(
    vault: Vault, unmerged: dict[str, dict[int, str]], blobs: dict[str, bytes]
) -> dict[str, bytes | None]:
    """The files changed on both sides that are not memories (nor sealed), merged as git
    merges text; None for one whose lines conflict."""
    merged: dict[str, bytes | None] = {}
    for path, stages in unmerged.items():
        if 2 not in stages or 3 not in stages or merges_by_key(path, vault.config):
            continue
        versions = [blobs[stages[n]] if n in stages else None for n in (1, 2, 3)]
        if any(v is not None and seal.is_sealed(v) for v in versions):
            continue
        base, ours, theirs = versions
        assert ours is not None and theirs is not None
        merged[path] = merge_plain(base, ours, theirs)
    return merged


def _write_worktree(
    root: Path, path: str, stored: bytes, keys: gitdriver.Keys, *, executable: bool
) -> None:
    """Write a file as the working tree holds it (opened, when sealed and the key is
    here), executable or not as git has it."""
    key = keys.get() if seal.is_sealed(stored) else None
    if key is not None:
        with contextlib.suppress(seal.SealError):  # kept sealed; the index says why
            stored = seal.unseal(stored, key)
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(stored)
    mode = target.stat().st_mode & 0o777
    wanted = mode | (mode & 0o444) >> 2 if executable else mode & ~0o111
    if wanted != mode:
        target.chmod(wanted)


def _conflicts_to_proposals(vault: Vault, report: SyncReport, theirs: str | None) -> None:
    """File the conflicts the merge driver recorded as proposals; `theirs` names the
    other side's commit, or None for the last merge made (asked only when a conflict
    was recorded)."""
    from memoryctl import conflicts

    recorded = gitsync.take_conflicts(vault.root)
    if not recorded:
        return
    if theirs is None:
        root = vault.root
        theirs = gitsync.last_merged_side(root) or gitsync.rev(root, "HEAD") or ""
    written = conflicts.file_conflicts(vault, recorded, theirs, report.at)
    report.conflicts += written.conflicts
    report.notices += written.notices


def _seal_history(vault: Vault, report: SyncReport) -> None:
    from memoryctl import sealing

    done = sealing.seal_history(vault, report.remote)
    if not done.paths:
        report.notices.append(
            f"No commit {report.remote} lacks holds a secret memory in clear; none was rewritten."
        )
        return
    report.notices.append(
        f"Rewrote {done.commits} commits {report.remote} did not have, with "
        f"{_listed(done.paths)} sealed in them; the old ones stay in git's reflog here."
    )
    if done.new_root:
        report.notices.append(
            "The vault's first commit was among them, so its id changed; the sealing key is "
            "filed under the new one too (memoryctl keys export carries it)."
        )


def _refuse_secrets_in_clear(vault: Vault, remote: str, head: str) -> None:
    """Nothing leaves the device that holds a secret memory unsealed: of what the push
    would send (the commits the remote's branches do not reach), no memory or proposal
    may be a plain secret one."""
    sealable = partial(merges_by_key, config=vault.config)
    found = clear_secrets.in_history(vault.root, [head], [f"--remotes={remote}"], sealable)
    if found:
        raise SecretsInClear(remote, found)


def _push(root: Path, remote: str, branch: str, extra: list[str]) -> None:
    upstream = [] if gitsync.upstream_remote(root, branch) else ["--set-upstream"]
    pushed = _git(root, "push", *upstream, *extra, remote, f"HEAD:refs/heads/{branch}", check=False)
    if pushed.returncode != 0:
        text = pushed.stderr
        if "rejected" in text or "denied" in text or "hook declined" in text:
            reason = _last_line(text.split("hint:")[0])
            raise Refused(remote, reason)
        raise Unreachable(remote, _first_line(text))


def _push_over(
    vault: Vault, report: SyncReport, remote: str, branch: str, theirs: str
) -> SyncReport:
    """Put this device's history back on a remote whose history was rewritten, keeping
    the rewritten one here under refs/memoryctl/ so nothing is lost."""
    root = vault.root
    keep = f"refs/memoryctl/rewritten/{remote}/{branch}/{theirs[:12]}"
    _git(root, "update-ref", keep, theirs)
    _push(root, remote, branch, [f"--force-with-lease=refs/heads/{branch}:{theirs}"])
    head = gitsync.rev(root, "HEAD")
    assert head is not None
    report.forced = True
    report.notices.append(
        f"{remote}/{branch} had a rewritten history; it now holds this device's again. "
        f"The rewritten one is kept here as {keep}."
    )
    _write_state(root, remote, branch, head, report.at)
    return report


def _reindex(vault: Vault, report: SyncReport, before: str | None, head: str) -> None:
    if before == head:
        return
    changed = gitsync.changed_paths(vault.root, before, head)
    report.changed = changed
    memories = [p for p in changed if is_memory_path(p, vault.config)]
    if memories:
        vault.index.sync_paths(memories)
        arrived = set(memories)
        for path, reason in vault.index.broken_files():
            if path in arrived:
                report.notices.append(
                    f"{path} arrived and cannot be read as a memory: {reason}. It is kept "
                    "exactly as it came; fix it in an editor (`memoryctl doctor` lists it)."
                )
