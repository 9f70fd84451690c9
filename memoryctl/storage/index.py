"""The SQLite index of a vault: memories, full-text search and correction reach.

The vault is the source of truth and the index is a cache. `Index.open` rebuilds the
index when it is missing, corrupt or from another schema version; `sync` brings it up
to date incrementally: a file whose size and mtime are unchanged is skipped, a changed
file is re-hashed and re-parsed, and deleted and renamed files are picked up (a rename
keeps the memory, because a memory's identity is its `id`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memoryctl import matching, search_query
from memoryctl.memory import Memory
from memoryctl.storage.config import VaultConfig
from memoryctl.storage.index_format import FTS_DDL, SCHEMA_VERSION
from memoryctl.storage.parsing import ParsedFile, memory_from_doc, parse_all
from memoryctl.storage.scan import FileStat, scan

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlmodel import Session

Progress = Callable[[int, int], None]

# Past this many changed files, recomputing every correction's reach through the
# full-text index is cheaper than testing each changed file against every string.
_BULK_REACH = 2000
# An empty index filling with more files than this is built without a journal.
_BULK_LOAD = 5000
# How many matches of a query of common words are sorted by date (`_newest_matches`).
RECENT_CANDIDATES = 2000


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


class Index:
    """One open index. Methods are safe to call from several threads."""

    def __init__(self, db_path: Path, root: Path, config: VaultConfig) -> None:
        self.db_path = db_path
        self.root = root
        self.config = config
        self.notices: list[str] = []
        self._df_cache: dict[str, int] = {}
        self.built_fresh = False
        self._lock = threading.RLock()
        self._conn = self._connect()

    @cached_property
    def engine(self) -> Engine:
        # Imported here: only building the tables needs sqlmodel, and its import (0.3 s)
        # would otherwise delay every open of a warm index, and the TUI's first paint.
        from sqlalchemy.pool import StaticPool
        from sqlmodel import create_engine

        return create_engine("sqlite://", creator=lambda: self._conn, poolclass=StaticPool)

    # --- opening ------------------------------------------------------------------

    @classmethod
    def open(cls, db_path: Path, root: Path, config: VaultConfig) -> Index:
        """Open the index, rebuilding it when it is missing, corrupt or out of date."""
        db_path.parent.mkdir(parents=True, exist_ok=True)
        existed = db_path.exists()
        reason = None
        index: Index | None = None
        try:
            index = cls(db_path, root, config)
            reason = index._why_stale() if existed else None
        except sqlite3.DatabaseError as error:
            reason = f"it could not be read ({error})"
        if reason is not None:
            if index is not None:
                index.close()
            _remove_db(db_path)
            index = cls(db_path, root, config)
            index.notices.append(f"The index was rebuilt from the vault because {reason}.")
        assert index is not None
        index.built_fresh = not existed
        index._create_schema()
        return index

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.db_path, check_same_thread=False, isolation_level=None, timeout=30
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-65536")
        conn.execute("PRAGMA temp_store=MEMORY")
        return conn

    def _why_stale(self) -> str | None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            return None
        if version != SCHEMA_VERSION:
            return f"it was made by another version of memoryctl (schema {version})"
        row = self._conn.execute("SELECT value FROM meta WHERE key='unicode'").fetchone()
        if row is None or row[0] != unicodedata.unidata_version:
            return "Python's Unicode tables changed"
        if self._conn.execute("SELECT 1 FROM meta WHERE key='building'").fetchone():
            return "its last build did not finish"
        self._conn.execute("SELECT count(*) FROM notes").fetchone()
        return None

    def _create_schema(self) -> None:
        with self._lock:
            if self._conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                return
            from sqlmodel import SQLModel

            from memoryctl.storage import schema  # noqa: F401 (the tables' classes)

            SQLModel.metadata.create_all(self.engine)
            for ddl in FTS_DDL:
                self._conn.execute(ddl)
            # Merge FTS segments less eagerly: a cold index of 100,000 memories is built
            # in about half the time, and queries stay fast (measured in bench/).
            self._conn.execute("INSERT INTO note_fts(note_fts, rank) VALUES ('automerge', 16)")
            self._conn.execute("INSERT INTO note_fts(note_fts, rank) VALUES ('crisismerge', 64)")
            self._conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('unicode', ?)",
                (unicodedata.unidata_version,),
            )
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            if "engine" in self.__dict__:
                self.engine.dispose()
            self._conn.close()

    def session(self) -> Session:
        from sqlmodel import Session

        return Session(self.engine)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as error:
                if isinstance(error, sqlite3.OperationalError) and "fts5" in str(error):
                    raise
                raise IndexCorrupt(str(error)) from error

    # --- syncing ------------------------------------------------------------------

    def sync(self, *, full: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date with the vault's files."""
        started = time.perf_counter()
        result = scan(self.root, self.config)
        stamps = {
            path: (size, mtime)
            for path, size, mtime in self.execute("SELECT path, size, mtime_ns FROM notes")
        }
        report = SyncReport(scanned=len(result.files), skipped=result.skipped)
        todo: list[FileStat] = []
        seen: set[str] = set()
        for stat in result.files:
            seen.add(stat.relpath)
            if not full and stamps.get(stat.relpath) == (stat.size, stat.mtime_ns):
                report.unchanged += 1
                continue
            todo.append(stat)
        gone = [path for path in stamps if path not in seen]
        if todo or gone:
            known = self._known(
                None if len(todo) + len(gone) > 5000 else [*(s.relpath for s in todo), *gone]
            )
            with self._bulk_load(not stamps and len(todo) > _BULK_LOAD):
                self._apply(todo, gone, known, report, progress)
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
        with self._lock:
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
            known = self._known([s.relpath for s in todo] + gone)
            gone = [p for p in gone if p in known]
            self._apply(todo, gone, known, report, None)
        report.seconds = time.perf_counter() - started
        return report

    def _known(self, paths: list[str] | None) -> dict[str, tuple[int, int, int, str, str]]:
        """What the index holds for these paths (all paths when None)."""
        sql = "SELECT rowid, path, size, mtime_ns, sha, mid FROM notes"
        if paths is None:
            rows = self.execute(sql)
        else:
            rows = []
            for start in range(0, len(paths), 500):
                part = paths[start : start + 500]
                rows += self.execute(sql + f" WHERE path IN ({','.join('?' * len(part))})", part)
        return {path: (rowid, size, mtime, sha, mid) for rowid, path, size, mtime, sha, mid in rows}

    def _apply(
        self,
        todo: list[FileStat],
        gone: list[str],
        known: dict[str, tuple[int, int, int, str, str]],
        report: SyncReport,
        progress: Progress | None,
    ) -> None:
        total = len(todo)
        done = 0
        changed_rows: list[int] = []
        gone_mids = {known[p][4]: p for p in gone}
        with self._transaction() as conn:
            for path in gone:
                self._delete_row(conn, known[path][0])
            stats = [(s.relpath, s.size, s.mtime_ns) for s in todo]
            next_rowid = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM notes").fetchone()[0]
            for chunk in parse_all(self.root, stats):
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
                    memory = parsed.memory
                    if old is not None:
                        self._delete_row(conn, old[0])
                        report.changed += 1
                    elif memory.id in gone_mids and memory.has_id:
                        report.renamed += 1
                        gone_mids.pop(memory.id)
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

    def _insert_many(
        self, conn: sqlite3.Connection, rowids: list[int], files: list[ParsedFile]
    ) -> None:
        """Insert parsed files under the given rowids, in a few statements per batch."""
        rows = []
        fts = []
        tags = []
        derivations = []
        needles = []
        for rowid, parsed in zip(rowids, files, strict=True):
            m = parsed.memory
            rows.append(
                (
                    rowid, m.id, parsed.relpath, parsed.size, parsed.mtime_ns, parsed.sha,
                    m.title, m.kind, m.status, m.pinned, m.pin_order, m.created, m.namespace,
                    m.visibility, m.subject, m.predicate, m.value, m.is_correction and m.has_id,
                    m.broken, len(m.problems), parsed.doc, m.body,
                )
            )  # fmt: skip
            fts.append((rowid, parsed.folded_title, parsed.folded_body))
            tags += [(rowid, tag) for tag in dict.fromkeys(m.tags)]
            derivations += [(rowid, source) for source in dict.fromkeys(m.derived_from)]
            # A correction with no id cannot be referred to, so it reaches nothing.
            if m.deprecates and m.has_id:
                needles += [
                    (rowid, n)
                    for n in dict.fromkeys(m.deprecates)
                    if matching.check_needle(n) is None
                ]
        conn.executemany(
            "INSERT INTO notes(rowid, mid, path, size, mtime_ns, sha, title, kind, status, "
            "pinned, pin_order, created, namespace, visibility, subject, predicate, value, "
            "is_correction, broken, problems, doc, body) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        conn.executemany("INSERT INTO note_fts(rowid, title, body) VALUES (?,?,?)", fts)
        conn.executemany("INSERT OR IGNORE INTO tags(note, tag) VALUES (?,?)", tags)
        conn.executemany(
            "INSERT OR IGNORE INTO derivations(note, source) VALUES (?,?)", derivations
        )
        conn.executemany("INSERT OR IGNORE INTO deprecations(note, needle) VALUES (?,?)", needles)

    def _delete_row(self, conn: sqlite3.Connection, rowid: int) -> None:
        row = conn.execute("SELECT title, body FROM notes WHERE rowid=?", (rowid,)).fetchone()
        if row is None:
            return
        conn.execute(
            "INSERT INTO note_fts(note_fts, rowid, title, body) VALUES ('delete', ?, ?, ?)",
            (rowid, matching.fold(row[0]), matching.fold(row[1])),
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

    # --- reading --------------------------------------------------------------------

    def _memories(self, sql: str, params: Sequence[object] = ()) -> list[Memory]:
        return [memory_from_doc(doc, body) for doc, body in self.execute(sql, params)]

    def get(self, mid: str) -> Memory | None:
        found = self._memories(
            "SELECT doc, body FROM notes WHERE mid=? ORDER BY path LIMIT 1", (mid,)
        )
        return found[0] if found else None

    def get_many(self, mids: Iterable[str]) -> dict[str, Memory]:
        mids = list(dict.fromkeys(mids))
        result: dict[str, Memory] = {}
        for start in range(0, len(mids), 500):
            part = mids[start : start + 500]
            marks = ",".join("?" * len(part))
            for memory in self._memories(
                f"SELECT doc, body FROM notes WHERE mid IN ({marks}) ORDER BY path DESC", part
            ):
                result[memory.id] = memory
        return result

    def by_rowids(self, rowids: Sequence[int]) -> list[Memory]:
        if not rowids:
            return []
        marks = ",".join("?" * len(rowids))
        rows = self.execute(f"SELECT rowid, doc, body FROM notes WHERE rowid IN ({marks})", rowids)
        by_id = {rowid: memory_from_doc(doc, body) for rowid, doc, body in rows}
        return [by_id[r] for r in rowids if r in by_id]

    def by_path(self, relpath: str) -> Memory | None:
        found = self._memories("SELECT doc, body FROM notes WHERE path=?", (relpath,))
        return found[0] if found else None

    def resolve(self, ref: str) -> list[Memory]:
        """Memories whose id is `ref`, or starts with it, or whose path is `ref`."""
        exact = self._memories("SELECT doc, body FROM notes WHERE mid=? ORDER BY path", (ref,))
        if exact:
            return exact
        by_path = self.by_path(ref)
        if by_path:
            return [by_path]
        escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return self._memories(
            "SELECT doc, body FROM notes WHERE mid LIKE ? ESCAPE '\\' ORDER BY mid LIMIT 20",
            (escaped + "%",),
        )

    def list(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        pinned: bool | None = None,
        namespace: str | None = None,
        tag: str | None = None,
        text: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "created DESC, mid",
    ) -> list[Memory]:
        where, params = self._filters(status, kind, pinned, namespace, tag, text)
        sql = f"SELECT doc, body FROM notes{where} ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        return self._memories(sql, params)

    def count(self, **filters: object) -> int:
        where, params = self._filters(**filters)  # type: ignore[arg-type]
        return self.execute(f"SELECT count(*) FROM notes{where}", params)[0][0]

    def rowids_in_order(self, **filters: object) -> list[int]:
        """The rowids `list` returns for these filters, in its order: newest first.

        A list that pages through these reads any page, however deep, as quickly as the
        first (OFFSET would step over every row before it).
        """
        where, params = self._filters(**filters)  # type: ignore[arg-type]
        rows = self.execute(f"SELECT rowid FROM notes{where} ORDER BY created DESC, mid", params)
        return [rowid for (rowid,) in rows]

    def namespaces_and_tags(self, most_tags: int = 200) -> tuple[list[str], list[str]]:
        """The namespaces in use, and the most used tags: what a person can filter by."""
        namespaces = self.execute("SELECT DISTINCT namespace FROM notes ORDER BY namespace")
        tags = self.execute(
            "SELECT tag FROM tags GROUP BY tag ORDER BY count(*) DESC, tag LIMIT ?", (most_tags,)
        )
        return [n for (n,) in namespaces], sorted(t for (t,) in tags)

    def text_matches(self, text: str) -> set[int] | None:
        """The rowids whose title or body has every word of `text`, the last as a prefix;
        None when `text` has no words to look for."""
        match = search_query.prefix_query(text)
        if match is None:
            return None
        return self._rowid_set("SELECT rowid FROM note_fts WHERE note_fts MATCH ?", (match,))

    def _rowid_set(self, sql: str, params: Sequence[object]) -> set[int]:
        """The rowids a query returns. They cross into Python as one string joined inside
        SQLite: a third quicker than a tuple per row, at 80,000 rows."""
        ((joined,),) = self.execute(f"SELECT group_concat(rowid) FROM ({sql})", params)
        return set(map(int, joined.split(","))) if joined else set()

    def text_matches_in_steps(self, text: str, step: int = 20_000) -> Iterator[set[int]]:
        """`text_matches` a range of rowids at a time, so a caller can stop between steps,
        and the index is free for other queries meanwhile."""
        match = search_query.prefix_query(text)
        if match is None:
            return
        highest = self.execute("SELECT max(rowid) FROM notes")[0][0] or 0
        for low in range(0, highest + 1, step):
            yield self._rowid_set(
                "SELECT rowid FROM note_fts WHERE note_fts MATCH ? AND rowid BETWEEN ? AND ?",
                (match, low, low + step - 1),
            )

    def text_count(self, text: str) -> int | None:
        """How many memories `text_matches` would return (counted inside SQLite, without
        handing a rowid to Python); None when `text` has no words to look for."""
        match = search_query.prefix_query(text)
        if match is None:
            return None
        return self.execute("SELECT count(*) FROM note_fts WHERE note_fts MATCH ?", (match,))[0][0]

    def newest_text_matches(self, text: str, limit: int) -> list[int]:
        """The rowids of the newest `limit` memories `text` matches, in `list` order.

        The newest memories are read in order and each is looked up in the full-text
        index, so this is quick when most memories match (a one-letter filter: 10 ms at
        100,000) and slow when few do: ask `text_count` first.
        """
        match = search_query.prefix_query(text)
        if match is None:
            return []
        rows = self.execute(
            "SELECT n.rowid FROM notes n INDEXED BY ix_notes_newest WHERE EXISTS "
            "(SELECT 1 FROM note_fts f WHERE f.rowid = n.rowid AND note_fts MATCH ?) "
            "ORDER BY n.created DESC, n.mid LIMIT ?",
            (match, limit),
        )
        return [rowid for (rowid,) in rows]

    def _filters(
        self,
        status: str | None = None,
        kind: str | None = None,
        pinned: bool | None = None,
        namespace: str | None = None,
        tag: str | None = None,
        text: str | None = None,
    ) -> tuple[str, list[object]]:
        clauses: list[str] = []
        params: list[object] = []
        for column, value in (("status", status), ("kind", kind), ("namespace", namespace)):
            if value is not None:
                clauses.append(f"{column}=?")
                params.append(value)
        if pinned is not None:
            clauses.append("pinned=?")
            params.append(pinned)
        if tag is not None:
            clauses.append("rowid IN (SELECT note FROM tags WHERE tag=?)")
            params.append(tag)
        if text:
            match = search_query.prefix_query(text)
            if match:
                clauses.append("rowid IN (SELECT rowid FROM note_fts WHERE note_fts MATCH ?)")
                params.append(match)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params

    def pins(self) -> list[Memory]:
        return self._memories(
            # `pinned = 1`, not a bare `pinned`: only a comparison can use the index, and
            # a scan of 100,000 rows takes 60 ms on every bundle.
            "SELECT doc, body FROM notes WHERE pinned = 1 AND broken IS NULL "
            "ORDER BY pin_order IS NULL, pin_order, created, mid"
        )

    def typed_fact_values(
        self, subjects: Sequence[str], predicates: Sequence[str]
    ) -> list[tuple[int, str]]:
        """(rowid, value) of current typed facts with these subjects and predicates.

        No documents are read: a subject like `user` can hold thousands of facts, so the
        caller narrows them by value first and loads only those (see `by_rowids`).
        """
        if not subjects or not predicates:
            return []
        subject_marks = ",".join("?" * len(subjects))
        predicate_marks = ",".join("?" * len(predicates))
        # `+status` keeps SQLite on the subject index: most memories are active, so the
        # status index would visit nearly every row.
        return self.execute(
            f"SELECT rowid, value FROM notes WHERE subject IN ({subject_marks}) "
            f"AND predicate IN ({predicate_marks}) AND +status = 'active' "
            "AND value IS NOT NULL AND broken IS NULL",
            [*subjects, *predicates],
        )

    def search_rows(
        self,
        query: str,
        *,
        limit: int = 20,
        statuses: Sequence[str] | None = ("active",),
        message: bool = False,
    ) -> list[int]:
        """Rowids of the best matches for a query (or a message to an agent), best first."""
        plan = search_query.plan(
            query, self._document_frequency, self._note_count(), message=message
        )
        if plan is None:
            return []
        if plan.by_recency:
            return self._newest_matches(plan.match, limit, statuses)
        sql, params = "SELECT rowid FROM note_fts WHERE note_fts MATCH ?", [plan.match]
        if plan.estimate > search_query.RANK_CAP:
            floor = self.execute(
                "SELECT rowid FROM note_fts WHERE note_fts MATCH ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (plan.match, search_query.RANK_CAP - 1),
            )
            if floor:
                sql += " AND rowid >= ?"
                params.append(floor[0][0])
        order = " ORDER BY bm25(note_fts, 4.0, 1.0)"
        # Rank inside the full-text index alone, then drop what the status filter
        # excludes; joining every match to its row first costs more than the ranking.
        fetch = limit * 3 + 20
        while True:
            ranked = [r for (r,) in self.execute(sql + order + " LIMIT ?", [*params, fetch])]
            kept = self._current(ranked, statuses)
            if len(kept) >= limit or len(ranked) < fetch:
                return kept[:limit]
            fetch *= 4

    def _newest_matches(self, match: str, limit: int, statuses: Sequence[str] | None) -> list[int]:
        """A query of common words: its newest current matches, by `created`.

        Rowids follow the order files were indexed in (after a rebuild, their paths), so
        the full-text index's own order is not the date. Up to `RECENT_CANDIDATES` of the
        most recently indexed matches are sorted by date: every match in a vault of a few
        thousand memories; at 100,000, recently indexed ones, in a few milliseconds.
        """
        where = "broken IS NULL"
        params: list[object] = []
        if statuses is not None:
            where += f" AND status IN ({','.join('?' * len(statuses))})"
            params += list(statuses)
        rows = self.execute(
            f"SELECT rowid FROM notes WHERE {where} AND rowid IN (SELECT rowid FROM note_fts "
            "WHERE note_fts MATCH ? ORDER BY rowid DESC LIMIT ?) "
            "ORDER BY created DESC, mid LIMIT ?",
            [*params, match, RECENT_CANDIDATES, limit],
        )
        return [rowid for (rowid,) in rows]

    def _current(self, rowids: list[int], statuses: Sequence[str] | None) -> list[int]:
        if not rowids:
            return []
        marks = ",".join("?" * len(rowids))
        sql = f"SELECT rowid FROM notes WHERE rowid IN ({marks}) AND broken IS NULL"
        params: list[object] = list(rowids)
        if statuses is not None:
            sql += f" AND status IN ({','.join('?' * len(statuses))})"
            params += list(statuses)
        ok = {r for (r,) in self.execute(sql, params)}
        return [r for r in rowids if r in ok]

    def search(self, query: str, *, limit: int = 20, include_retired: bool = False) -> list[Memory]:
        statuses = None if include_retired else ("active",)
        return self.by_rowids(self.search_rows(query, limit=limit, statuses=statuses))

    def _note_count(self) -> int:
        return self.execute("SELECT count(*) FROM notes")[0][0]

    def _document_frequency(self, terms: Sequence[str]) -> dict[str, int]:
        """How many memories contain each term, remembered between searches.

        Counting a term's matches is cheap for rare terms and a few milliseconds for the
        commonest; the counts only steer the query plan, so they may lag a few edits.
        """
        result = {}
        for term in terms:
            if term not in self._df_cache:
                rows = self.execute(
                    "SELECT count(*) FROM note_fts WHERE note_fts MATCH ?",
                    (search_query.match_term(term),),
                )
                if not rows[0][0]:
                    # Not remembered: the plan drops a term it counts as absent, so a cached
                    # 0 would hide the term's first memory from every later search.
                    result[term] = 0
                    continue
                self._df_cache[term] = rows[0][0]
            result[term] = self._df_cache[term]
        return result

    # --- corrections --------------------------------------------------------------------

    def reach_of(self, mid: str) -> list[tuple[Memory, str]]:
        """Every memory this correction reaches now, with the string it names."""
        rows = self.execute(
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
            return [tuple(r) for r in self.execute(sql)]  # type: ignore[misc]
        mids = list(target_mids)
        if not mids:
            return []
        marks = ",".join("?" * len(mids))
        return [tuple(r) for r in self.execute(sql + f" WHERE t.mid IN ({marks})", mids)]  # type: ignore[misc]

    def corrections_reaching(self, mids: Iterable[str]) -> dict[str, list[str]]:
        edges: dict[str, list[str]] = {}
        for correction, target in self.reach_edges(mids):
            edges.setdefault(target, []).append(correction)
        return edges

    # --- health ---------------------------------------------------------------------------

    def broken_files(self) -> list[tuple[str, str]]:
        return [
            (path, reason)
            for path, reason in self.execute(
                "SELECT path, broken FROM notes WHERE broken IS NOT NULL ORDER BY path"
            )
        ]

    def problems(self) -> list[tuple[str, str]]:
        """(path, problem) for every broken file and every key that could not be read."""
        found = self.broken_files()
        for doc, path in self.execute("SELECT doc, path FROM notes WHERE problems > 0"):
            found += [(path, p) for p in json.loads(doc)["problems"]]
        return sorted(found)

    def with_deprecates(self) -> list[Memory]:
        """Every memory that lists deprecated strings (a correction, even without an id)."""
        return self._memories(
            "SELECT doc, body FROM notes WHERE broken IS NULL "
            "AND doc NOT LIKE '%\"deprecates\":[]%'"
        )

    def without_id(self) -> list[Memory]:
        return self._memories(
            "SELECT doc, body FROM notes WHERE broken IS NULL AND doc LIKE '%\"has_id\":false%'"
        )

    def duplicate_ids(self) -> dict[str, list[str]]:
        rows = self.execute(
            "SELECT mid, path FROM notes WHERE mid IN "
            "(SELECT mid FROM notes WHERE broken IS NULL GROUP BY mid HAVING count(*) > 1) "
            "ORDER BY mid, path"
        )
        dupes: dict[str, list[str]] = {}
        for mid, path in rows:
            dupes.setdefault(mid, []).append(path)
        return dupes

    def size_bytes(self) -> int:
        return sum(
            os.path.getsize(p)
            for p in (self.db_path, Path(f"{self.db_path}-wal"))
            if os.path.exists(p)
        )


class IndexCorrupt(Exception):
    pass


def remove_index(db_path: Path) -> None:
    """Delete an index; the next open builds it again from the vault."""
    _remove_db(db_path)


def _remove_db(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{db_path}{suffix}")
