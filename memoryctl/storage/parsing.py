"""Reading memory files into index rows, in this process or in worker processes.

A cold index of 100,000 memories spends more time reading and parsing files in Python
than SQLite spends storing them, so large batches are parsed by worker processes while
the main process writes. This module imports nothing heavy, so workers start fast.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import NamedTuple

from memoryctl import character_pairs, matching
from memoryctl.memory import (
    Anchor,
    DecisionRecord,
    Memory,
    broken_memory,
    memory_from_note,
    normalized,
    path_id,
    template_memory,
    title_key,
)
from memoryctl.moments import iso
from memoryctl.storage import notefile, seal

# Parsing in worker processes pays for itself only on large batches.
POOL_THRESHOLD = 4000
CHUNK = 1000


class ParsedFile(NamedTuple):
    """One file, ready to insert: its stat and hash, and its rows in every table.

    Plain tuples of text and numbers, not a `Memory`: a worker process sends 100,000 of
    them to the process that inserts, and a tuple is what pickles fastest both ways."""

    relpath: str
    sha: str
    mid: str
    has_id: bool
    # The `notes` columns after the rowid, in `NOTE_COLUMNS` order.
    row: tuple
    # The full-text title (with aliases) and body, folded.
    fts: tuple[str, str]
    tags: tuple[str, ...]
    derived_from: tuple[str, ...]
    # The usable deprecated strings of a correction with an id (one without an id cannot
    # be referred to, so it reaches nothing).
    needles: tuple[str, ...]

    @property
    def size(self) -> int:
        return self.row[2]

    @property
    def mtime_ns(self) -> int:
        return self.row[3]


NOTE_COLUMNS = (
    "mid", "path", "size", "mtime_ns", "sha", "title", "kind", "status", "pinned",
    "pin_order", "created", "namespace", "visibility", "subject", "predicate", "value",
    "subject_key", "predicate_key", "value_key", "title_key", "is_correction", "broken",
    "problems", "doc", "body",
)  # fmt: skip


def memory_doc(memory: Memory) -> str:
    """Every field but the body, as JSON; the index stores it to rebuild the Memory."""
    data = {
        "id": memory.id,
        "path": memory.path,
        "title": memory.title,
        "aliases": memory.aliases,
        "description": memory.description,
        "kind": memory.kind,
        "status": memory.status,
        "pinned": memory.pinned,
        "pin_order": memory.pin_order,
        "created": memory.created,
        "updated": memory.updated,
        "valid_from": memory.valid_from,
        "valid_until": memory.valid_until,
        "checked": memory.checked,
        "expires": memory.expires,
        "tags": memory.tags,
        "namespace": memory.namespace,
        "visibility": memory.visibility,
        "source_kind": memory.source_kind,
        "source_ref": memory.source_ref,
        "source_digest": memory.source_digest,
        "confidence": memory.confidence,
        "deprecates": memory.deprecates,
        "detached": memory.detached,
        "derived_from": memory.derived_from,
        "retires": memory.retires,
        "anchors": [a.as_dict() for a in memory.anchors],
        "subject": memory.subject,
        "predicate": memory.predicate,
        "value": memory.value,
        "retired_record": _record_doc(memory.retired_record),
        "review_record": _record_doc(memory.review_record),
        "has_id": memory.has_id,
        "problems": memory.problems,
        "broken": memory.broken,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _record_doc(record: DecisionRecord | None) -> list[str | None] | None:
    return None if record is None else [record.at, record.reason, record.proposal]


_TUPLES = ("aliases", "tags", "deprecates", "detached", "derived_from", "retires", "problems")


@lru_cache(maxsize=4096)
def memory_from_doc(doc: str, body: str) -> Memory:
    """The memory an index row holds. Remembered for the rows read lately (a `Memory` is
    frozen): a server reads the same pins and recalls for call after call."""
    data = json.loads(doc)
    for key in _TUPLES:
        data[key] = tuple(data[key])
    data["anchors"] = tuple(Anchor(**a) for a in data["anchors"])
    for key in ("retired_record", "review_record"):
        if data[key] is not None:
            data[key] = DecisionRecord(*data[key])
    return Memory(body=body, **data)


def iso_from_ns(ns: int) -> str:
    return iso(dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC))


def read_memory(root: Path | str, relpath: str, size: int, mtime_ns: int) -> tuple[Memory, str]:
    """Read and parse one file; a broken file still yields a memory that names the reason."""
    fallback = iso_from_ns(mtime_ns)
    if size > notefile.MAX_FILE_BYTES:
        return broken_memory(relpath, "file is larger than 10 MB", fallback), ""
    try:
        with open(os.path.join(root, relpath), "rb") as file:  # no Path: 100,000 files
            raw = file.read()
    except OSError as error:
        return broken_memory(relpath, f"cannot read: {error.strerror}", fallback), ""
    sha = notefile.sha256(raw)
    if seal.is_sealed(raw):
        return sealed_memory(relpath, fallback), sha
    try:
        note = notefile.parse_bytes(raw)
    except notefile.NoteError as error:
        template = _template(raw)
        if template is not None:
            return template_memory(relpath, template, fallback), sha
        return broken_memory(relpath, str(error), fallback), sha
    return _memory(relpath, raw, note, fallback), sha


def _memory(relpath: str, raw: bytes, note: notefile.NoteFile, fallback: str) -> Memory:
    """The memory of a file that parsed as a note (a template's, if it is one)."""
    if b"{{" in raw or b"<%" in raw:
        template = _template(raw)
        if template is not None:
            return template_memory(relpath, template, fallback)
    return memory_from_note(relpath, note.data, note.body, fallback)


def parsed_note(
    relpath: str, raw: bytes, note: notefile.NoteFile, size: int, mtime_ns: int
) -> ParsedFile:
    """A file memoryctl just wrote, ready to insert from the bytes and the parsed note it
    already holds (`note` is `notefile.parse_bytes(raw)`), without reading it again."""
    if seal.is_sealed(raw):
        memory = sealed_memory(relpath, iso_from_ns(mtime_ns))
    else:
        memory = _memory(relpath, raw, note, iso_from_ns(mtime_ns))
    return parsed_file(memory, relpath, size, mtime_ns, notefile.sha256(raw))


class RowsAside:
    """The index rows of new memory files this process is about to write (relpath,
    bytes, the note they parse as), made by a forked worker process while this one
    writes the files and commits them: on two cores, making the rows then costs no
    time. A small batch, or a process running other threads (which makes forking
    unsafe), has them made here when they are asked for.

    A row is made before its file has a size and time on disk: `row_of` gives it the
    ones the file was written with."""

    def __init__(self, files: Sequence[tuple[str, bytes, notefile.NoteFile]]) -> None:
        self._files = files
        self._given = {relpath: raw for relpath, raw, _ in files}
        self._rows: dict[str, ParsedFile] | None = None
        self._worker: BaseProcess | None = None
        self._receive: Connection | None = None
        if (
            len(files) >= POOL_THRESHOLD
            and threading.active_count() == 1
            and "fork" in get_all_start_methods()
        ):
            context = get_context("fork")
            self._receive, send = context.Pipe(duplex=False)
            self._worker = context.Process(target=_send_rows, args=(send, files), daemon=True)
            self._worker.start()
            send.close()

    def row_of(
        self, relpath: str, raw: bytes, note: notefile.NoteFile, size: int, mtime_ns: int
    ) -> ParsedFile:
        """The row of a file written with this size and time (`raw` and `note` as given)."""
        made = self._made().get(relpath)
        if made is None or self._given.get(relpath) != raw or made.row[10] == _NO_TIME:
            # Not one given, or one dated by its file's time (it has no `created`).
            return parsed_note(relpath, raw, note, size, mtime_ns)
        row = made.row
        return made._replace(row=(*row[:2], size, mtime_ns, *row[4:]))

    def _made(self) -> dict[str, ParsedFile]:
        if self._rows is None:
            rows = self._from_worker()
            if rows is None:
                rows = _rows(self._files)
            self._rows = {row.relpath: row for row in rows}
        return self._rows

    def _from_worker(self) -> list[ParsedFile] | None:
        if self._worker is None or self._receive is None:
            return None
        try:
            return self._receive.recv()
        except (EOFError, OSError):  # the worker died: the rows are made here instead
            return None
        finally:
            self._worker.join(timeout=5)  # it ends once it has sent them
            self.close()

    def close(self) -> None:
        """Stop the worker, if it still runs (the write it served failed)."""
        if self._worker is None:
            return
        if self._worker.is_alive():
            self._worker.kill()
        self._worker.join()
        assert self._receive is not None
        self._receive.close()
        self._worker = None

    def __enter__(self) -> RowsAside:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_NO_TIME = iso_from_ns(0)


def _rows(files: Sequence[tuple[str, bytes, notefile.NoteFile]]) -> list[ParsedFile]:
    return [parsed_note(relpath, raw, note, len(raw), 0) for relpath, raw, note in files]


def _send_rows(send: Connection, files: Sequence[tuple[str, bytes, notefile.NoteFile]]) -> None:
    # Ctrl-C reaches every process of the terminal's group: the parent stops this one
    # (and says so, in one line); here it would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    send.send(_rows(files))
    send.close()


def _template(raw: bytes) -> str | None:
    """The body of a template file, or None when the file is no template."""
    try:
        found = notefile.template_split(notefile.decode(raw))
    except notefile.NoteError:
        return None
    return found[1] if found else None


def sealed_memory(relpath: str, fallback_created: str) -> Memory:
    """A secret memory this device has no key for: listed, never shown to an agent (it
    is held out as needing review), and never written over."""
    return Memory(
        id=path_id(relpath),
        path=relpath,
        title=seal.SEALED_TITLE,
        status="needs_review",
        visibility="secret",
        created=fallback_created,
        has_id=False,
        problems=(seal.SEALED_TITLE,),
    )


def _key(part: str | None) -> str | None:
    """A typed fact's subject, predicate or value as the rules compare it."""
    return None if part is None else normalized(part)


def parse_file(root: Path | str, relpath: str, size: int, mtime_ns: int) -> ParsedFile:
    memory, sha = read_memory(root, relpath, size, mtime_ns)
    return parsed_file(memory, relpath, size, mtime_ns, sha)


def parsed_file(memory: Memory, relpath: str, size: int, mtime_ns: int, sha: str) -> ParsedFile:
    m = memory
    row = (
        m.id, relpath, size, mtime_ns, sha, m.title, m.kind, m.status, m.pinned, m.pin_order,
        m.created, m.namespace, m.visibility, m.subject, m.predicate, m.value,
        _key(m.subject), _key(m.predicate), _key(m.value), title_key(m),
        m.is_correction and m.has_id, m.broken, len(m.problems), memory_doc(m), m.body,
    )  # fmt: skip
    needles = ()
    if m.deprecates and m.has_id:
        needles = tuple(n for n in dict.fromkeys(m.deprecates) if matching.check_needle(n) is None)
    return ParsedFile(
        relpath,
        sha,
        m.id,
        m.has_id,
        row,
        (fts_title(m.title, m.aliases), fts_body(m.body)),
        tuple(dict.fromkeys(m.tags)),
        tuple(dict.fromkeys(m.derived_from)),
        needles,
    )


def fts_title(title: str, aliases: Sequence[str]) -> str:
    """The full-text title column: the title and each alias, folded, one to a line, so an
    alias is searched as the title is (Obsidian's other names for a note)."""
    return character_pairs.indexed(matching.fold("\n".join([title, *aliases])))


def fts_body(body: str) -> str:
    """The full-text body column: the body folded, with its runs of Chinese, Japanese
    and Korean written as their pairs of characters (`character_pairs`)."""
    return character_pairs.indexed(matching.fold(body))


def parse_chunk(root: str, stats: Sequence[tuple[str, int, int]]) -> list[ParsedFile]:
    return [parse_file(root, *stat) for stat in stats]


def parse_all(
    root: Path, stats: Sequence[tuple[str, int, int]], workers: int = 2
) -> Iterator[list[ParsedFile]]:
    """Parsed files in chunks, in order; large batches use worker processes."""
    chunks = [stats[i : i + CHUNK] for i in range(0, len(stats), CHUNK)]
    # Workers are forked, which is only safe while this process runs a single thread (a
    # TUI indexes from a worker thread, and then parses here instead). "spawn" would be
    # safe everywhere but re-imports the caller's main module, which breaks scripts; where
    # there is no fork (Windows), files are parsed here.
    if (
        len(stats) < POOL_THRESHOLD
        or workers < 2
        or threading.active_count() > 1
        or "fork" not in get_all_start_methods()
    ):
        for chunk in chunks:
            yield parse_chunk(str(root), chunk)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
        yield from pool.map(parse_chunk, [str(root)] * len(chunks), chunks)
