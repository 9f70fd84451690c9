"""The SQLite index of a vault: memories, full-text search and correction reach.

The vault is the source of truth and the index is a cache. `Index.open` rebuilds the
index when it is missing, corrupt or from another schema version. `Index` is one class
made of one part per job, each in its own module:

- index_connection.py: the connection, its lock and transactions;
- index_sync.py: syncing with the vault's files, and each correction's reach;
- index_reads.py: memories by reference, pins, typed facts and ranked search;
- index_lists.py: the vault list's filtered, counted and ordered reads (`ListFilters`);
- index_health.py: what `memoryctl doctor` and the review checks ask;
- contest_queries.py: what the bundle asks to find what contests a memory.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import unicodedata
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memoryctl.storage.changes import LiveChanges
from memoryctl.storage.config import VaultConfig
from memoryctl.storage.contest_queries import ContestQueries
from memoryctl.storage.index_connection import IndexCorrupt, building_lock, is_index_error
from memoryctl.storage.index_format import FTS_DDL, SCHEMA_VERSION, set_fts_settings
from memoryctl.storage.index_health import IndexHealth
from memoryctl.storage.index_lists import IndexLists, ListFilters
from memoryctl.storage.index_reads import RECENT_CANDIDATES, IndexReads
from memoryctl.storage.index_sync import Progress, SyncReport
from memoryctl.storage.vault_identity import vault_identity

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = [
    "RECENT_CANDIDATES",
    "Index",
    "IndexCorrupt",
    "ListFilters",
    "SyncReport",
    "is_index_error",
    "rebuild_index",
    "remove_index",
]


class Index(IndexHealth, IndexLists, IndexReads, ContestQueries, LiveChanges):
    """One open index. Methods are safe to call from several threads."""

    @cached_property
    def _engine(self) -> Engine:
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
        # One process at a time decides whether the file must be rebuilt, and creates the
        # tables: two at once would delete each other's index or create a table twice.
        with building_lock(db_path):
            return cls._open(db_path, root, config)

    @classmethod
    def _open(cls, db_path: Path, root: Path, config: VaultConfig) -> Index:
        existed = db_path.exists()
        identity = vault_identity(root)
        reason = None
        index: Index | None = None
        try:
            index = cls(db_path, root, config)
            reason = index._why_stale(identity) if existed else None
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
        index._record_vault(identity)
        return index

    def _why_stale(self, identity: str | None) -> str | None:
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
        built_for = self._built_for()
        if identity is not None and built_for is not None and built_for != identity:
            # The same path, another vault: the old rows and the live checks' mark would
            # take the new vault's files for ones already checked.
            return "it was built for another vault at this path"
        self._conn.execute("SELECT count(*) FROM notes").fetchone()
        return None

    def _create_schema(self) -> None:
        """Build the tables of an empty index. sqlmodel's import is paid here, where a
        build of the whole index follows, and nowhere else (see docs/ARCHITECTURE.md)."""
        with self._lock:
            if self._conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                return
            from sqlmodel import Session, SQLModel

            from memoryctl.storage.schema import MetaRow

            SQLModel.metadata.create_all(self._engine)
            for ddl in FTS_DDL:
                self._conn.execute(ddl)
            set_fts_settings(self._conn)
            with Session(self._engine) as session:
                session.merge(MetaRow(key="unicode", value=unicodedata.unidata_version))
                session.commit()
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _built_for(self) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key='vault'").fetchone()
        return row[0] if row else None

    def _record_vault(self, identity: str | None) -> None:
        """Note the vault this index is for; an index made before it noted one takes it."""
        if identity is not None and self._built_for() != identity:
            with self._lock:
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('vault', ?)", (identity,)
                )

    def close(self) -> None:
        with self._lock:
            if "_engine" in self.__dict__:
                self._engine.dispose()
            super().close()


def rebuild_index(
    db_path: Path, root: Path, config: VaultConfig, progress: Progress | None = None
) -> tuple[Index, SyncReport]:
    """The index built again from nothing but the vault's files (`reindex --full`).

    In place, in one transaction (`Index.rebuild`), so the TUI and the MCP server keep
    reading it meanwhile and never hold a deleted file; only an index SQLite cannot
    read at all is deleted and built anew."""
    index = Index.open(db_path, root, config)  # a file it cannot read is rebuilt here
    try:
        if not index.count():
            return index, index.sync(progress=progress)  # empty: the fast cold build
        return index, index.rebuild(progress=progress)
    except (IndexCorrupt, sqlite3.DatabaseError):
        index.close()
    remove_index(db_path)
    index = Index.open(db_path, root, config)
    index.notices.append("The index could not be read, so it was deleted and built again.")
    return index, index.sync(progress=progress)


def remove_index(db_path: Path) -> None:
    """Delete an index; the next open builds it again from the vault. Waits for a
    process that is building it."""
    with building_lock(db_path):
        _remove_db(db_path)


def _remove_db(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{db_path}{suffix}")
