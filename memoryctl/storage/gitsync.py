"""git for syncing a vault: the merge driver and sealing filter set-up, fetch, merge, push.

Everything runs the person's own `git`, so their config, credentials, ssh-agent and
hooks apply; memoryctl keeps no credential. The merge driver and the filter are this
package run by the Python that installed it (`python -m memoryctl.storage.gitdriver`),
recorded in the repository's own config, since git must be able to start them without
a shell that knows about a virtual environment.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memoryctl.storage import seal
from memoryctl.storage.gitrepo import (
    GitError,
    _git,
    _git_dir,
    blob_id,
    committed_blobs,
    status,
)

DRIVER = "memoryctl"
ATTRIBUTES = ".gitattributes"
ATTRIBUTE_LINE = f"*.md merge={DRIVER} filter={DRIVER}"
ATTRIBUTES_TEXT = (
    "# memoryctl: memory files are merged key by key, and secret memories are sealed\n"
    f"{ATTRIBUTE_LINE}\n"
)
STATE_DIR = "memoryctl"  # inside the git folder: what this device knows, never pushed


def _command(*args: str) -> str:
    """What git runs: this package with this Python, while that Python is there. Once it
    is gone (a virtual environment removed or moved), the merge driver falls back to
    git's own text merge and the filter refuses, each with a line saying how to set
    them up again (any memoryctl command in the vault does: `repair`)."""
    python = shlex.quote(sys.executable)
    run = shlex.join([sys.executable, "-m", "memoryctl.storage.gitdriver", *args])
    gone = f"memoryctl: {GONE_PYTHON.format(python=sys.executable)}"
    if args[0] == "merge":
        fallback = (
            f"echo {shlex.quote(gone + '; merged by git instead')} >&2; "
            "git merge-file -L ours -L base -L theirs %A %O %B"
        )
    else:
        fallback = f"echo {shlex.quote(gone)} >&2; exit 1"
    return f"if [ -x {python} ]; then exec {run}; fi; {fallback}"


GONE_PYTHON = (
    "{python} is gone, and git runs the memoryctl merge driver and sealing filter "
    "with it; run memoryctl doctor in the vault to set them up again"
)
_RECORDED = re.compile(r"if \[ -x (.+?) \]; then exec ")


def wanted_config(sealing: bool = True) -> dict[str, str]:
    merging = {
        f"merge.{DRIVER}.name": "memoryctl: memory files merged key by key",
        f"merge.{DRIVER}.driver": _command("merge", "%O", "%A", "%B", "%P"),
    }
    if not sealing:
        return merging
    return {
        **merging,
        f"filter.{DRIVER}.process": _command("filter"),
        f"filter.{DRIVER}.required": "true",
    }


# When memoryctl commits files none of which is secret, it needs no filter: these
# settings turn it off for that one command, which saves starting Python in git.
NO_FILTER = [
    "-c",
    f"filter.{DRIVER}.process=",
    "-c",
    f"filter.{DRIVER}.clean=",
    "-c",
    f"filter.{DRIVER}.smudge=",
    "-c",
    f"filter.{DRIVER}.required=false",
]


def git_dir(root: Path) -> Path:
    path = Path(_git(root, "rev-parse", "--git-dir").stdout.strip())
    return path if path.is_absolute() else root / path


def state_dir(root: Path) -> Path:
    return git_dir(root) / STATE_DIR


def configured(root: Path) -> dict[str, str]:
    """The driver and filter settings this repository has now."""
    result = _git(
        root, "config", "--local", "--get-regexp", rf"^(merge|filter)\.{DRIVER}\.", check=False
    )
    found = {}
    for line in result.stdout.splitlines() if result.returncode == 0 else []:
        key, _, value = line.partition(" ")
        found[key] = value
    return found


def has_attributes(root: Path) -> bool:
    try:
        text = (root / ATTRIBUTES).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return False
    return ATTRIBUTE_LINE in (line.strip() for line in text.splitlines())


@dataclass(frozen=True)
class Setup:
    """What `install` changed: the repository's config keys and whether .gitattributes."""

    config: tuple[str, ...] = ()
    attributes: bool = False
    was_missing: bool = False  # the merge driver was not set up at all on this device

    @property
    def changed(self) -> bool:
        return bool(self.config or self.attributes)


def install(root: Path, *, sealing: bool = True) -> Setup:
    """Set up the merge driver and (unless told not to) the sealing filter here.

    The config is this device's; `.gitattributes` is written (not committed) only when
    it lacks the line, keeping whatever else the person put there. A vault with no
    secret memory needs no filter, and git then starts no Python to add a file."""
    have = configured(root)
    was_missing = f"merge.{DRIVER}.driver" not in have
    changed = []
    for key, value in wanted_config(sealing).items():
        if have.get(key) != value:
            _git(root, "config", "--local", key, value)
            changed.append(key)
    attributes = False
    if not has_attributes(root):
        path = root / ATTRIBUTES
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        path.write_text(old + ATTRIBUTES_TEXT, encoding="utf-8")
        attributes = True
    return Setup(tuple(changed), attributes, was_missing)


# What `recorded_pythons` read from each config file, by its path and stat: a process
# that opens the vault again (a test suite, a face that reopens it) reads it once.
_RECORDED_SEEN: dict[Path, tuple[tuple[int, int, int], frozenset[str]]] = {}


def recorded_pythons(root: Path) -> set[str]:
    """The Python interpreters this repository's config has git run memoryctl with,
    read from the config file itself (no git process: every command asks), and read
    again only when the file changed."""
    if not (root / ".git").exists():
        return set()
    try:
        config = _git_dir(root) / "config"
        stat = config.stat()
    except (OSError, GitError):
        return set()
    stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    seen = _RECORDED_SEEN.get(config)
    if seen is not None and seen[0] == stamp:
        return set(seen[1])
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    found = _pythons_in(text)
    _RECORDED_SEEN[config] = (stamp, frozenset(found))
    return found


def _pythons_in(text: str) -> set[str]:
    found = set()
    for line in text.splitlines():
        _, equals, value = line.partition("=")
        value = value.strip()
        if not equals or "memoryctl.storage.gitdriver" not in value:
            continue
        if value.startswith('"') and value.endswith('"'):
            value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        checked = _RECORDED.match(value)
        try:
            words = shlex.split(checked.group(1) if checked else value)
        except ValueError:
            continue
        if words:
            found.add(words[0])
    return found


def repair(root: Path) -> str | None:
    """Set the merge driver and the sealing filter up again with this Python when the
    one the config names is gone; what was done, in words, or None."""
    gone = sorted(python for python in recorded_pythons(root) if not os.path.exists(python))
    if not gone:
        return None
    sealing = f"filter.{DRIVER}.process" in configured(root)
    for key, value in wanted_config(sealing).items():
        _git(root, "config", "--local", key, value)
    return (
        f"{', '.join(gone)} is gone, and git ran the merge driver and the sealing filter "
        f"with it; they now run with {sys.executable}."
    )


def root_commit(root: Path) -> str | None:
    result = _git(root, "rev-list", "--max-parents=0", "HEAD", check=False)
    roots = sorted(result.stdout.split()) if result.returncode == 0 else []
    return roots[0] if roots else None


# --- what the merge driver found ------------------------------------------------------------


def conflict_folder(root: Path) -> Path:
    return state_dir(root) / "conflicts"


def take_conflicts(root: Path) -> list[dict[str, object]]:
    """The conflicts the merge driver recorded since the last call, oldest first; each
    file is removed once read."""
    folder = conflict_folder(root)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        path = folder / name
        if not name.endswith(".json"):
            continue
        try:
            found.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
        path.unlink(missing_ok=True)
    return found


# Git's own files for an operation left unfinished, and how the person finishes each.
_UNFINISHED = (
    ("rebase-merge", "a rebase", "`git rebase --continue` or `git rebase --abort`"),
    ("rebase-apply", "a rebase", "`git rebase --continue` or `git rebase --abort`"),
    ("MERGE_HEAD", "a merge", "`git commit` once it is resolved, or `git merge --abort`"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "`git cherry-pick --continue` or `--abort`"),
    ("REVERT_HEAD", "a revert", "`git revert --continue` or `--abort`"),
)


def unfinished(root: Path) -> tuple[str, str] | None:
    """A git operation left unfinished in the vault: (what it is, how to finish it)."""
    folder = git_dir(root)
    for name, what, how in _UNFINISHED:
        if (folder / name).exists():
            return what, how
    return None


def merge_message(root: Path) -> str:
    """The message of the merge in progress, as git prepared it."""
    try:
        return (git_dir(root) / "MERGE_MSG").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# --- remotes and branches ----------------------------------------------------------------------


def current_branch(root: Path) -> str:
    result = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    branch = result.stdout.strip()
    if not branch:
        raise GitError("the vault is not on a branch (a detached HEAD); check one out first")
    return branch


def remotes(root: Path) -> list[str]:
    return _git(root, "remote").stdout.split()


def upstream_remote(root: Path, branch: str) -> str | None:
    result = _git(root, "config", f"branch.{branch}.remote", check=False)
    return result.stdout.strip() or None


def rev(root: Path, ref: str) -> str | None:
    result = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return result.stdout.strip() or None


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    return _git(root, "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def last_merged_side(root: Path) -> str | None:
    """The other side of the last merge on this branch's own line (a `git pull` by hand,
    perhaps with commits of the person's after it)."""
    found = _git(root, "rev-list", "-1", "--merges", "--first-parent", "HEAD", check=False)
    merge = found.stdout.strip()
    return rev(root, f"{merge}^2") if merge else None


def shares_history(root: Path, one: str, other: str) -> bool:
    return _git(root, "merge-base", one, other, check=False).returncode == 0


def has_path(root: Path, ref: str, relpath: str) -> bool:
    return _git(root, "cat-file", "-e", f"{ref}:{relpath}", check=False).returncode == 0


def counts(root: Path, ours: str, theirs: str) -> tuple[int, int]:
    """(ahead, behind): commits only ours has, and commits only theirs has."""
    result = _git(root, "rev-list", "--left-right", "--count", f"{ours}...{theirs}")
    ahead, behind = result.stdout.split()
    return int(ahead), int(behind)


def changed_paths(root: Path, old: str | None, new: str) -> list[str]:
    if old is None:
        result = _git(root, "ls-tree", "-r", "--name-only", "-z", new)
    else:
        result = _git(root, "diff", "--name-only", "--no-renames", "-z", old, new)
    return [p for p in result.stdout.split("\0") if p]


@dataclass(frozen=True)
class Edited:
    """Files with changes git has not committed: staged ones, and the rest (changed in
    the working tree, or new)."""

    staged: list[str]
    unstaged: list[str]
    untracked: frozenset[str] = frozenset()  # those of `unstaged` git does not track


def edited(root: Path) -> Edited:
    """The person's uncommitted changes, found without starting the sealing filter: a
    secret memory git keeps sealed counts as changed only if it no longer seals to what
    git holds."""
    staged: list[str] = []
    unstaged: list[str] = []
    suspects: list[str] = []
    untracked: set[str] = set()
    for code, path in status(root, NO_FILTER):
        if code == "??":
            untracked.add(path)
        if code[0] not in " ?":
            staged.append(path)
        if code == " M" and path.lower().endswith(".md"):
            suspects.append(path)
        elif code[1] != " ":
            unstaged.append(path)
    if suspects:
        stored = committed_blobs(root, suspects)
        for path in suspects:
            try:
                plain = (root / path).read_bytes()
            except OSError:
                plain = b""
            if path not in stored or not seals_to(root, plain, stored[path]):
                unstaged.append(path)
    return Edited(staged, unstaged, frozenset(untracked))


def changed_since_fork(root: Path, ours: str, theirs: str) -> list[str]:
    """Files `theirs` changed since it parted from `ours` (both names of a rename)."""
    result = _git(root, "diff", "--name-only", "--no-renames", "-z", f"{ours}...{theirs}")
    return [p for p in result.stdout.split("\0") if p]


# --- memoryctl's own commits ---------------------------------------------------------------------


@dataclass
class CommitPlan:
    """How memoryctl commits some paths: git options, the message, what to add, and for
    a commit with a secret memory the stored form of each memory file (sealed or not)."""

    options: list[str]
    message: str
    paths: list[str]
    notices: list[str]
    stored: dict[str, bytes] | None = None


def has_sealed(root: Path) -> bool:
    """Whether the committed vault holds any sealed file."""
    result = _git(
        root, "grep", "-l", "-F", f"sealed: {seal.FORMAT}", "HEAD", "--", "*.md", check=False
    )
    return bool(result.stdout.strip())


_INSTALLED: set[Path] = set()  # the repositories this process has set up


def commit_plan(
    root: Path,
    paths: list[str],
    message: str,
    sealable: Callable[[str], bool],
    staged: dict[str, bytes] | None = None,
    known: Mapping[str, bytes] | None = None,
) -> CommitPlan:
    """Plan a commit of exactly these paths.

    With no secret memory among them git needs no filter, and is told so, which saves
    starting Python. With one, the vault's key must be there (a vault's first secret
    memory makes it) and memoryctl seals the files itself, handing git their bytes:
    starting the filter process costs far more than the rest of the commit. The secret memories'
    titles are taken out of the commit message, which is never sealed. `sealable` says
    which paths are memories or proposals, the only files sealed. `known` holds the
    bytes of files as they are on disk, where the caller knows them."""
    secrets: dict[str, tuple[str, str]] = {}
    files: dict[str, bytes] = {}
    given = {**(known or {}), **(staged or {})}
    for relpath in paths:
        if not relpath.lower().endswith(".md"):
            continue
        try:
            raw = given[relpath] if relpath in given else (root / relpath).read_bytes()
        except IsADirectoryError:
            return CommitPlan([], message, paths, [])  # git's own filter sees each file
        except OSError:
            continue
        files[relpath] = raw
        if seal.is_secret(raw) and sealable(relpath):
            secrets[relpath] = _title_and_id(relpath, raw)
    if not secrets:
        return CommitPlan(NO_FILTER, message, paths, [])
    from memoryctl.storage import sealkey

    notices = []
    extra: list[str] = []
    if root not in _INSTALLED:
        if install(root).attributes:
            extra.append(ATTRIBUTES)
        _INSTALLED.add(root)
    key = sealkey.load_key(root, cached=True)
    if key is None:
        if has_sealed(root):
            raise sealkey.SealingKeyError(
                "this vault has sealed memories but this device has no key for them, so a "
                "secret memory cannot be committed; import the key first"
            )
        key = sealkey.new_key(root)
        notices.append(
            f"Made this vault's sealing key ({key.id}); it is in the keyring. Carry it to "
            "your other devices with memoryctl keys export and memoryctl keys import."
        )
    stored = {
        relpath: seal.seal(raw, key.secret) if relpath in secrets else raw
        for relpath, raw in files.items()
    }
    message = without_secrets(message, [(i, t, "") for t, i in secrets.values()])
    return CommitPlan(NO_FILTER, message, [*paths, *extra], notices, stored)


# A line of a secret memory's text shorter than this is not looked for in a message
# (a word or two, too common to tell anything).
_SHORTEST_SECRET_LINE = 8


def without_secrets(message: str, secrets: list[tuple[str, str, str]]) -> str:
    """A commit message with every (id, title, text) secret memory named by its id
    instead of its title, and any line of its text taken out: commit messages are never
    sealed, and every remote shows them."""
    for memory_id, title, text in secrets:
        for line in {line.strip() for line in text.splitlines()}:
            if len(line) >= _SHORTEST_SECRET_LINE:
                message = message.replace(line, "(secret text)")
        if title and title != seal.SEALED_TITLE:
            message = message.replace(title, f"secret memory {memory_id}")
    return message


def seals_to(root: Path, plain: bytes, blob: str) -> bool:
    """Whether these plain bytes are what a sealed blob in git holds (a clean secret)."""
    if not seal.is_secret(plain):
        return False
    from memoryctl.storage import sealkey

    key = sealkey.load_key(root, cached=True)
    return key is not None and blob_id(seal.seal(plain, key.secret)) == blob


def _title_and_id(relpath: str, raw: bytes) -> tuple[str, str]:
    from memoryctl.memory import memory_from_note, path_id
    from memoryctl.storage import notefile

    try:
        note = notefile.parse_bytes(raw)
    except notefile.NoteError:
        return "", path_id(relpath)
    memory = memory_from_note(relpath, note.data, note.body, "")
    return memory.title, memory.id
