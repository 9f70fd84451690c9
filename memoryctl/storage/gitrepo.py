"""The vault's git repository: commits for memoryctl's own changes, and history."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

_FALLBACK_IDENTITY = ["-c", "user.name=memoryctl", "-c", "user.email=memoryctl@localhost"]


class GitError(Exception):
    pass


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if check and result.returncode != 0:
        raise GitError(result.stderr.strip() or f"git {args[0]} failed")
    return result


def is_repo(root: Path) -> bool:
    if not (root / ".git").exists():
        return False
    return _git(root, "rev-parse", "--is-inside-work-tree", check=False).returncode == 0


def init(root: Path) -> None:
    _git(root, "init", "-q")


def first_commit(root: Path, paths: list[str], message: str) -> str | None:
    """The first commit of a new repository: exactly these paths, however many (they are
    staged in batches, never all on one command line); return the commit id."""
    for start in range(0, len(paths), 1000):
        _git(root, "add", "--", *paths[start : start + 1000])
    if not _git(root, "diff", "--cached", "--name-only").stdout.strip():
        return None
    _git(root, *_identity(root), "commit", "-q", "-m", message)
    return _git(root, "rev-parse", "HEAD").stdout.strip()


def untracked(root: Path) -> list[str]:
    """Files git does not track and does not ignore."""
    listed = _git(root, "ls-files", "--others", "--exclude-standard", "-z").stdout
    return [path for path in listed.split("\0") if path]


def _identity(root: Path) -> list[str]:
    configured = _git(root, "config", "user.email", check=False).stdout.strip()
    return [] if configured else _FALLBACK_IDENTITY


def commit(root: Path, paths: list[str], message: str) -> str | None:
    """Commit exactly these paths (never the user's other edits); return the commit id."""
    if not paths:
        return None
    _git(root, "add", "-A", "--", *paths)
    staged = _git(root, "diff", "--cached", "--name-only", "--", *paths).stdout.strip()
    if not staged:
        return None
    _git(root, *_identity(root), "commit", "-q", "-m", message, "--", *paths)
    return _git(root, "rev-parse", "HEAD").stdout.strip()


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
