"""Which index rows the live checks have seen (see `live_checks.py`).

Every changed or new file gets a new rowid, above every rowid before it, so the rows
above a stored mark are exactly what changed since the checks last ran. The mark lives
in the index's `meta` table, so a rebuilt index starts again from nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from memoryctl.memory import Memory, normalized
from memoryctl.storage.index_connection import IndexConnection
from memoryctl.storage.index_format import TYPED_FACT
from memoryctl.storage.parsing import memory_from_doc

MARK = "live_checked_rowid"


class LiveChanges(IndexConnection):
    """The part of `Index` that `live_checks.py` reads through."""

    def newest_rowid(self) -> int:
        return self._execute("SELECT coalesce(max(rowid), 0) FROM notes")[0][0]

    def live_mark(self) -> int | None:
        rows = self._execute("SELECT value FROM meta WHERE key = ?", (MARK,))
        return int(rows[0][0]) if rows else None

    def set_live_mark(self, rowid: int) -> None:
        self._execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (MARK, str(rowid)))

    def live_checks_due(self) -> bool:
        """Whether anything changed since the live checks last ran: a row above their
        mark, a memory kept as it was before its file changed, or no mark at all. One
        query on two indexes, so a command on an unchanged vault loads no checks."""
        rows = self._execute(
            "SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), -1) "
            "< (SELECT coalesce(max(rowid), 0) FROM notes) OR EXISTS (SELECT 1 FROM removed)",
            (MARK,),
        )
        return bool(rows[0][0])

    def rows_after(self, rowid: int) -> int:
        return self._execute("SELECT count(*) FROM notes WHERE rowid > ?", (rowid,))[0][0]

    def removed_upto(self) -> int:
        """The number of the last memory kept as it was before its file changed or went
        away (0 when none is kept)."""
        return self._execute("SELECT coalesce(max(seq), 0) FROM removed")[0][0]

    def removed(self, upto: int) -> list[Memory]:
        """The memories as they were before their files changed or went away since the
        last `forget_removed`, up to number `upto`, oldest first (without bodies)."""
        rows = self._execute("SELECT doc FROM removed WHERE seq <= ? ORDER BY seq", (upto,))
        return [memory_from_doc(doc, "") for (doc,) in rows]

    def forget_removed(self, upto: int) -> None:
        self._execute("DELETE FROM removed WHERE seq <= ?", (upto,))

    def memories_after(self, rowid: int) -> list[Memory]:
        """The readable memories indexed after `rowid` (their bodies left out)."""
        return self._memories(
            "SELECT doc, '' FROM notes WHERE rowid > ? AND broken IS NULL", (rowid,)
        )

    def facts_about(
        self, subjects: Sequence[str], predicates: Sequence[str], value: str | None = None
    ) -> list[Memory]:
        """The typed facts (not retired) with these subjects and predicates (and this
        value, when given), compared as the rules compare them (case and whitespace
        folded), read from the columns alone: enough for the rules, and fast for a
        subject with thousands."""
        if not subjects or not predicates:
            return []
        found: list[Memory] = []
        keys = sorted({normalized(p) for p in predicates})
        by_value = "" if value is None else "AND value_key = ? "
        folded = sorted({normalized(s) for s in subjects})
        for start in range(0, len(folded), 200):
            part = folded[start : start + 200]
            found += self._facts(
                f"subject_key IN ({','.join('?' * len(part))}) "
                f"AND predicate_key IN ({','.join('?' * len(keys))}) {by_value}",
                [*part, *keys, *(() if value is None else (normalized(value),))],
            )
        return found

    def current_typed_facts(self) -> list[Memory]:
        """Every typed fact not retired, read from the columns alone (see `facts_about`)."""
        return self._facts("1 ", [])

    def _facts(self, condition: str, params: Sequence[object]) -> list[Memory]:
        rows = self._execute(
            "SELECT mid, path, title, created, status, subject, predicate, value FROM notes "
            f"WHERE {condition}AND {TYPED_FACT} AND +status != 'retired' AND broken IS NULL",
            params,
        )
        return [
            Memory(
                id=mid,
                path=path,
                title=title,
                created=created,
                status=status,
                subject=subject,
                predicate=predicate,
                value=value,
            )
            for mid, path, title, created, status, subject, predicate, value in rows
        ]
