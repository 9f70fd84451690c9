"""What `memoryctl doctor` and the review checks ask the index."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memoryctl.memory import Memory
from memoryctl.storage.contest_queries import NAMES_RETIREMENTS
from memoryctl.storage.index_format import HAS_EXPIRY
from memoryctl.storage.index_sync import IndexSync


class IndexHealth(IndexSync):
    """The index's answers about the vault's health, and what the checks look at."""

    def problems(self) -> list[tuple[str, str]]:
        """(path, problem) for every broken file and every key that could not be read."""
        found = self.broken_files()
        for doc, path in self._execute("SELECT doc, path FROM notes WHERE problems > 0"):
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
        rows = self._execute(
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

    # --- what the checks look at --------------------------------------------------------

    def derivations(self) -> list[tuple[str, str, str]]:
        """(id, path, source) for every entry of every memory's `derived_from`."""
        return self._execute(
            "SELECT n.mid, n.path, d.source FROM derivations d JOIN notes n ON n.rowid = d.note"
        )

    def retired_with_descendants(self) -> list[Memory]:
        """Retired memories that another memory is derived from."""
        return self._headers("status = 'retired' AND mid IN (SELECT source FROM derivations)")

    def naming_retires(self, *, active_only: bool = False) -> list[Memory]:
        """Memories that name others in `retires` (only active ones, if asked)."""
        status = " AND status = 'active'" if active_only else ""
        return self._headers(NAMES_RETIREMENTS + status)

    def with_anchors(self, *, include_retired: bool = True) -> list[Memory]:
        status = "" if include_retired else "status != 'retired' AND "
        return self._headers(status + "doc NOT LIKE '%\"anchors\":[]%'")

    def with_typed_parts(self) -> list[Memory]:
        """Memories that state any of a subject, a predicate or a value."""
        return self._headers("(subject IS NOT NULL OR predicate IS NOT NULL OR value IS NOT NULL)")

    def current_with_expiry(self) -> list[Memory]:
        """Memories not retired that have an `expires` date."""
        return self._headers(f"{HAS_EXPIRY} AND status != 'retired'")

    def imported(self) -> list[Memory]:
        """Every readable memory an import made (its source kind is `import`), with its body."""
        return self._memories(
            "SELECT doc, body FROM notes WHERE broken IS NULL "
            'AND doc LIKE \'%"source_kind":"import"%\''
        )

    def ids(self) -> set[str]:
        """Every id in use, for drawing new ones that no memory has."""
        return {mid for (mid,) in self._execute("SELECT mid FROM notes")}

    def _headers(self, condition: str) -> list[Memory]:
        """Readable memories meeting a condition, without their bodies: the checks read
        none, and leaving them out halves the time at 100,000 memories."""
        return self._memories(f"SELECT doc, '' FROM notes WHERE broken IS NULL AND {condition}")
