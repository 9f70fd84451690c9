"""The record of this process's own writes stays bounded without the watcher re-reading
what memoryctl just wrote: the oldest entries go first, only as a write begins, and
never those of a write that ended moments ago."""

from __future__ import annotations

from pathlib import Path

from review_helpers import note_text

from memoryctl.storage.own_writes import OwnWrites
from memoryctl.storage.vault import Vault
from memoryctl.storage.watch import relevant_paths


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def one_write(record: OwnWrites, paths: list[str], stamp: tuple[int, int] = (1, 1)) -> None:
    record.write_began()
    for path in paths:
        record.remember(path, stamp)
    record.write_ended()


def test_a_write_larger_than_the_record_keeps_every_file_it_wrote():
    record = OwnWrites(kept=10, clock=Clock())
    one_write(record, [f"m/{n}.md" for n in range(50)])
    assert len(record) == 50
    assert record.get("m/0.md") == (1, 1) and record.get("m/49.md") == (1, 1)


def test_the_next_write_moments_later_keeps_what_the_last_one_wrote():
    clock = Clock()
    record = OwnWrites(kept=10, grace=60, clock=clock)
    one_write(record, [f"m/{n}.md" for n in range(50)])
    clock.now += 5  # the watcher has not seen the files' events yet
    one_write(record, ["proposals/p.md"])
    assert all(record.get(f"m/{n}.md") for n in range(50))


def test_past_the_grace_only_the_oldest_are_forgotten():
    clock = Clock()
    record = OwnWrites(kept=10, grace=60, clock=clock)
    one_write(record, [f"m/{n}.md" for n in range(50)])
    clock.now += 61
    one_write(record, ["new.md"])
    assert len(record) == 11  # the newest ten kept, and the write just made
    assert [n for n in range(50) if record.get(f"m/{n}.md")] == list(range(40, 50))
    assert record.get("new.md") == (1, 1)


def test_a_file_written_again_counts_as_new():
    clock = Clock()
    record = OwnWrites(kept=2, grace=0, clock=clock)
    one_write(record, ["a.md", "b.md", "c.md"])
    one_write(record, ["a.md"], stamp=(2, 2))
    clock.now += 1
    one_write(record, [])
    assert (record.get("a.md"), record.get("b.md"), record.get("c.md")) == ((2, 2), None, (1, 1))


def test_the_watcher_skips_every_file_of_an_import_larger_than_the_record(vault_dir: Path):
    vault = Vault(vault_dir)
    try:
        vault.own_writes = OwnWrites(kept=10, clock=Clock())
        paths = [f"memories/imported/note-{n}.md" for n in range(40)]
        files = [
            (path, note_text(f"imp{n:07d}", f"Imported {n}").encode(), None)
            for n, path in enumerate(paths)
        ]
        vault.write_many([], files, "Import 40 memories")
        vault.write_many([], [("memories/after.md", b"After.\n", None)], "One more")
        events = {(1, str(vault.root / path)) for path in paths}
        assert relevant_paths(vault, events) == []
        # An edit made since is the person's, and the watcher reads it.
        edited = vault.root / paths[0]
        edited.write_text(edited.read_text() + "Edited by hand.\n")
        assert relevant_paths(vault, events) == [paths[0]]
    finally:
        vault.close()
