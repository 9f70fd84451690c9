"""The index's version and the SQL that sqlmodel's tables (in schema.py) do not cover.

Apart from schema.py so that opening an index that is already built does not import
sqlmodel and SQLAlchemy (0.3 s, which the TUI would spend before its first paint).
"""

# Bump when a table, a column or the meaning of a stored value changes: an index with
# another version is rebuilt from the vault.
SCHEMA_VERSION = 13


def source_ref(table: str = "") -> str:
    """A memory's `source.ref`, as stored in its document (of `table`, when given)."""
    column = f"{table}.doc" if table else "doc"
    return f"json_extract({column}, '$.source_ref')"


# The prefix lengths the full-text index keeps: a filter of one or two letters in the
# TUI reads one list of rows instead of merging every term that starts with them (at
# 100,000 memories, "a" takes 40 ms instead of 155 and "th" 35 instead of 140; the cold
# build takes 1-2 s longer).
PREFIX_LENGTHS = (1, 2)

# The condition of `ix_notes_expiring`: the memory has an `expires` date.
HAS_EXPIRY = "instr(doc, '\"expires\":null') = 0"

# The condition of the typed-fact indexes (see below).
TYPED_FACT = "subject IS NOT NULL AND predicate IS NOT NULL AND value IS NOT NULL"

# Created after sqlmodel's tables.
FTS_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS note_fts USING fts5("
    "title, body, content='', tokenize='unicode61 remove_diacritics 2', "
    f"prefix='{' '.join(str(n) for n in PREFIX_LENGTHS)}')",
    # The vault list's order, read from the index alone (no sort) on every filter.
    "CREATE INDEX IF NOT EXISTS ix_notes_newest ON notes(created DESC, mid)",
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
