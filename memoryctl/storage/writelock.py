"""One writer at a time on a vault, across processes and threads.

Every face (the CLI, the TUI, the MCP server) writes through `Vault`, which holds this
lock around a write: the file, the index sync and the git commit. It is an OS file
lock (`flock` or `msvcrt`, through `filelock`), so a process that dies drops it. It is
never held while waiting for a person. Readers never take it: SQLite's WAL lets them
read while a writer writes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sys
import threading
import time
from collections import deque
from pathlib import Path

from filelock import FileLock, Timeout

HOLDER_SUFFIX = ".holder"
# How long each acquisition waited, in seconds (the newest 10,000), for the benchmarks.
WAITS: deque[float] = deque(maxlen=10_000)


class Busy(Exception):
    """Another writer held the vault for longer than the wait allowed."""

    def __init__(self, holder: str | None, waited: float) -> None:
        super().__init__(f"held by {holder or 'another process'}")
        self.holder = holder
        self.waited = waited


def lock_path(root: Path) -> Path:
    """Where a vault's write lock lives: inside `.git` when there is one (git ignores
    it there), else in the vault's own `.memoryctl/` folder."""
    git = root / ".git"
    if git.is_dir():
        return git / "memoryctl.lock"
    return root / ".memoryctl" / "write.lock"


def this_process() -> str:
    """How the holder of a lock is named to whoever waits for it."""
    # `python -c` puts "-c" first and the script's own arguments after it.
    command = "a Python script" if sys.argv[:1] == ["-c"] else _command(sys.argv[1:])
    return f"{command} (pid {os.getpid()})"


def _command(args: list[str]) -> str:
    """`memoryctl add` for `memoryctl --vault V add BODY`: the command, without its text."""
    after_option = False
    for arg in args:
        if arg.startswith("-"):
            after_option = arg in ("--vault",)
            continue
        if not after_option:
            return f"memoryctl {arg}"
        after_option = False
    return "memoryctl"


class WriteLock:
    """A reentrant lock for one vault, shared by every thread of the process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread = threading.RLock()
        self._file = FileLock(str(path), thread_local=False)
        self.depth = 0

    def acquire(self, timeout: float) -> None:
        started = time.monotonic()
        if not self._thread.acquire(timeout=max(timeout, 0.0)):
            raise Busy(self.holder(), time.monotonic() - started)
        if self.depth == 0:
            remaining = max(timeout - (time.monotonic() - started), 0.0)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file.acquire(timeout=remaining)
            except Timeout:
                self._thread.release()
                raise Busy(self.holder(), time.monotonic() - started) from None
            except BaseException:
                self._thread.release()
                raise
            WAITS.append(time.monotonic() - started)
            self._name_holder()
        self.depth += 1

    def release(self) -> None:
        self.depth -= 1
        try:
            if self.depth == 0:
                self._file.release()
        finally:
            self._thread.release()

    def _name_holder(self) -> None:
        since = dt.datetime.now().astimezone().strftime("%H:%M:%S")
        with contextlib.suppress(OSError):
            Path(f"{self.path}{HOLDER_SUFFIX}").write_text(
                f"{this_process()} since {since}", encoding="utf-8"
            )

    def holder(self) -> str | None:
        """Who holds the lock, as the holder wrote it down (it may be just leaving)."""
        try:
            text = Path(f"{self.path}{HOLDER_SUFFIX}").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return text[:200] or None


_LOCKS: dict[str, WriteLock] = {}
_REGISTRY = threading.Lock()


def for_vault(root: Path) -> WriteLock:
    """The one lock object this process uses for a vault, whichever `Vault` asks."""
    path = lock_path(root)
    with _REGISTRY:
        lock = _LOCKS.get(str(path))
        if lock is None:
            lock = _LOCKS[str(path)] = WriteLock(path)
        return lock
