"""The vault's git repository: commits for memoryctl's own changes, and history."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_FALLBACK_IDENTITY = ["-c", "user.name=memoryctl", "-c", "user.email=memoryctl@localhost"]
# A git lock older than this is left by a git that stopped, not held by one running.
STALE_LOCK_SECONDS = 60
# How long a commit waits for another git (the person's, or an editor's) to let go.
LOCK_WAIT_SECONDS = 3.0


class GitError(Exception):
    pass


class GitLocked(GitError):
    """git's own lock file is there: another git is running, or one stopped half-way."""

    def __init__(self, lock: str, age: float | None) -> None:
        stale = age is not None and age >= STALE_LOCK_SECONDS
        if stale:
            minutes = int((age or 0) // 60)
            detail = (
                f"{lock} was left by a git that stopped {minutes} min ago; "
                "remove it if no git is running"
            )
        else:
            detail = f"another git holds {lock}; try again when it is done"
        super().__init__(detail)
        self.lock = lock
        self.age = age
        self.stale = stale


def _git(
    root: Path,
    *args: str,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=None if env is None else {**os.environ, **env},
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if check and result.returncode != 0:
        raise GitError(result.stderr.strip() or f"git {args[0]} failed")
    return result


def stale_lock(root: Path, now: float | None = None) -> tuple[str, float] | None:
    """`.git/index.lock` and its age in seconds, when a git that stopped left it."""
    lock = root / ".git" / "index.lock"
    try:
        age = (now or time.time()) - lock.stat().st_mtime
    except OSError:
        return None
    return (".git/index.lock", age) if age >= STALE_LOCK_SECONDS else None


class GitRefused(GitError):
    """The folder has a `.git`, but git will not work in it: another user owns the
    folder, or `.git` names a repository that has gone. Nothing is written there that
    could not be committed."""

    def __init__(self, root: Path, reason: str) -> None:
        self.root = root
        self.reason = reason
        super().__init__(f"git will not work in {root}: {reason}; nothing was written")


def refusal(root: Path) -> str | None:
    """Why git will not work in a folder that has a `.git`, in git's words (with the
    command it advises, if any); None when it works."""
    result = _git(root, "rev-parse", "--is-inside-work-tree", check=False)
    if result.returncode == 0:
        return None
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    reason = lines[0].removeprefix("fatal: ") if lines else "git rev-parse failed"
    advice = next((line for line in lines[1:] if line.startswith("git config")), None)
    return f"{reason} ({advice})" if advice else reason


def is_repo(root: Path) -> bool:
    return (root / ".git").exists() and refusal(root) is None


def refuse_unless_usable(root: Path) -> None:
    """Raise `GitRefused` when the folder has a `.git` that git will not work in."""
    reason = refusal(root) if (root / ".git").exists() else None
    if reason is not None:
        raise GitRefused(root, reason)


def init(root: Path) -> None:
    _git(root, "init", "-q")


def first_commit(
    root: Path,
    paths: list[str],
    message: str,
    *,
    leave_out: Sequence[str] = (),
    options: Sequence[str] = (),
) -> str | None:
    """The first commit of a new repository: exactly these paths, however many (they are
    staged in batches, never all on one command line), less the files in `leave_out`
    (a folder given as a path keeps them out too); return the commit id."""
    excluded = [f":(exclude,literal){path}" for path in leave_out]
    for start in range(0, len(paths), 1000):
        _git(root, *options, "add", "--", *paths[start : start + 1000], *excluded)
    if not _git(root, "diff", "--cached", "--name-only").stdout.strip():
        return None
    _git(root, *options, *_identity(root), "commit", "-q", "-m", message)
    return _git(root, "rev-parse", "HEAD").stdout.strip()


def untracked(root: Path) -> list[str]:
    """Files git does not track and does not ignore."""
    listed = _git(root, "ls-files", "--others", "--exclude-standard", "-z").stdout
    return [path for path in listed.split("\0") if path]


def _identity(root: Path) -> list[str]:
    configured = _git(root, "config", "user.email", check=False).stdout.strip()
    return [] if configured else _FALLBACK_IDENTITY


def commit(
    root: Path,
    paths: list[str],
    message: str,
    staged: Mapping[str, bytes] | None = None,
    options: Sequence[str] = (),
    known: Mapping[str, bytes] | None = None,
) -> str | None:
    """Commit exactly these paths (never the user's other edits); return the commit id.

    A path in `staged` is committed with those bytes instead of its working file, which
    is left as it is (memoryctl's change applied to the committed text, when the working
    file also holds the person's own uncommitted edits, or a secret memory sealed).
    `options` go before git's commands (`-c key=value`). `known` holds bytes files are
    thought to hold, so they need not be read again. How: `storage/gitcommit.py`.
    """
    if not paths:
        return None
    from memoryctl.storage import gitcommit

    return gitcommit.commit(root, paths, message, staged, options, known)


def _run(root: Path, args: list[str], data: bytes, env: Mapping[str, str] | None = None) -> bytes:
    """A git command fed bytes on stdin; its stdout."""
    try:
        result = subprocess.run(
            ["git", *args],
            cwd=root,
            input=data,
            capture_output=True,
            env=None if env is None else {**os.environ, **env},
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip()
        raise GitError(reason or f"git {args[0]} failed")
    return result.stdout


_GIT_DIRS: dict[Path, Path] = {}


def _git_dir(root: Path) -> Path:
    """The repository's git folder (asked of git once per process)."""
    if root not in _GIT_DIRS:
        dot_git = root / ".git"
        if dot_git.is_dir():
            _GIT_DIRS[root] = dot_git
        else:  # a worktree or a submodule: .git is a file naming the folder
            path = Path(_git(root, "rev-parse", "--git-dir").stdout.strip())
            _GIT_DIRS[root] = path if path.is_absolute() else root / path
    return _GIT_DIRS[root]


def _index_file(root: Path) -> Path:
    named = os.environ.get("GIT_INDEX_FILE")
    if named:
        return Path(named) if os.path.isabs(named) else root / named
    return _git_dir(root) / "index"


def write_blobs(root: Path, contents: list[bytes]) -> list[str]:
    """Store each of these as a blob, exactly as given (no filter ever sees them), with
    one git command however many there are; their ids, in order."""
    from memoryctl.storage import gitcommit

    return gitcommit.store_blobs(root, contents)


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob, worked out without asking git."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _tree_entries(root: Path, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """(mode, blob id) of each of these paths in a commit."""
    if not commit or not paths:
        return {}
    out = _git(root, "ls-tree", "-z", commit, "--", *paths).stdout
    entries = {}
    for record in out.split("\0"):
        if not record:
            continue
        info, _, relpath = record.partition("\t")
        mode, kind, sha = info.split()
        if kind == "blob":
            entries[relpath] = (mode, sha)
    return entries


def committed_blobs(root: Path, paths: list[str]) -> dict[str, str]:
    """The blob id each of these paths has in HEAD (a path HEAD lacks is left out)."""
    head = _git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
    return {path: sha for path, (_, sha) in _tree_entries(root, head, paths).items()}


def read_blob(root: Path, blob: str) -> bytes:
    try:
        result = subprocess.run(
            ["git", "cat-file", "blob", blob], cwd=root, capture_output=True, check=True
        )
    except (FileNotFoundError, subprocess.CalledProcessError) as error:
        raise GitError(f"cannot read {blob} from git") from error
    return result.stdout


def uncommitted(root: Path) -> list[str]:
    """Paths with changes git has not committed (modified, added, deleted or new)."""
    return [relpath for _, relpath in status(root)]


def status(root: Path, options: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(two-letter status, path) of each path with changes git has not committed, as
    `git status --porcelain` gives them (`options` go before the command)."""
    result = _git(
        root, *options, "status", "--porcelain", "-z", "--untracked-files=all", check=False
    )
    if result.returncode != 0:
        return []
    found = []
    records = iter(result.stdout.split("\0"))
    for record in records:
        if len(record) < 4:
            continue
        code, relpath = record[:2], record[3:]
        if "R" in code or "C" in code:
            next(records, None)  # the old name of a rename follows it
        found.append((code, relpath))
    return found


def last_commit(root: Path, relpath: str) -> str | None:
    result = _git(root, "log", "-1", "--format=%H", "--", relpath, check=False)
    return result.stdout.strip() or None


def is_committed_clean(root: Path, relpath: str) -> bool:
    result = _git(root, "status", "--porcelain", "--", relpath, check=False)
    return result.returncode == 0 and not result.stdout.strip()


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str
    author: str
    subject: str
    path: str
    diff: str


def history(root: Path, relpath: str) -> list[Commit]:
    """Commits that touched the file, newest first, following it across renames."""
    sep = "\x1e"
    result = _git(
        root,
        "log",
        "--follow",
        "-p",
        "--no-color",
        f"--format={sep}%H%x1f%aI%x1f%an%x1f%s",
        "--",
        relpath,
        check=False,
    )
    if result.returncode != 0:
        return []
    commits = []
    for chunk in result.stdout.split(sep)[1:]:
        header, _, diff = chunk.partition("\n")
        sha, date, author, subject = header.split("\x1f", 3)
        path = relpath
        for line in diff.splitlines():
            if line.startswith("+++ b/"):
                path = line[6:]
                break
        commits.append(Commit(sha, date, author, subject, path, diff.strip("\n")))
    return commits


def show_file(root: Path, commit: str, relpath: str) -> str | None:
    result = _git(root, "show", f"{commit}:{relpath}", check=False)
    return result.stdout if result.returncode == 0 else None


@dataclass(frozen=True)
class LineChange:
    """One commit's change to one file, kept to the lines that match a pattern."""

    sha: str
    message: str
    path: str
    removed: tuple[str, ...]
    added: tuple[str, ...]


def line_changes(root: Path, pattern: str) -> list[LineChange]:
    """Every commit's removed and added lines matching `pattern` (a regex), newest first."""
    result = _git(
        root,
        "log",
        "-p",
        "--no-color",
        "--no-renames",
        "--format=%x1e%H%x1f%B%x1d",
        f"-G{pattern}",
        check=False,
    )
    if result.returncode != 0:
        return []
    matcher = re.compile(pattern)
    changes: list[LineChange] = []
    for chunk in result.stdout.split("\x1e")[1:]:
        header, _, diff = chunk.partition("\x1d")
        sha, _, message = header.partition("\x1f")
        for part in ("\n" + diff).split("\ndiff --git ")[1:]:
            path = ""
            removed: list[str] = []
            added: list[str] = []
            for line in part.splitlines():
                if line.startswith("+++ b/"):
                    path = line[6:]
                elif line.startswith(("+++", "---")):
                    continue
                elif line.startswith("-") and matcher.search(line[1:]):
                    removed.append(line[1:])
                elif line.startswith("+") and matcher.search(line[1:]):
                    added.append(line[1:])
            if path and (removed or added):
                changes.append(LineChange(sha, message.strip(), path, tuple(removed), tuple(added)))
    return changes
