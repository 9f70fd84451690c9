"""Writing files so that a crash or a concurrent edit never loses text."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from memoryctl.storage.notefile import sha256


class ChangedOnDisk(Exception):
    """The file is not what memoryctl read, so writing would lose someone's edit."""

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"{path} {detail}; not overwritten. Read it again and retry.")
        self.path = path


def current_sha(path: Path) -> str | None:
    try:
        return sha256(path.read_bytes())
    except FileNotFoundError:
        return None


def write_atomic(
    path: Path, data: bytes, expected_sha: str | None, *, durable: bool = True
) -> None:
    """Replace `path` with `data` if it still holds the bytes with `expected_sha`.

    `expected_sha=None` means the file must not exist yet. The new bytes go to a
    temporary file in the same folder first, so the file is always whole: the old text
    or the new, never half of each. `durable=False` skips the flushes to disk, for a
    note a power cut may lose (it still survives the process being killed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    mode = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o777
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if expected_sha is None:
            try:
                os.link(tmp, path)  # fails, rather than clobbers, if the name was taken
            except FileExistsError:
                raise ChangedOnDisk(path, "appeared while memoryctl was writing it") from None
            return
        found = current_sha(path)
        if found != expected_sha:
            detail = "was deleted" if found is None else "changed on disk since memoryctl read it"
            raise ChangedOnDisk(path, detail)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
    if durable:
        _flush(path.parent)


def _flush(folder: Path) -> None:
    """Flush a folder (or a file) to disk; best effort, as a folder cannot always be."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def create_all(files: list[tuple[Path, bytes]]) -> list[tuple[int, int]]:
    """Create many new files, each whole when its name appears, flushed to disk together
    at the end instead of one by one (an import of 10,000 memories would otherwise
    spend most of its time waiting on the disk). The flushes run side by side, so the
    file system groups them; `os.sync()` would also wait for every other program's
    unwritten data, seconds on a busy machine, while the vault's write lock is held.

    A name that is already taken is never overwritten: it stops the rest with
    ChangedOnDisk, leaving the files made so far in place. Returns each file's size and
    modification time as written (taken from the file itself, before it had its name).
    """
    folders = set()
    created: list[Path] = []
    stamps: list[tuple[int, int]] = []
    for path, data in files:
        folders.add(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            with open(tmp, "xb") as handle:
                handle.write(data)
                st = os.fstat(handle.fileno())
            stamps.append((st.st_size, st.st_mtime_ns))
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise ChangedOnDisk(path, "appeared while memoryctl was writing it") from None
            created.append(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(_flush, created))
    for folder in folders:
        _flush(folder)
    return stamps
