"""Secret memories in clear where git would store them, or has stored them: the files a
first commit must leave out until the key is there, and the commits of a history that
hold a secret memory unsealed (a vault made before sealing existed, or a file committed
by hand where the filter was not set up). docs/SYNC.md, Sealed from the first commit.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryctl.storage import seal
from memoryctl.storage.gitrepo import _git

# Every line that could say `visibility: secret` (seal.is_secret decides): git grep
# reads the folder in C, so a first commit of 100,000 files opens only these in Python.
_VISIBILITY_LINE = r"^visibility[[:blank:]]*:"


def untracked_secrets(root: Path, sealable: Callable[[str], bool]) -> list[str]:
    """Files git would add (untracked, not ignored) that are secret memories in clear."""
    found = _git(
        root,
        "grep",
        "--untracked",
        "-l",
        "-z",
        "-E",
        _VISIBILITY_LINE,
        "--",
        "*.md",
        check=False,
    )
    named = [p for p in found.stdout.split("\0") if p and sealable(p)]
    tracked = set(_git(root, "ls-files", "-z", "--", *named).stdout.split("\0")) if named else set()
    return sorted(p for p in named if p not in tracked and _secret_file(root / p))


def _secret_file(path: Path) -> bool:
    try:
        return seal.is_secret(path.read_bytes())
    except OSError:
        return False


@dataclass(frozen=True)
class InClear:
    """A secret memory stored unsealed: the first commit that holds it, and its path."""

    commit: str
    path: str
    blob: str


def in_history(
    root: Path, tips: list[str], known: list[str], sealable: Callable[[str], bool]
) -> list[InClear]:
    """Secret memories stored in clear in the commits reachable from `tips` and not from
    `known` (what a remote already has), by the first commit that holds each."""
    listed = _git(root, "rev-list", "--objects", *tips, "--not", *known, "--").stdout
    candidates: dict[str, str] = {}
    for line in listed.splitlines():
        blob, _, path = line.partition(" ")
        if path.lower().endswith(".md") and sealable(path):
            candidates.setdefault(blob, path)
    if not candidates:
        return []
    read = read_objects(root, list(candidates))
    plain = [blob for blob, data in read.items() if seal.is_secret(data)]
    return [
        InClear(_first_commit_holding(root, blob, tips, known), candidates[blob], blob)
        for blob in plain
    ]


def read_objects(root: Path, ids: list[str], kind: bytes = b"blob") -> dict[str, bytes]:
    """The content of each of these objects of this kind, with one git command."""
    out = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input="".join(f"{i}\n" for i in ids).encode(),
        capture_output=True,
        check=True,
    ).stdout
    return dict(_batch(out, kind))


def _batch(output: bytes, kind: bytes) -> Iterator[tuple[str, bytes]]:
    """(object id, content) of each object of this kind in `git cat-file --batch` output."""
    at = 0
    while at < len(output):
        end = output.index(b"\n", at)
        header = output[at:end].split()
        at = end + 1
        if len(header) < 3:  # "<id> missing"
            continue
        size = int(header[2])
        if header[1] == kind:
            yield header[0].decode(), output[at : at + size]
        at += size + 1


def _first_commit_holding(root: Path, blob: str, tips: list[str], known: list[str]) -> str:
    found = _git(
        root,
        "log",
        "--reverse",
        "--format=%H",
        f"--find-object={blob}",
        *tips,
        "--not",
        *known,
        "--",
    ).stdout.split()
    return found[0] if found else ""
