"""The vault list's reads: memories narrowed by typed filters, counted, in order, and
the text matches the TUI pages through."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from memoryctl import search_query
from memoryctl.memory import Memory
from memoryctl.storage.index_connection import IndexConnection
from memoryctl.storage.index_format import NEWEST_FIRST, PREFIX_LENGTHS

# A text at least this share of the memories match is paged newest first (`dense_page`).
DENSE_SHARE = 0.6


@dataclass(frozen=True)
class ListFilters:
    """What a list of memories is narrowed to. A facet left at None narrows nothing; a
    text keeps the memories whose title or body has every word, the last as a prefix."""

    status: str | None = None
    kind: str | None = None
    pinned: bool | None = None
    namespace: str | None = None
    tag: str | None = None
    text: str | None = None


EVERY_MEMORY = ListFilters()


class IndexLists(IndexConnection):
    """Lists, counts and orders of memories, for the CLI's list and the TUI's pages."""

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
    ) -> list[Memory]:
        """Memories newest first, narrowed by these filters, `limit` at a time."""
        filters = ListFilters(
            status=status, kind=kind, pinned=pinned, namespace=namespace, tag=tag, text=text
        )
        where, params = _where(filters)
        sql = f"SELECT doc, body FROM notes{where} ORDER BY {NEWEST_FIRST}"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        return self._memories(sql, params)

    def count(self, filters: ListFilters = EVERY_MEMORY) -> int:
        where, params = _where(filters)
        return self._execute(f"SELECT count(*) FROM notes{where}", params)[0][0]

    def rowids_in_order(
        self, filters: ListFilters = EVERY_MEMORY, limit: int | None = None
    ) -> list[int]:
        """The rowids `list` returns for these filters, in its order: newest first; the
        first `limit` of them when it is given.

        A list that pages through these reads any page, however deep, as quickly as the
        first (OFFSET would step over every row before it).
        """
        where, params = _where(filters)
        sql = f"SELECT rowid FROM notes{where} ORDER BY {NEWEST_FIRST}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = self._execute(sql, params)
        return [rowid for (rowid,) in rows]

    def namespaces_and_tags(self, most_tags: int = 200) -> tuple[list[str], list[str]]:
        """The namespaces in use, and the most used tags: what a person can filter by."""
        namespaces = self._execute("SELECT DISTINCT namespace FROM notes ORDER BY namespace")
        tags = self._execute(
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
        ((joined,),) = self._execute(f"SELECT group_concat(rowid) FROM ({sql})", params)
        return set(map(int, joined.split(","))) if joined else set()

    def text_matches_in_steps(self, text: str, step: int = 20_000) -> Iterator[set[int]]:
        """`text_matches` a range of rowids at a time, so a caller can stop between steps,
        and the index is free for other queries meanwhile."""
        match = search_query.prefix_query(text)
        if match is None:
            return
        highest = self._execute("SELECT max(rowid) FROM notes")[0][0] or 0
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
        return self._execute("SELECT count(*) FROM note_fts WHERE note_fts MATCH ?", (match,))[0][0]

    def dense_page(self, text: str, total: int, page: int) -> tuple[list[int], int] | None:
        """For a text most memories match, the rowids of its newest `page`, in `list`
        order, and how many it matches, read without handing every match to Python; None
        for any other text, whose matches `text_matches` reads at once.

        Only a text no longer than the index's longest prefix qualifies: each lookup is
        then a seek, where a longer prefix merges every word it starts, once per memory.
        """
        if not 0 < len(text) <= max(PREFIX_LENGTHS):
            return None
        count = self.text_count(text)
        if count is None or count < max(DENSE_SHARE * total, page):
            return None
        return self.newest_text_matches(text, page), count

    def newest_text_matches(self, text: str, limit: int) -> list[int]:
        """The rowids of the newest `limit` memories `text` matches, in `list` order.

        The newest memories are read in order and each is looked up in the full-text
        index, so this is quick when most memories match (a one-letter filter: 10 ms at
        100,000) and slow when few do: ask `text_count` first.
        """
        match = search_query.prefix_query(text)
        if match is None:
            return []
        rows = self._execute(
            "SELECT n.rowid FROM notes n INDEXED BY ix_notes_newest WHERE EXISTS "
            "(SELECT 1 FROM note_fts f WHERE f.rowid = n.rowid AND note_fts MATCH ?) "
            f"ORDER BY {NEWEST_FIRST} LIMIT ?",
            (match, limit),
        )
        return [rowid for (rowid,) in rows]


def _where(filters: ListFilters) -> tuple[str, list[object]]:
    """The WHERE clause (empty for no filter) and its parameters."""
    clauses: list[str] = []
    params: list[object] = []
    for column, value in (
        ("status", filters.status),
        ("kind", filters.kind),
        ("namespace", filters.namespace),
    ):
        if value is not None:
            clauses.append(f"{column}=?")
            params.append(value)
    if filters.pinned is not None:
        clauses.append("pinned=?")
        params.append(filters.pinned)
    if filters.tag is not None:
        clauses.append("rowid IN (SELECT note FROM tags WHERE tag=?)")
        params.append(filters.tag)
    if filters.text:
        match = search_query.prefix_query(filters.text)
        if match:
            clauses.append("rowid IN (SELECT rowid FROM note_fts WHERE note_fts MATCH ?)")
            params.append(match)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params
