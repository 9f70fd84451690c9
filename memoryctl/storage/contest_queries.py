"""The index queries that find what contests a shown memory (see `contested.py`).

Each reads only the few rows it needs: the bundle asks them for every message.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from memoryctl.memory import Memory, normalized
from memoryctl.storage.index_connection import IndexConnection
from memoryctl.storage.index_format import TYPED_FACT

# The partial index `ix_notes_retiring` holds only memories whose `retires` is not
# empty; a query must repeat this condition word for word for SQLite to use it.
NAMES_RETIREMENTS = "instr(doc, '\"retires\":[]') = 0"


class ContestQueries(IndexConnection):
    """The part of `Index` that `contested.py` reads through."""

    def naming_in_retires(self, mids: Iterable[str]) -> list[Memory]:
        """The active memories whose `retires` may name one of these ids (the caller
        checks the list itself: the id is only looked for somewhere in the stored
        document)."""
        wanted = sorted(set(mids))
        if not wanted:
            return []
        found: list[Memory] = []
        for start in range(0, len(wanted), 200):
            part = wanted[start : start + 200]
            found += self._memories(
                f"SELECT doc, body FROM notes WHERE {NAMES_RETIREMENTS} AND broken IS NULL "
                f"AND status = 'active' AND ({' OR '.join('instr(doc, ?) > 0' for _ in part)})",
                [json.dumps(mid, ensure_ascii=False) for mid in part],
            )
        return found

    def newest_facts(self, pairs: Iterable[tuple[str, str]]) -> list[Memory]:
        """For each (subject, predicate), compared as the rules compare them (case and
        whitespace folded), the newest active typed fact that holds it."""
        found: list[Memory] = []
        for subject, predicate in sorted({(normalized(s), normalized(p)) for s, p in pairs}):
            found += self._memories(
                "SELECT doc, body FROM notes WHERE subject_key = ? AND predicate_key = ? "
                f"AND {TYPED_FACT} AND +status = 'active' AND broken IS NULL "
                "ORDER BY created DESC, mid DESC LIMIT 1",
                (subject, predicate),
            )
        return found

    def newest_of_titles(self, keys: Iterable[tuple[str, str, str]]) -> list[Memory]:
        """For each (folded title, kind, namespace), the newest current memory of it,
        where the title has more than one. The dates of a title's memories are read
        from `ix_notes_titles` alone; only the newest of a title that others share is
        read as a memory (for most titles, none)."""
        wanted = set(keys)
        titles = sorted({title for title, _, _ in wanted})
        newest: dict[tuple[str, str, str], tuple[str, str]] = {}
        shared: set[tuple[str, str, str]] = set()
        for start in range(0, len(titles), 500):
            part = titles[start : start + 500]
            for title, kind, namespace, created, mid in self._execute(
                "SELECT title_key, kind, namespace, created, mid FROM notes "
                f"WHERE title_key IN ({','.join('?' * len(part))})",
                part,
            ):
                key = (title, kind, namespace)
                if key not in wanted:
                    continue
                if key in newest:
                    shared.add(key)
                if key not in newest or (created, mid) > newest[key]:
                    newest[key] = (created, mid)
        mids = sorted({newest[key][1] for key in shared})
        if not mids:
            return []
        return self._memories(
            "SELECT doc, body FROM notes WHERE title_key IS NOT NULL "
            f"AND mid IN ({','.join('?' * len(mids))})",
            mids,
        )

    def of_titles(self, titles: Iterable[str]) -> list[Memory]:
        """Every current memory of these folded titles."""
        wanted = sorted(set(titles))
        found: list[Memory] = []
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            found += self._memories(
                f"SELECT doc, body FROM notes WHERE title_key IN ({','.join('?' * len(part))})",
                part,
            )
        return found

    def sharing_titles(self) -> list[Memory]:
        """Every current memory whose folded title another current memory has too,
        found from `ix_notes_titles` alone before any document is read."""
        return self._memories(
            "SELECT doc, body FROM notes WHERE title_key IN (SELECT title_key FROM notes "
            "WHERE title_key IS NOT NULL GROUP BY title_key HAVING count(*) > 1)"
        )
