"""The index follows the vault: edits, deletions and renames, without full rebuilds."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
import time
from pathlib import Path

from memoryctl.memory import DecisionRecord
from memoryctl.storage.index import Index
from memoryctl.storage.schema import SCHEMA_VERSION
from memoryctl.storage.vault import Vault, index_path


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def note(mid: str, body: str, title: str | None = None) -> str:
    return f"---\nid: {mid}\ntitle: {title or mid}\ncreated: 2026-01-01\n---\n{body}\n"


def test_an_external_edit_is_picked_up_on_the_next_sync(vault_dir):
    write(vault_dir / "a.md", note("aaaaaaaaaa", "apples"))
    vault = Vault(vault_dir)
    assert [m.id for m in vault.index.search("apples")] == ["aaaaaaaaaa"]
    path = vault_dir / "a.md"
    write(path, note("aaaaaaaaaa", "bananas"))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    report = vault.index.sync()
    assert report.changed == 1 and report.unchanged == 0
    assert vault.index.search("apples") == []
    assert [m.id for m in vault.index.search("bananas")] == ["aaaaaaaaaa"]


def test_unchanged_files_are_skipped_by_size_and_mtime(vault_dir):
    for i in range(5):
        write(vault_dir / f"n{i}.md", note(f"nnnnnnnnn{i}", f"body {i}"))
    vault = Vault(vault_dir)
    _ = vault.index
    report = vault.index.sync()
    assert report.unchanged == 5 and report.touched == 0


def test_a_touched_but_identical_file_is_not_reindexed(vault_dir):
    write(vault_dir / "a.md", note("aaaaaaaaaa", "same"))
    vault = Vault(vault_dir)
    _ = vault.index
    os.utime(vault_dir / "a.md", ns=(time.time_ns(), time.time_ns() + 10**9))
    report = vault.index.sync()
    assert report.changed == 0 and report.unchanged == 1


def test_a_deleted_file_leaves_the_index(vault_dir):
    write(vault_dir / "a.md", note("aaaaaaaaaa", "apples"))
    vault = Vault(vault_dir)
    _ = vault.index
    (vault_dir / "a.md").unlink()
    report = vault.index.sync()
    assert report.removed == 1
    assert vault.index.get("aaaaaaaaaa") is None
    assert vault.index.search("apples") == []


def test_a_renamed_file_keeps_its_identity(vault_dir):
    write(vault_dir / "a.md", note("aaaaaaaaaa", "apples"))
    vault = Vault(vault_dir)
    _ = vault.index
    (vault_dir / "sub").mkdir()
    os.rename(vault_dir / "a.md", vault_dir / "sub" / "renamed.md")
    report = vault.index.sync()
    assert report.renamed == 1 and report.removed == 0 and report.added == 0
    memory = vault.index.get("aaaaaaaaaa")
    assert memory is not None and memory.path == "sub/renamed.md"


def test_an_index_from_another_schema_version_is_rebuilt(vault_dir):
    write(vault_dir / "a.md", note("aaaaaaaaaa", "apples"))
    vault = Vault(vault_dir)
    _ = vault.index
    vault.close()
    db = index_path(vault_dir)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION - 1}")
    conn.close()
    index = Index.open(db, vault_dir, vault.config)
    assert any("another version" in n for n in index.notices)
    index.sync()
    assert index.get("aaaaaaaaaa") is not None
    index.close()


def test_sync_paths_handles_a_single_edit_without_scanning(vault_dir):
    write(vault_dir / "a.md", note("aaaaaaaaaa", "apples"))
    write(vault_dir / "b.md", note("bbbbbbbbbb", "berries"))
    vault = Vault(vault_dir)
    _ = vault.index
    write(vault_dir / "b.md", note("bbbbbbbbbb", "blueberries"))
    report = vault.index.sync_paths(["b.md"])
    assert report.scanned == 1 and report.changed == 1
    assert [m.id for m in vault.index.search("blueberries")] == ["bbbbbbbbbb"]


def test_the_watcher_reindexes_a_file_written_by_another_program(vault_dir):
    from memoryctl.storage.watch import watch_vault

    vault = Vault(vault_dir)
    _ = vault.index
    stop = threading.Event()
    seen: list[list[str]] = []

    def run() -> None:
        for _, paths in watch_vault(vault, stop=stop, debounce_ms=50):
            seen.append(paths)
            stop.set()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    time.sleep(0.3)  # let the watcher register before the write
    write(vault_dir / "new.md", note("newnewnew1", "written by an editor"))
    worker.join(timeout=10)
    stop.set()
    assert seen and "new.md" in seen[0]
    assert vault.index.get("newnewnew1") is not None


def test_the_index_lives_outside_the_vault(vault_dir):
    vault = Vault(vault_dir)
    _ = vault.index
    assert not str(vault.db_path).startswith(str(vault_dir))
    assert vault.db_path.exists()


def test_a_file_changed_on_disk_after_it_was_read_is_never_overwritten(vault_dir):
    import pytest

    from memoryctl.storage.vault import VaultError

    write(vault_dir / "a.md", note("aaaaaaaaaa", "first"))
    vault = Vault(vault_dir)
    loaded = vault.load(vault.resolve("aaaaaaaaaa"))
    write(vault_dir / "a.md", note("aaaaaaaaaa", "an edit made in another editor"))
    with pytest.raises(VaultError, match=r"a\.md changed on disk since memoryctl read it"):
        vault.write(loaded, {"pinned": True}, "Pin")
    assert "an edit made in another editor" in (vault_dir / "a.md").read_text()
    assert sorted(p.name for p in vault_dir.iterdir() if p.suffix == ".tmp") == []


def test_writes_leave_no_temporary_files_and_keep_the_file_mode(vault_dir):
    path = vault_dir / "a.md"
    write(path, note("aaaaaaaaaa", "first"))
    path.chmod(0o640)
    vault = Vault(vault_dir)
    vault.write(vault.load(vault.resolve("aaaaaaaaaa")), {"pinned": True}, "Pin")
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    assert "pinned: true" in path.read_text()
    assert [p.name for p in vault_dir.rglob("*.tmp")] == []


def test_a_search_of_words_every_memory_has_lists_the_newest_first(vault_dir):
    # Paths run against dates, so the order files were indexed in is not the newest first.
    days = ["2026-03-09", "2026-01-02", "2026-07-30", "2026-05-15", "2026-02-20"]
    for n, day in enumerate(days):
        write(
            vault_dir / f"{n:02d}.md",
            f"---\nid: common{n:04d}\ntitle: Note {n}\ncreated: {day}\n---\n"
            "The project notes for the team.\n",
        )
    vault = Vault(vault_dir)
    found = vault.index.search("project team", limit=3)
    assert [m.created[:10] for m in found] == ["2026-07-30", "2026-05-15", "2026-03-09"]
    vault.close()


def test_a_memory_read_from_the_index_carries_its_decision_records(vault_dir):
    write(
        vault_dir / "r.md",
        "---\nid: rrrrrrrrrr\ntitle: Old wifi\nstatus: retired\ncreated: 2026-01-01\n"
        "retired:\n  at: 2026-02-03T04:05:06Z\n  proposal: p1\n  reason: moved house\n---\nx\n",
    )
    write(
        vault_dir / "h.md",
        "---\nid: hhhhhhhhhh\ntitle: Held\nstatus: needs_review\ncreated: 2026-01-01\n"
        "needs_review:\n  at: not a date\n  reason: check it\n---\ny\n",
    )
    write(vault_dir / "a.md", note("aaaaaaaaaa", "plain"))
    vault = Vault(vault_dir)
    retired = vault.index.get("rrrrrrrrrr")
    held = vault.index.get("hhhhhhhhhh")
    plain = vault.index.get("aaaaaaaaaa")
    assert retired is not None and held is not None and plain is not None
    assert retired.retired_record == DecisionRecord("2026-02-03T04:05:06Z", "moved house", "p1")
    assert held.review_record == DecisionRecord(None, "check it", None)
    assert held.problems == ()  # a record's unreadable date is no problem of the memory
    assert plain.retired_record is None and plain.review_record is None


def test_the_live_checks_mark_is_written_from_a_thread_that_reads_on_its_own(vault_dir):
    """The MCP server runs its live checks on the index thread and its tools on worker
    threads, each of which reads through a read-only connection of its own; the mark the
    live checks keep must still be written, from whichever thread runs them."""
    write(vault_dir / "memories" / "a.md", note("aaaaaaaaaa", "Alpha."))
    vault = Vault(vault_dir)
    index = vault.index
    errors: list[BaseException] = []

    def mark() -> None:
        try:
            index.set_live_mark(index.newest_rowid())
        except BaseException as error:  # the assertion below names it
            errors.append(error)

    worker = threading.Thread(target=mark)
    worker.start()
    worker.join()
    assert errors == []
    assert index.live_mark() == index.newest_rowid()
    vault.close()


def test_a_full_reindex_gives_an_older_index_the_full_text_settings(vault_dir):
    # An index made before a setting existed (here: without FTS5's `hashsize`, which lets
    # a big build write few segments) takes it from a rebuild in place, and finds as before.
    for i in range(3):
        write(vault_dir / f"{i}.md", note(f"note{i:06d}", f"gooseberry number {i}"))
    vault = Vault(vault_dir)
    conn = vault.index._conn
    settings = "SELECT k, v FROM note_fts_config WHERE k <> 'version'"
    assert dict(conn.execute(settings).fetchall()) == {
        "automerge": 16,
        "crisismerge": 64,
        "hashsize": 64 << 20,
    }
    conn.execute("DELETE FROM note_fts_config WHERE k = 'hashsize'")
    vault.index.rebuild()
    assert dict(conn.execute(settings).fetchall())["hashsize"] == 64 << 20
    assert len(vault.index.search("gooseberry")) == 3
    vault.close()


def full_text_segments(vault: Vault) -> set[int]:
    """The ids of the full-text index's segments (FTS5 keeps a segment's id above bit 37
    of each of its pages' rowids)."""
    rows = vault.index._conn.execute(
        "SELECT DISTINCT id >> 37 FROM note_fts_data WHERE id >= 1 << 37"
    ).fetchall()
    return {segment for (segment,) in rows}


def test_edits_after_a_large_build_never_merge_the_segments_the_build_wrote(vault_dir, monkeypatch):
    # At 100,000 memories, an edit whose sync merged the build's large segments took 5-6 s.
    # Scaled down: a build that writes a segment every 4 KB of terms and a "large" sync of
    # more than 20 files, and FTS5 merging every 4 segments of a level at once.
    from memoryctl.storage import index_format, index_sync

    monkeypatch.setattr(
        index_format, "FTS_SETTINGS", (("automerge", 16), ("crisismerge", 4), ("hashsize", 4096))
    )
    monkeypatch.setattr(index_sync, "_MERGE_AFTER", 20)
    for i in range(60):
        body = f"gooseberry {i} " + " ".join(f"word{i}x{j}" for j in range(40))
        write(vault_dir / f"{i}.md", note(f"note{i:06d}", body))
    vault = Vault(vault_dir)
    built = full_text_segments(vault)
    assert len(built) == 1
    for i in range(4):  # the fourth fills the first level, which is then merged
        write(vault_dir / f"{i}.md", note(f"note{i:06d}", f"gooseberry {i}, edited"))
        vault.index.sync_paths([f"{i}.md"])
    assert built <= full_text_segments(vault)
    assert len(full_text_segments(vault)) == 2  # the build's, and the edits' merged
    assert len(vault.index.search("gooseberry", limit=100)) == 60
    assert sorted(m.id for m in vault.index.search("edited")) == [f"note{i:06d}" for i in range(4)]
    vault.close()


def test_rows_a_worker_made_before_the_files_were_written_are_those_made_after(monkeypatch):
    from memoryctl.storage import notefile, parsing

    files = []
    for number in range(24):
        data = {"id": f"imported{number:04d}", "title": f"Topic {number}", "kind": "fact"}
        if number % 6:  # the others have no `created`: the file's time dates them
            data["created"] = dt.datetime(2026, 3, 1 + number, tzinfo=dt.UTC)
        note = notefile.new_note(data, f"Remember {number}: deploys wait for review.")
        files.append((f"memories/default/topic-{number}.md", note.to_bytes(), note))
    monkeypatch.setattr(parsing, "POOL_THRESHOLD", 10)
    stamp = 1_780_000_000_000_000_000
    with parsing.RowsAside(files) as aside:
        assert aside._worker is not None  # made by a worker process
        made = [
            aside.row_of(p, raw, note, len(raw), stamp + n)
            for n, (p, raw, note) in enumerate(files)
        ]
    here = [
        parsing.parsed_note(p, raw, note, len(raw), stamp + n)
        for n, (p, raw, note) in enumerate(files)
    ]
    assert made == here
    assert (
        made[0].row[10] == parsing.iso_from_ns(stamp) and made[1].row[10] == "2026-03-02T00:00:00Z"
    )


def test_an_edit_made_while_memoryctl_was_closed_is_seen_on_the_next_open(vault_dir):
    # Folders and names outside ASCII, whose order the index and the walk must agree on.
    names = ["a.md", "a/b.md", "a-b.md", "é.md", "z/ä.md", "Z.md"]
    for i, name in enumerate(names):
        write(vault_dir / name, note(f"file{i:06d}", f"plum {i}"))
    vault = Vault(vault_dir)
    _ = vault.index
    vault.close()
    reopened = Vault(vault_dir)
    _ = reopened.index
    assert reopened.last_sync is not None and reopened.last_sync.unchanged == len(names)
    reopened.close()
    edited = vault_dir / "z" / "ä.md"
    write(edited, note("file000004", "pear 4"))  # the same size as before
    os.utime(edited, ns=(time.time_ns(), time.time_ns() + 10**9))
    again = Vault(vault_dir)
    assert [m.id for m in again.index.search("pear")] == ["file000004"]
    assert again.last_sync is not None and again.last_sync.changed == 1
    again.close()
