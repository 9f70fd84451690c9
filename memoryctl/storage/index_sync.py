"""Keeping the index up to date with the vault's files, and each correction's reach.

`sync` brings the index up to date incrementally: a file whose size and mtime are
unchanged is skipped, a changed file is re-hashed and re-parsed, and deleted and renamed
files are picked up (a rename keeps the memory, because a memory's identity is its `id`).
Whenever rows change, the reach of every correction they touch is recomputed in the
same transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from memoryctl import matching, search_query
from memoryctl.memory import Memory
from memoryctl.storage.changes import MARK as LIVE_MARK
from memoryctl.storage.index_connection import IndexConnection
from memoryctl.storage.index_format import set_fts_settings
from memoryctl.storage.parsing import (
    CHUNK,
    NOTE_COLUMNS,
    ParsedFile,
    fts_body,
    fts_title,
    memory_from_doc,
    parse_all,
)
from memoryctl.storage.scan import FileStat, scan

Progress = Callable[[int, int], None]

# Past this many changed files, recomputing every correction's reach through the
# full-text index is cheaper than testing each changed file against every string.
_BULK_REACH = 2000
# An empty index filling with more files than this is built without a journal.
_BULK_LOAD = 5000
# A sync that writes more rows than this, and at least half of the index's, leaves the
# full-text index in one segment (see `_merge_full_text`).
_MERGE_AFTER = 5000


_INSERT_NOTE = (
    f"INSERT INTO notes(rowid, {', '.join(NOTE_COLUMNS)}) "
    f"VALUES ({', '.join('?' * (len(NOTE_COLUMNS) + 1))})"
)
# The tables of a memory's links: (table, column, the ParsedFile field it is filled from).
_LINKS = (
    ("tags", "tag", "tags"),
    ("derivations", "source", "derived_from"),
    ("deprecations", "needle", "needles"),
)


@dataclass
class SyncReport:
    scanned: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    renamed: int = 0
    unchanged: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed + self.renamed


class IndexSync(IndexConnection):
    """Syncing the index with the vault, and the reach of corrections."""

    # --- syncing ------------------------------------------------------------------

    def sync(self, *, full: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date with the vault's files."""
        started = time.perf_counter()
        result = scan(self.root, self.config)
        # In path order, as the scan lists the files (read from `ix_notes_stamps`, no sort):
        # when nothing changed, the two lists are equal.
        stored = self._execute("SELECT path, size, mtime_ns FROM notes ORDER BY path")
        report = SyncReport(scanned=len(result.files), skipped=result.skipped)
        if full or stored != result.files:
            self._sync_changed(result.files, stored, report, full=full, progress=progress)
        else:
            report.unchanged = len(stored)  # every file as it was: the usual open
        report.problems = self.broken_files()
        report.seconds = time.perf_counter() - started
        return report

    def _sync_changed(
        self,
        files: list[FileStat],
        stored: list[tuple[str, int, int]],
        report: SyncReport,
        *,
        full: bool,
        progress: Progress | None,
    ) -> None:
        """`sync` once the scanned files differ from the stored ones."""
        # A FileStat is a (path, size, mtime_ns) tuple, so the files whose size and mtime
        # are unchanged are found by comparing sets (100,000 files on every open).
        unchanged = set() if full else set(stored).intersection(files)
        todo = [stat for stat in files if stat not in unchanged]
        report.unchanged = len(unchanged)
        on_disk = {stat.relpath for stat in files}
        gone = [path for path, _, _ in stored if path not in on_disk]
        if todo or gone:
            paths = None if len(todo) + len(gone) > 5000 else [*(s.relpath for s in todo), *gone]
            with self._bulk_load(not stored and len(todo) > _BULK_LOAD):
                self._apply(todo, gone, paths, report, progress)

    def rebuild(self, *, progress: Progress | None = None) -> SyncReport:
        """Build the index again from nothing but the vault's files, in place and in one
        transaction: every row (and the live checks' mark) goes, and every file is read
        and parsed anew. Other processes keep reading the index as it was until the
        rebuild commits, then read the new one through the same file; new rows take
        rowids above every old one, so no old rowid comes to name another memory."""
        started = time.perf_counter()
        result = scan(self.root, self.config)
        report = SyncReport(scanned=len(result.files), skipped=result.skipped)
        self._apply(result.files, [], None, report, progress, replace_all=True)
        self._df_cache.clear()
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # as small as readers let it
        report.problems = self.broken_files()
        report.seconds = time.perf_counter() - started
        return report

    @contextlib.contextmanager
    def _bulk_load(self, on: bool) -> Iterator[None]:
        """Build an empty index without a journal: half the writes, no fsync per page.

        A build cut short leaves a marker, so the next open rebuilds from the vault.
        """
        if not on:
            yield
            return
        with self._lock, self.building():
            try:
                self._conn.execute("PRAGMA journal_mode=OFF")
            except sqlite3.OperationalError:  # another process has the index open
                yield
                return
            self._conn.execute("PRAGMA synchronous=OFF")
            self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('building', '1')")
            yield
            self._conn.execute("DELETE FROM meta WHERE key = 'building'")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA journal_mode=WAL")

    def sync_paths(self, relpaths: Iterable[str]) -> SyncReport:
        """Re-read just these files (a watcher's batch, or a file memoryctl wrote)."""
        started = time.perf_counter()
        report = SyncReport()
        todo: list[FileStat] = []
        gone: list[str] = []
        from memoryctl.storage.scan import is_memory_path

        for relpath in sorted(set(relpaths)):
            if not is_memory_path(relpath, self.config):
                continue
            path = self.root / relpath
            try:
                st = path.stat()
            except OSError:
                gone.append(relpath)
                continue
            todo.append(FileStat(relpath, st.st_size, st.st_mtime_ns))
        report.scanned = len(todo)
        if todo or gone:
            self._apply(todo, gone, [s.relpath for s in todo] + gone, report, None)
        report.seconds = time.perf_counter() - started
        return report

    def sync_written(self, files: list[ParsedFile]) -> SyncReport:
        """Index files memoryctl just wrote, from what it already holds of them (made by
        `parsing.parsed_note`), instead of reading them back."""
        started = time.perf_counter()
        report = SyncReport(scanned=len(files))
        if files:
            todo = [FileStat(f.relpath, f.size, f.mtime_ns) for f in files]
            chunks = [files[i : i + CHUNK] for i in range(0, len(files), CHUNK)]
            self._apply(todo, [], [f.relpath for f in files], report, None, held=chunks)
        report.seconds = time.perf_counter() - started
        return report

    def _known(
        self, conn: sqlite3.Connection, paths: list[str] | None
    ) -> dict[str, tuple[int, int, int, str, str]]:
        """What the index holds for these paths (all paths when None)."""
        sql = "SELECT rowid, path, size, mtime_ns, sha, mid FROM notes"
        if paths is None:
            rows = conn.execute(sql).fetchall()
        else:
            rows = []
            for start in range(0, len(paths), 500):
                part = paths[start : start + 500]
                marks = ",".join("?" * len(part))
                rows += conn.execute(sql + f" WHERE path IN ({marks})", part).fetchall()
        return {path: (rowid, size, mtime, sha, mid) for rowid, path, size, mtime, sha, mid in rows}

    def _apply(
        self,
        todo: list[FileStat],
        gone: list[str],
        paths: list[str] | None,
        report: SyncReport,
        progress: Progress | None,
        *,
        replace_all: bool = False,
        held: Iterable[list[ParsedFile]] | None = None,
    ) -> None:
        total = len(todo)
        done = 0
        changed_rows: list[int] = []
        with self._transaction() as conn:
            next_rowid = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM notes").fetchone()[0]
            if replace_all:
                self._delete_all(conn)
            # Read inside the transaction: another process (or thread) may have synced
            # the same files since this one looked, and its rows are the ones to replace.
            known = {} if replace_all else self._known(conn, paths)
            # A file that is back on disk was written after the scan missed it.
            gone = [p for p in gone if p in known and not os.path.lexists(self.root / p)]
            gone_mids = {known[p][4]: p for p in gone}
            for path in gone:
                self._delete_row(conn, known[path][0])
            stats = [(s.relpath, s.size, s.mtime_ns) for s in todo]
            for chunk in parse_all(self.root, stats) if held is None else held:
                fresh: list[ParsedFile] = []
                for parsed in chunk:
                    old = known.get(parsed.relpath)
                    if old is not None and old[3] == parsed.sha and parsed.sha:
                        conn.execute(
                            "UPDATE notes SET size=?, mtime_ns=? WHERE rowid=?",
                            (parsed.size, parsed.mtime_ns, old[0]),
                        )
                        report.unchanged += 1
                        continue
                    if old is not None:
                        self._delete_row(conn, old[0])
                        report.changed += 1
                    elif parsed.mid in gone_mids and parsed.has_id:
                        report.renamed += 1
                        gone_mids.pop(parsed.mid)
                    else:
                        report.added += 1
                    fresh.append(parsed)
                rowids = list(range(next_rowid, next_rowid + len(fresh)))
                next_rowid += len(fresh)
                self._insert_many(conn, rowids, fresh)
                changed_rows += rowids
                done += len(chunk)
                if progress:
                    progress(done, total)
            report.removed = len(gone_mids)
            notes = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
            if report.touched > 100 and report.touched * 100 > notes:
                self._df_cache.clear()
            self._update_reach(conn, changed_rows, bulk=len(changed_rows) > _BULK_REACH)
            if len(changed_rows) > _MERGE_AFTER and len(changed_rows) * 2 >= notes:
                self._merge_full_text(conn)

    def _merge_full_text(self, conn: sqlite3.Connection) -> None:
        """Merge the full-text index's segments into one, after a build or a large sync.

        Such a load leaves a few large segments (`hashsize`) in FTS5's first level, where
        every later write adds a small one; once that level holds `crisismerge` segments,
        the write that adds the last merges them all, the large ones too: at 100,000
        memories, one edit's sync then took 5-6 s. One segment, merged now, sits above
        that level, so the small ones are merged among themselves."""
        conn.execute("INSERT INTO note_fts(note_fts) VALUES ('optimize')")

    def _insert_many(
        self, conn: sqlite3.Connection, rowids: list[int], files: list[ParsedFile]
    ) -> None:
        """Insert parsed files under the given rowids, in a few statements per batch."""
        conn.executemany(_INSERT_NOTE, [(r, *p.row) for r, p in zip(rowids, files, strict=True)])
        conn.executemany(
            "INSERT INTO note_fts(rowid, title, body) VALUES (?,?,?)",
            [(r, *p.fts) for r, p in zip(rowids, files, strict=True)],
        )
        for table, column, part in _LINKS:
            conn.executemany(
                f"INSERT OR IGNORE INTO {table}(note, {column}) VALUES (?,?)",
                [(r, v) for r, p in zip(rowids, files, strict=True) for v in getattr(p, part)],
            )

    def _delete_all(self, conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO note_fts(note_fts) VALUES ('delete-all')")
        set_fts_settings(conn)  # an index made before they were set is rebuilt with them
        for table in ("tags", "derivations", "deprecations", "reach", "removed", "notes"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM meta WHERE key = ?", (LIVE_MARK,))

    def _delete_row(self, conn: sqlite3.Connection, rowid: int) -> None:
        row = conn.execute(
            "SELECT title, body, doc, mid, broken FROM notes WHERE rowid=?", (rowid,)
        ).fetchone()
        if row is None:
            return
        if row[4] is None:  # what the live checks compare with the file as it is now
            conn.execute("INSERT INTO removed(mid, doc) VALUES (?, ?)", (row[3], row[2]))
        # FTS5 deletes a row by the exact values it was given: the title with its aliases.
        aliases = json.loads(row[2]).get("aliases") or ()
        conn.execute(
            "INSERT INTO note_fts(note_fts, rowid, title, body) VALUES ('delete', ?, ?, ?)",
            (rowid, fts_title(row[0], aliases), fts_body(row[1])),
        )
        for table, column in (
            ("tags", "note"),
            ("derivations", "note"),
            ("deprecations", "note"),
            ("reach", "correction"),
            ("reach", "target"),
        ):
            conn.execute(f"DELETE FROM {table} WHERE {column}=?", (rowid,))
        conn.execute("DELETE FROM notes WHERE rowid=?", (rowid,))

    # --- correction reach -----------------------------------------------------------

    def _update_reach(self, conn: sqlite3.Connection, rows: list[int], *, bulk: bool) -> None:
        """Recompute reach for changed rows: as corrections, and as possible targets."""
        if bulk:
            conn.execute("DELETE FROM reach")
            corrections = [r for (r,) in conn.execute("SELECT DISTINCT note FROM deprecations")]
            for rowid in corrections:
                self._reach_of_correction(conn, rowid)
            return
        for rowid in rows:
            if conn.execute("SELECT 1 FROM deprecations WHERE note=?", (rowid,)).fetchone():
                self._reach_of_correction(conn, rowid)
        needles = conn.execute(
            "SELECT d.note, d.needle, n.created, n.mid FROM deprecations d "
            "JOIN notes n ON n.rowid = d.note"
        ).fetchall()
        if not needles or not rows:
            return
        for rowid in rows:
            target = conn.execute(
                "SELECT title, body, created, mid FROM notes WHERE rowid=?", (rowid,)
            ).fetchone()
            text = matching.fold(target[0] + "\n" + target[1])
            for correction, needle, created, mid in needles:
                if correction == rowid:
                    continue
                if (target[2], target[3]) < (created, mid) and matching.matches(text, needle):
                    conn.execute(
                        "INSERT OR IGNORE INTO reach(correction, target, needle) VALUES (?,?,?)",
                        (correction, rowid, needle),
                    )

    def _reach_of_correction(self, conn: sqlite3.Connection, rowid: int) -> None:
        conn.execute("DELETE FROM reach WHERE correction=?", (rowid,))
        created, mid = conn.execute(
            "SELECT created, mid FROM notes WHERE rowid=?", (rowid,)
        ).fetchone()
        for (needle,) in conn.execute(
            "SELECT needle FROM deprecations WHERE note=?", (rowid,)
        ).fetchall():
            for target in self._matching_rows(conn, needle, created, mid):
                if target != rowid:
                    conn.execute(
                        "INSERT OR IGNORE INTO reach(correction, target, needle) VALUES (?,?,?)",
                        (rowid, target, needle),
                    )

    def _matching_rows(
        self, conn: sqlite3.Connection, needle: str, before_created: str, before_mid: str
    ) -> list[int]:
        """Rows older than (created, mid) whose title or body names the needle."""
        phrase = search_query.phrase(needle)
        if phrase:
            candidates = conn.execute(
                "SELECT n.rowid, n.title, n.body FROM note_fts f JOIN notes n ON n.rowid = f.rowid "
                "WHERE note_fts MATCH ? AND (n.created < ? OR (n.created = ? AND n.mid < ?))",
                (phrase, before_created, before_created, before_mid),
            )
        else:
            candidates = conn.execute(
                "SELECT rowid, title, body FROM notes "
                "WHERE created < ? OR (created = ? AND mid < ?)",
                (before_created, before_created, before_mid),
            )
        pattern = matching.pattern(needle)
        return [
            rowid
            for rowid, title, body in candidates
            if pattern.search(matching.fold(title + "\n" + body))
        ]

    def count_matching(self, needle: str, before: tuple[str, str] | None = None) -> list[int]:
        """The rows a correction made now (or at `before`) would reach with this string."""
        created, mid = before or ("9999-12-31T23:59:59Z", "")
        with self._lock:
            return self._matching_rows(self._conn, needle, created, mid)

    # --- reading reach --------------------------------------------------------------------

    def reach_of(self, mid: str) -> list[tuple[Memory, str]]:
        """Every memory this correction reaches now, with the string it names."""
        rows = self._execute(
            "SELECT t.doc, t.body, r.needle FROM reach r JOIN notes c ON c.rowid = r.correction "
            "JOIN notes t ON t.rowid = r.target WHERE c.mid = ? ORDER BY t.created, t.mid",
            (mid,),
        )
        return [(memory_from_doc(doc, body), needle) for doc, body, needle in rows]

    def reach_edges(self, target_mids: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """(correction id, target id) pairs, for the targets given or for all."""
        sql = (
            "SELECT DISTINCT c.mid, t.mid FROM reach r JOIN notes c ON c.rowid = r.correction "
            "JOIN notes t ON t.rowid = r.target"
        )
        if target_mids is None:
            return [tuple(r) for r in self._execute(sql)]  # type: ignore[misc]
        mids = list(target_mids)
        if not mids:
            return []
        marks = ",".join("?" * len(mids))
        return [tuple(r) for r in self._execute(sql + f" WHERE t.mid IN ({marks})", mids)]  # type: ignore[misc]

    def corrections_reaching(self, mids: Iterable[str]) -> dict[str, list[str]]:
        edges: dict[str, list[str]] = {}
        for correction, target in self.reach_edges(mids):
            edges.setdefault(target, []).append(correction)
        return edges

    # --- what could not be read ------------------------------------------------

    def broken_files(self) -> list[tuple[str, str]]:
        return [
            (path, reason)
            for path, reason in self._execute(
                "SELECT path, broken FROM notes WHERE broken IS NOT NULL ORDER BY path"
            )
        ]
