"""Helpers for the tests of search in text written without spaces."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memoryctl import search_query
from memoryctl.storage.index_format import FTS_DDL
from memoryctl.storage.parsing import fts_body


def add(cli, vault_dir: Path, text: str) -> str:
    return cli("--vault", str(vault_dir), "add", text).out.strip()


def searched(cli, vault_dir: Path, query: str) -> list[str]:
    found = cli("--vault", str(vault_dir), "search", query, "--json")
    assert found.code == 0, found.err
    return [m["id"] for m in found.json()]


def assert_found_inside(text: str, inside: str) -> None:
    """A memory of `text` is found by `inside` (a string in it) as a search, as a
    message and as the TUI's filter while typing, and another memory is not."""
    db = sqlite3.connect(":memory:")
    db.execute(FTS_DDL[0])
    db.execute("INSERT INTO note_fts(rowid, title, body) VALUES (1, '', ?)", (fts_body(text),))
    db.execute("INSERT INTO note_fts(rowid, title, body) VALUES (2, '', ?)", (fts_body("無関係"),))

    def found(match: str) -> bool:
        rows = db.execute("SELECT rowid FROM note_fts WHERE note_fts MATCH ?", (match,))
        return 1 in {rowid for (rowid,) in rows}

    def frequency(terms):
        return {t: int(found(search_query.match_term(t))) for t in terms}

    for message in (False, True):
        plan = search_query.plan(inside, frequency, 2, message=message)
        assert plan is not None and found(plan.match), (inside, plan)
    typed = search_query.prefix_query(inside)
    assert typed is not None and found(typed)
