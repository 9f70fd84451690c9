"""Writing files so that a crash or a concurrent edit never loses text."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
from collections import deque
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
    tmp = temporary_name(path)
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


def temporary_name(path: Path) -> Path:
    """Where a new version of `path` is written before it takes the name: a name of its
    own for each writer, which `memoryctl doctor` knows as memoryctl's."""
    return path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"


def replace_file(path: Path, data: bytes) -> None:
    """Replace a file only memoryctl writes (what this device remembers, never a file a
    person edits), whole: the old bytes or the new, however many write it at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)


def _flush(folder: Path) -> None:
    """Flush a folder (or a file) to disk; best effort, as a folder cannot always be."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def create_all(files: list[tuple[Path, bytes]]) -> list[tuple[int, int]]:
    """Create many new files, each whole when its name appears, in one pass: a file is
    flushed to disk by a thread of its own while the next ones are written, instead of
    one by one (an import of 10,000 memories would otherwise spend most of its time
    waiting on the disk). The flushes run side by side, so the file system groups them;
    `os.sync()` would also wait for every other program's unwritten data, seconds on a
    busy machine, while the vault's write lock is held.

    A name that is already taken is never overwritten: it stops the rest with
    ChangedOnDisk. Whatever stops the write (that, a full disk, Ctrl-C) removes the files
    it made, so that a change is written whole or not at all, never left half-made for
    no commit. Returns each file's size and modification time as written (taken from the
    file itself, before it had its name).
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    # Each folder, open where the system allows, so that a name is found in it directly.
    folders: dict[Path, int | None] = {}
    stamps: list[tuple[int, int]] = []
    written: list[int] = []  # open, not yet handed to a thread
    flushing: deque[Future[None]] = deque()
    made: list[Path] = []
    making: Path | None = None  # stopped while making it: ours, unless its name was taken
    try:
        with ThreadPoolExecutor(_THREADS) as pool:
            try:
                for path, data in files:
                    if path.parent not in folders:
                        path.parent.mkdir(parents=True, exist_ok=True)
                        folders[path.parent] = os.open(path.parent, os.O_RDONLY) if _AT else None
                    making = path
                    fd = _new_file(path, folders[path.parent], data)
                    made.append(path)
                    making = None
                    written.append(fd)
                    st = os.fstat(fd)
                    stamps.append((st.st_size, st.st_mtime_ns))
                    if len(written) == _BATCH:
                        # Handed over before the thread is asked for: a Ctrl-C while it
                        # starts must not leave the batch to be closed a second time.
                        batch, written = written, []
                        flushing.append(pool.submit(_flush_and_close, batch))
                        if len(flushing) > _THREADS:  # so that few files are open at once
                            flushing.popleft().result()
            finally:
                flushing.append(pool.submit(_flush_and_close, written))
                for future in flushing:
                    future.result()
                for folder, fd in folders.items():
                    if fd is None:
                        _flush(folder)
                    else:
                        _flush_and_close([fd])
    except BaseException as error:
        if making is not None and not isinstance(error, ChangedOnDisk):
            made.append(making)
        for path in made:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        raise
    return stamps


_AT = {os.open, os.link, os.unlink} <= os.supports_dir_fd
_THREADS = 16
_BATCH = 16  # files a thread flushes in turn: handing over each one costs more
_NEW = os.O_WRONLY | getattr(os, "O_BINARY", 0)


def _new_file(path: Path, folder: int | None, data: bytes) -> int:
    """A file at `path` holding `data`, whole when its name appears; its descriptor,
    open. `folder` is its folder, open (None where the system cannot find a name in an
    open folder). Where the system has them the bytes go into a file without a name
    (Linux's O_TMPFILE), which then takes the name: one entry made in the folder
    instead of three."""
    fd = _unnamed(folder)
    tmp = None
    if fd is None:
        tmp = f".{path.name}.{secrets.token_hex(4)}.tmp"
        if folder is None:
            tmp = str(path.parent / tmp)
        fd = os.open(tmp, _NEW | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=folder)
    name = path.name if folder is not None else str(path)
    try:
        _write_all(fd, data)
        if tmp is None:
            # linkat through /proc, as open(2) documents for O_TMPFILE
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=folder)
        else:
            os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except FileExistsError:
        os.close(fd)
        raise ChangedOnDisk(path, "appeared while memoryctl was writing it") from None
    except BaseException:
        os.close(fd)
        raise
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=folder)
    return fd


def _unnamed(folder: int | None) -> int | None:
    if folder is None or not _has_unnamed_files():
        return None
    try:
        return os.open(".", os.O_TMPFILE | _NEW, 0o666, dir_fd=folder)
    except OSError:  # a file system without them
        return None


@functools.cache
def _has_unnamed_files() -> bool:
    return hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _flush_and_close(fds: list[int]) -> None:
    for fd in fds:
        try:
            with contextlib.suppress(OSError):  # a folder cannot always be flushed
                os.fsync(fd)
        finally:
            os.close(fd)
