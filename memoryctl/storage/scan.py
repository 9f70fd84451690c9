"""Find the memory files in a vault: every `.md` file that is not ignored."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from memoryctl.storage.config import ALWAYS_IGNORED_DIRS, VaultConfig


class FileStat(NamedTuple):
    """A tuple, not a dataclass: a vault of 100,000 files makes 100,000 of them on
    every open."""

    relpath: str
    size: int
    mtime_ns: int


@dataclass
class ScanResult:
    files: list[FileStat]
    skipped: list[tuple[str, str]]


def is_memory_path(relpath: str, config: VaultConfig) -> bool:
    parts = relpath.split("/")
    if any(part in ALWAYS_IGNORED_DIRS or part.startswith(".") for part in parts[:-1]):
        return False
    return relpath.lower().endswith(".md") and not config.is_ignored(relpath)


def _inside(root: Path, path: str) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(root)
    except ValueError:
        return False
    return True


def scan(root: Path, config: VaultConfig) -> ScanResult:
    """Stat every memory file under root. Symlinks that lead outside the vault are skipped."""
    real_root = Path(os.path.realpath(root))
    files: list[FileStat] = []
    skipped: list[tuple[str, str]] = []
    is_ignored = config.is_ignored
    stack = [""]
    while stack:
        prefix = stack.pop()
        folder = os.path.join(root, prefix) if prefix else str(root)
        try:
            with os.scandir(folder) as found:
                entries = list(found)
        except OSError as error:
            skipped.append((prefix or ".", f"cannot read folder: {error.strerror}"))
            continue
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if name in ALWAYS_IGNORED_DIRS or name.startswith("."):
                    continue
                if not is_ignored(f"{prefix}{name}/"):
                    stack.append(f"{prefix}{name}/")
                continue
            # Folders were filtered on the way down, so only the file itself is left to check.
            if name[-3:].lower() != ".md":
                continue
            relpath = f"{prefix}{name}"
            if is_ignored(relpath):
                continue
            if entry.is_symlink():
                # Never followed: a link out of the vault would expose other files, and
                # a link inside it would index the same note twice.
                reason = (
                    "symlink points outside the vault; not followed"
                    if not _inside(real_root, entry.path)
                    else "symlink; not followed (the file it points to is read where it is)"
                )
                skipped.append((relpath, reason))
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            try:
                stat = entry.stat()
            except OSError as error:
                skipped.append((relpath, f"cannot read: {error.strerror}"))
                continue
            files.append(FileStat(relpath, stat.st_size, stat.st_mtime_ns))
    files.sort()
    return ScanResult(files, skipped)
