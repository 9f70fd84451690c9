"""The index's tables. The index is a cache: every row can be rebuilt from the vault."""

from __future__ import annotations

from sqlmodel import Field, SQLModel

# The version (bump it when a table, a column or the meaning of a stored value changes)
# and the full-text table live in index_format, which opening a warm index needs
# without importing sqlmodel.
from memoryctl.storage.index_format import FTS_DDL, SCHEMA_VERSION

__all__ = ["FTS_DDL", "SCHEMA_VERSION"]


class NoteRow(SQLModel, table=True):
    __tablename__ = "notes"

    rowid: int | None = Field(default=None, primary_key=True)
    mid: str = Field(index=True)
    path: str = Field(unique=True)
    size: int
    mtime_ns: int
    sha: str
    title: str
    kind: str = Field(index=True)
    status: str = Field(index=True)
    pinned: bool = Field(index=True)
    pin_order: float | None = None
    created: str = Field(index=True)
    namespace: str = Field(index=True)
    visibility: str
    subject: str | None = None
    predicate: str | None = None
    value: str | None = None
    # The subject, predicate and value as facts are compared (`memory.normalized`: case
    # and whitespace folded), so the typed-fact indexes find `Ada lives_in` for `ada
    # Lives_In` and the facts that hold a value without reading every fact about the
    # subject.
    subject_key: str | None = None
    predicate_key: str | None = None
    value_key: str | None = None
    # A current memory's folded title (`memory.title_key`; NULL for any other), so the
    # memories that share a title are found by the index, not by a scan.
    title_key: str | None = None
    is_correction: bool = False
    broken: str | None = None
    problems: int = 0
    doc: str
    body: str


class TagRow(SQLModel, table=True):
    __tablename__ = "tags"

    note: int = Field(primary_key=True, foreign_key="notes.rowid")
    tag: str = Field(primary_key=True, index=True)


class DeprecationRow(SQLModel, table=True):
    """One deprecated string of one correction."""

    __tablename__ = "deprecations"

    note: int = Field(primary_key=True, foreign_key="notes.rowid")
    needle: str = Field(primary_key=True)


class ReachRow(SQLModel, table=True):
    """A correction reaches a target: the target is older and names a deprecated string."""

    __tablename__ = "reach"

    correction: int = Field(primary_key=True, foreign_key="notes.rowid")
    target: int = Field(primary_key=True, foreign_key="notes.rowid", index=True)
    needle: str


class DerivationRow(SQLModel, table=True):
    __tablename__ = "derivations"

    note: int = Field(primary_key=True, foreign_key="notes.rowid")
    source: str = Field(primary_key=True, index=True)


class RemovedRow(SQLModel, table=True):
    """A memory's row as it was before its file changed or went away, kept until the
    live checks have compared it with what is there now (see `live_checks.py`)."""

    __tablename__ = "removed"

    seq: int | None = Field(default=None, primary_key=True)
    mid: str
    doc: str


class MetaRow(SQLModel, table=True):
    __tablename__ = "meta"

    key: str = Field(primary_key=True)
    value: str
