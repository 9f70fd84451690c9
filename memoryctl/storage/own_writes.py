"""What this process's own writes left in each file, so its watcher skips them.

A file memoryctl wrote is indexed as it is written; when the watcher then sees it
change, the size and modification time the write left tell it apart from an edit made
since (see `storage/watch.py`). The record is bounded without losing what the watcher
is about to ask: it forgets the oldest entries only, only as a write begins (a write
never forgets its own files, however many an import holds), and never those of a
write that ended moments ago, whose file events may still be on their way.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

Stamp = tuple[int, int]  # (size, mtime_ns)

# Entries kept past the grace below: a forgotten one only costs the watcher a re-read.
KEPT = 10_000
# How long after a write ends its files' events may still reach the watcher.
GRACE_SECONDS = 60.0


class OwnWrites:
    """The (size, mtime_ns) each of this process's writes left at a vault path, oldest
    first. Safe to read from another thread (the watcher's) while a write adds to it."""

    def __init__(
        self,
        kept: int = KEPT,
        grace: float = GRACE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kept = kept
        self.grace = grace
        self._clock = clock
        self._stamps: OrderedDict[str, tuple[Stamp, int]] = OrderedDict()
        self._write = 0  # the number of the write that adds entries now
        self._ended: dict[int, float] = {}  # when each write with entries left ended

    def get(self, relpath: str) -> Stamp | None:
        found = self._stamps.get(relpath)
        return None if found is None else found[0]

    def __len__(self) -> int:
        return len(self._stamps)

    def remember(self, relpath: str, stamp: Stamp) -> None:
        self._stamps[relpath] = (stamp, self._write)
        self._stamps.move_to_end(relpath)

    def write_began(self) -> None:
        """Forget the oldest entries past `kept`, of writes that ended `grace` ago."""
        cutoff = self._clock() - self.grace
        while len(self._stamps) > self.kept:
            _, write = next(iter(self._stamps.values()))
            if self._ended.get(write, cutoff) > cutoff:
                break
            self._stamps.popitem(last=False)
        oldest = next(iter(self._stamps.values()))[1] if self._stamps else self._write
        for write in [w for w in self._ended if w < oldest]:
            del self._ended[write]
        self._write += 1

    def write_ended(self) -> None:
        self._ended[self._write] = self._clock()
