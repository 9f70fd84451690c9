"""What `memoryctl doctor` asks the index: problems, corrections, ids, size."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memoryctl.memory import Memory
from memoryctl.storage.index_sync import IndexSync


class IndexHealth(IndexSync):
    """The index's answers about the vault's health."""

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
