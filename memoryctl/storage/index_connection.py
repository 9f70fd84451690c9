"""The index's one SQLite connection: its lock, its transactions and its statements.

Every part of `Index` (see index.py) reads and writes through this connection. It is
opened with `check_same_thread=False` and guarded by one lock, so the methods are safe
to call from several threads.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from memoryctl.memory import Memory
from memoryctl.storage.config import VaultConfig
from memoryctl.storage.parsing import memory_from_doc

# Every connection reads the index through a memory map of its file, up to this size:
# each thread's connection then shares the pages the operating system holds already
# instead of copying them into a cache of its own, which a server's twenty worker
# threads, each with a cold cache, paid again and again (see docs/ARCHITECTURE.md).
MMAP_BYTES = 1 << 30


class IndexCorrupt(Exception):
    pass


def is_index_error(error: BaseException) -> bool:
    """Whether an error came from the index's database (a query, or a write of a sync)."""
    return isinstance(error, IndexCorrupt | sqlite3.DatabaseError)


class IndexConnection:
    """One open connection to an index file."""

    def __init__(self, db_path: Path, root: Path, config: VaultConfig) -> None:
        self.db_path = db_path
        self.root = root
        self.config = config
        self.notices: list[str] = []
        self._df_cache: dict[str, int] = {}
        self.built_fresh = False
        self._lock = threading.RLock()
        self._conn = self._connect()
        # The thread that opened the index reads through the main connection; any other
        # thread (a server's workers) gets a read-only connection of its own, so readers
        # run side by side instead of queueing for the one connection.
        self._owner = threading.get_ident()
        self._writing: int | None = None  # the thread inside a transaction
        self._local = threading.local()
        # Every thread's read-only connection, with its thread: a server's worker threads
        # come and go, and the connection of one that ended is closed when the next opens.
        self._readers: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._watcher: sqlite3.Connection | None = None  # asks only for the generation
        self._watcher_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.db_path, check_same_thread=False, isolation_level=None, timeout=30
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-65536")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        return conn

    def generation(self) -> int:
        """The index's generation: a number that changes whenever any connection, in this
        process or another, commits a change to the index (a sync, a write, a rebuild in
        place by `reindex --full`), and only then. What a long-running face remembers of
        the index is remembered for one generation (see docs/ARCHITECTURE.md).

        Asked on a connection of its own that never writes, so it never waits for a
        transaction in progress (SQLite's `data_version` on it counts every commit)."""
        with self._watcher_lock:
            if self._watcher is None:
                self._watcher = sqlite3.connect(
                    f"file:{self.db_path}?mode=ro", uri=True, check_same_thread=False, timeout=30
                )
            try:
                return self._watcher.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.DatabaseError as error:
                raise IndexCorrupt(str(error)) from error

    def close(self) -> None:
        with self._watcher_lock:
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None
        with self._lock:
            for _, reader in self._readers:
                reader.close()
            self._readers.clear()
            self._local = threading.local()
            self._conn.close()

    def _reader(self) -> sqlite3.Connection | None:
        """This thread's own read-only connection, or None to use the main one."""
        me = threading.get_ident()
        if me == self._owner or me == self._writing:
            return None
        reader = getattr(self._local, "conn", None)
        if reader is None:
            try:
                reader = sqlite3.connect(
                    f"file:{self.db_path}?mode=ro", uri=True, check_same_thread=False, timeout=30
                )
            except sqlite3.Error:
                return None
            reader.execute("PRAGMA cache_size=-16384")
            reader.execute("PRAGMA temp_store=MEMORY")
            reader.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            with self._lock:
                ended = [conn for thread, conn in self._readers if not thread.is_alive()]
                self._readers = [(t, c) for t, c in self._readers if t.is_alive()]
                self._readers.append((threading.current_thread(), reader))
            for conn in ended:
                conn.close()
            self._local.conn = reader
        return reader

    def building(self, timeout: float = 300) -> contextlib.AbstractContextManager[object]:
        """The lock that one process at a time holds to create, rebuild or bulk-load the
        index file (so none deletes or half-reads an index another is building)."""
        return building_lock(self.db_path, timeout)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            outer, self._writing = self._writing, threading.get_ident()
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._writing = outer
            self._conn.execute("COMMIT")

    def _execute(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        # A thread's own connection is read-only: a statement that writes (the live
        # checks' mark, say) goes through the main connection from any thread.
        reader = self._reader() if _reads_only(sql) else None
        try:
            if reader is not None:
                return reader.execute(sql, params).fetchall()
            with self._lock:
                return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.OperationalError) and "fts5" in str(error):
                raise
            raise IndexCorrupt(str(error)) from error

    def _memories(self, sql: str, params: Sequence[object] = ()) -> list[Memory]:
        return [memory_from_doc(doc, body) for doc, body in self._execute(sql, params)]


def _reads_only(sql: str) -> bool:
    return sql.lstrip()[:6].upper().startswith(("SELECT", "WITH"))


def building_lock(db_path: Path, timeout: float = 300) -> contextlib.AbstractContextManager[object]:
    from filelock import FileLock

    return FileLock(f"{db_path}.lock", timeout=timeout, thread_local=False)
