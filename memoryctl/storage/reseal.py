"""Rewriting the commits a remote does not have yet, with every secret memory in them
sealed: the way out for a history that holds one in clear (docs/SYNC.md, Sealed from
the first commit). Each commit keeps every other byte (tree entries, author, dates,
message); only its secret memories' blobs, and so its id and its children's, change.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memoryctl.storage import clear_secrets, seal
from memoryctl.storage.gitrepo import _git, write_blobs

# Signatures name the commit's old bytes; a rewritten commit can only drop them.
_SIGNATURES = (b"gpgsig ", b"gpgsig-sha256 ")


@dataclass
class Resealed:
    commits: int = 0  # commits rewritten
    paths: list[str] = field(default_factory=list)  # secret memories now sealed in them
    old_root: str | None = None  # the first commit, when it was rewritten too
    new_root: str | None = None


def reseal(
    root: Path, branch: str, known: list[str], sealable: Callable[[str], bool], key: bytes
) -> Resealed:
    """Rewrite `branch`'s commits that `known` (a remote's refs) does not reach, with each
    secret memory in clear in them sealed under `key`."""
    found = clear_secrets.in_history(root, [branch], known, sealable)
    done = Resealed()
    if not found:
        return done
    plain = clear_secrets.read_objects(root, [f.blob for f in found])
    sealed_ids = write_blobs(root, [seal.seal(plain[f.blob], key) for f in found])
    swap = {f.blob: new for f, new in zip(found, sealed_ids, strict=True)}
    listed = _git(
        root, "rev-list", "--reverse", "--topo-order", "--parents", branch, "--not", *known, "--"
    ).stdout.splitlines()
    renamed: dict[str, str] = {}
    touched: set[str] = set()
    for line in listed:
        commit, *parents = line.split()
        raw = clear_secrets.read_objects(root, [commit], b"commit")[commit]
        tree, paths = _sealed_tree(root, raw, swap, sealable)
        touched |= paths
        renamed[commit] = _write_commit(root, raw, tree, [renamed.get(p, p) for p in parents])
        if not parents:
            done.old_root, done.new_root = commit, renamed[commit]
    head = listed[-1].split()[0]
    _git(root, "update-ref", f"refs/heads/{branch}", renamed[head], head)
    # git's index still names the plain blobs; it takes the sealed ones, and the working
    # files, plain, seal back to them.
    if touched:
        _git(root, "reset", "-q", renamed[head], "--", *sorted(touched), check=False)
    done.commits = len(listed)
    done.paths = sorted(touched)
    return done


def _sealed_tree(
    root: Path, raw: bytes, swap: dict[str, str], sealable: Callable[[str], bool]
) -> tuple[str, set[str]]:
    """The commit's tree with its plain secret blobs swapped for sealed ones, and the
    paths swapped."""
    tree = raw.split(b"\n", 1)[0].removeprefix(b"tree ").decode()
    listing = _git(root, "ls-tree", "-r", "-z", "--full-tree", tree).stdout.split("\0")
    entries, swapped = [], set()
    for record in filter(None, listing):
        info, _, path = record.partition("\t")
        mode, kind, sha = info.split()
        if kind == "blob" and sha in swap and sealable(path):
            sha = swap[sha]
            swapped.add(path)
        entries.append(f"{mode} {kind} {sha}\t{path}")
    if not swapped:
        return tree, swapped
    with tempfile.TemporaryDirectory() as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        subprocess.run(
            ["git", "update-index", "-z", "--index-info"],
            cwd=root,
            input="\0".join(entries).encode() + b"\0",
            env={**os.environ, **env},
            check=True,
            capture_output=True,
        )
        return _git(root, "write-tree", env=env).stdout.strip(), swapped


def _write_commit(root: Path, raw: bytes, tree: str, parents: list[str]) -> str:
    head, _, message = raw.partition(b"\n\n")
    lines, skipping = [f"tree {tree}".encode(), *(f"parent {p}".encode() for p in parents)], False
    for line in head.split(b"\n"):
        if line.startswith(b" ") and skipping:
            continue  # a signature's next line
        skipping = line.startswith(_SIGNATURES)
        if skipping or line.startswith((b"tree ", b"parent ")):
            continue
        lines.append(line)
    data = b"\n".join(lines) + b"\n\n" + message
    return (
        subprocess.run(
            ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
            cwd=root,
            input=data,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
