"""The index's version and the SQL that sqlmodel's tables (in schema.py) do not cover.

Apart from schema.py so that opening an index that is already built does not import
sqlmodel and SQLAlchemy (0.3 s, which the TUI would spend before its first paint).
"""

from __future__ import annotations

import sqlite3

from memoryctl.character_pairs import MARKS

# Bump when a table, a column or the meaning of a stored value changes: an index with
# another version is rebuilt from the vault.
SCHEMA_VERSION = 19


def source_ref(table: str = "") -> str:
    """A memory's `source.ref`, as stored in its document (of `table`, when given)."""
    column = f"{table}.doc" if table else "doc"
    return f"json_extract({column}, '$.source_ref')"


# The prefix lengths the full-text index keeps: a filter of one or two letters in the
# TUI reads one list of rows instead of merging every term that starts with them (at
# 100,000 memories, "a" takes 40 ms instead of 155 and "th" 35 instead of 140; the cold
# build takes 1-2 s longer).
PREFIX_LENGTHS = (1, 2)

# How the full-text index writes its segments, set when it is created and before a
# rebuild in place. Merging segments less eagerly (automerge, crisismerge) builds a cold
# index of 100,000 memories in about half the time. A build keeps up to 64 MB of terms in
# memory before it writes them out as a segment (FTS5's `hashsize`, 1 MB by default): a
# cold build at 100,000 memories then leaves 2 segments instead of 31, and every term a
# search looks up is read from 2 lists instead of 31 (message search at 100,000 memories
# takes about a quarter less CPU; the build itself a little less; see
# docs/ARCHITECTURE.md, "Search"). A build then merges them into one
# (`index_sync._merge_full_text`), so that no later edit's write merges them.
FTS_SETTINGS = (("automerge", 16), ("crisismerge", 64), ("hashsize", 64 << 20))


def set_fts_settings(conn: sqlite3.Connection) -> None:
    """Store `FTS_SETTINGS` in the full-text index (FTS5 keeps them in its config table)."""
    for key, value in FTS_SETTINGS:
        conn.execute("INSERT INTO note_fts(note_fts, rank) VALUES (?, ?)", (key, value))


# The condition of `ix_notes_expiring`: the memory has an `expires` date.
HAS_EXPIRY = "instr(doc, '\"expires\":null') = 0"

# The condition of the typed-fact indexes (see below).
TYPED_FACT = "subject IS NOT NULL AND predicate IS NOT NULL AND value IS NOT NULL"

# The vault list's order, newest first: by `created`, then, among memories created in the
# same second (an agent's burst of `remember`, a script's loop of `memoryctl add`), the
# file written last first, by the modification time the index last saw; then by id, for
# files written in the same instant. `ix_notes_newest` holds this order, so the list is
# read from the index alone.
NEWEST_FIRST = "created DESC, mtime_ns DESC, mid"

# The full-text tokenizer: `unicode61`, with the accents of Latin letters removed, and
# the vowel signs and tone marks of Thai, Lao, Khmer and Burmese kept inside a term (it
# would end a term at each), so the pairs of their letters that the index is given
# (`character_pairs`) are its terms. Other text is split as `unicode61` splits it.
TOKENIZER = f"unicode61 remove_diacritics 2 tokenchars '{MARKS}'"

# Created after sqlmodel's tables.
FTS_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS note_fts USING fts5("
    f"title, body, content='', tokenize=\"{TOKENIZER}\", "
    f"prefix='{' '.join(str(n) for n in PREFIX_LENGTHS)}')",
    # The vault list's order, read from the index alone (no sort) on every filter.
    f"CREATE INDEX IF NOT EXISTS ix_notes_newest ON notes({NEWEST_FIRST})",
    # The few memories that name others in `retires`, found without reading every
    # document: the bundle asks on every message, the live checks on every change.
    # (A partial index: SQLite keeps it current, and a query must repeat its condition.)
    "CREATE INDEX IF NOT EXISTS ix_notes_retiring ON notes(status) "
    "WHERE instr(doc, '\"retires\":[]') = 0",
    # The typed facts alone (a tenth of a vault, or fewer): the newest fact of a subject's
    # predicate, every fact of it, and those that hold a value, read without visiting the
    # other facts about the subject (`user` can hold thousands), by the folded keys the
    # rules compare. Queries repeat `TYPED_FACT` word for word, as SQLite asks of a
    # partial index.
    "CREATE INDEX IF NOT EXISTS ix_notes_facts "
    f"ON notes(subject_key, predicate_key, created, mid) WHERE {TYPED_FACT}",
    "CREATE INDEX IF NOT EXISTS ix_notes_fact_values "
    f"ON notes(subject_key, predicate_key, value_key) WHERE {TYPED_FACT}",
    # The current memories of a title, newest first by kind and namespace: the bundle
    # asks for the newest of each title it shows (`ContestQueries.newest_of_titles`).
    "CREATE INDEX IF NOT EXISTS ix_notes_titles "
    "ON notes(title_key, kind, namespace, created, mid) WHERE title_key IS NOT NULL",
    # The few memories with an `expires` date, found without reading every document:
    # `check` asks for them all.
    f"CREATE INDEX IF NOT EXISTS ix_notes_expiring ON notes(status) WHERE {HAS_EXPIRY}",
    # Every file's stat, read from the index alone when a sync compares it with the disk:
    # a warm open of 100,000 memories would otherwise read every page of the table.
    "CREATE INDEX IF NOT EXISTS ix_notes_stamps ON notes(path, size, mtime_ns)",
    # The few files that could not be read, which every sync reports.
    "CREATE INDEX IF NOT EXISTS ix_notes_broken ON notes(path) WHERE broken IS NOT NULL",
    # Each memory's source (one conversation, one document) in time order, so a recalled
    # turn of a chat brings the turn that followed it (`IndexReads.next_in_source`).
    f"CREATE INDEX IF NOT EXISTS ix_notes_source ON notes({source_ref()}, created) "
    f"WHERE {source_ref()} IS NOT NULL",
)
