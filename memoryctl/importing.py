"""`memoryctl import SOURCE PATH`: a peer's memories into the vault, once.

An import reads the source (never writing to it), compares what it found with the
memories earlier imports made, and then, in one commit:

- makes a memory for each part it has not seen, recording where it came from
  (`source: {kind: import, ref: FILE#part}`) and the source's dates;
- proposes a `replace` for each part whose text changed since it was imported (never a
  second memory beside the first), once for each new text;
- adds nothing for a part whose text is unchanged.

The report names every part made, proposed and skipped, and why.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import secrets
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryctl.actions import slug, title_for
from memoryctl.importers.base import (
    Found,
    ImportSourceError,
    Item,
    Skipped,
    passing_over,
    relative,
    watching,
)
from memoryctl.importers.registry import SOURCES, WHERE
from memoryctl.memory import DEFAULT_NAMESPACE, Memory, new_id
from memoryctl.moments import iso, moment
from memoryctl.proposals import Suggestion
from memoryctl.storage import notefile
from memoryctl.storage.parsing import RowsAside
from memoryctl.storage.vault import Vault, VaultError
from memoryctl.wording import counted

SOURCE_KIND = "import"
_UNCHANGED = "unchanged since imported as"
# (what is being done, how many so far, of how many): "checking" each part, then
# "writing" the memories and proposals.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Made:
    ref: str
    id: str
    title: str
    path: str
    retired: str | None = None  # why it came in retired, when it did


@dataclass(frozen=True)
class Proposed:
    ref: str
    id: str
    title: str
    proposal: str | None = None  # its id, once filed


@dataclass
class ImportReport:
    source: str
    path: str
    namespace: str
    dry_run: bool
    made: list[Made] = field(default_factory=list)
    proposed: list[Proposed] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    commit: str | None = None

    @property
    def summary(self) -> str:
        """One line on what the import made (or would make), proposed and skipped."""
        made = counted(len(self.made), "memory", "memories")
        replacements = counted(len(self.proposed), "replacement")
        skipped = f"{len(self.skipped):,}"
        if self.dry_run:
            return f"Would make {made} from {self.source}, propose {replacements}, skip {skipped}."
        return f"Made {made} from {self.source}, proposed {replacements}, skipped {skipped}."

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "path": self.path,
            "namespace": self.namespace,
            "dry_run": self.dry_run,
            "made": [vars(m) for m in self.made],
            "proposed": [vars(p) for p in self.proposed],
            "skipped": [{"ref": s.ref, "reason": s.reason} for s in self.skipped],
            "commit": self.commit,
        }


def source_label(path: Path) -> str:
    """The FILE part of every ref: the source's path, from the home folder when it is
    inside it, so that refs stay the same from any working folder."""
    real = Path(os.path.realpath(path))
    home = Path(os.path.realpath(Path.home()))
    try:
        return "~/" + real.relative_to(home).as_posix()
    except ValueError:
        return real.as_posix()


def _ref(label: str, single: str | None, part_ref: str) -> str:
    # A source read from a single file (`single` is its name) names its parts from it.
    if single is not None:
        name, sep, part = part_ref.partition("#")
        return f"{label}{sep}{part}" if name == single else f"{label}/{part_ref}"
    return f"{label}/{part_ref}"


def _same(one: str, other: str) -> bool:
    return " ".join(one.split()) == " ".join(other.split())


def imported_memories(vault: Vault) -> dict[str, Memory]:
    """Every memory an import made, by its source ref."""
    found: dict[str, Memory] = {}
    for memory in vault.index.imported():
        if memory.source_kind == SOURCE_KIND and memory.source_ref:
            found.setdefault(memory.source_ref, memory)
    return found


def digest(body: str) -> str:
    """The source text as an import read it, hashed with its whitespace folded."""
    return hashlib.sha256(" ".join(body.split()).encode()).hexdigest()[:16]


def unchanged(memory: Memory, body: str) -> bool:
    """Is this part of the source as the memory was imported from it? A person's edit of
    the memory since is theirs: only a change in the source proposes a replacement."""
    return memory.source_digest == digest(body) or _same(memory.body, body)


def _frontmatter(
    found: Found,
    mid: str,
    ref: str,
    namespace: str,
    pin_order: int | None,
    now: dt.datetime,
    text_digest: str,
) -> dict[str, Any]:
    data: dict[str, Any] = {"id": mid, "title": found.title or title_for(found.body)}
    data["kind"] = found.kind or "fact"
    data["status"] = "retired" if found.retired else "active"
    if pin_order is not None:
        data["pinned"] = True
        data["pin_order"] = pin_order
    data["created"] = moment(found.created or iso(now))
    data["updated"] = moment(found.updated or found.created or iso(now))
    if found.tags:
        data["tags"] = list(dict.fromkeys(found.tags))
    data["namespace"] = namespace
    data["source"] = {"kind": SOURCE_KIND, "ref": ref, "digest": text_digest}
    if found.retired:
        record = {"at": moment(found.retired_at)} if found.retired_at else {}
        data["retired"] = record | {"reason": found.retired}
    for key, value in found.extra.items():
        data.setdefault(key, value)
    return data


def run_import(
    vault: Vault,
    source: str,
    path: Path,
    *,
    namespace: str | None = None,
    dry_run: bool = False,
    now: dt.datetime,
    progress: Progress | None = None,
) -> ImportReport:
    """Import SOURCE from PATH; with `dry_run`, only report what would happen."""
    if source not in SOURCES:
        raise VaultError(f"unknown source {source!r}; one of {', '.join(SOURCES)}")
    if not path.exists():
        raise ImportSourceError(f"{path}: no such file or folder")
    namespace = namespace or DEFAULT_NAMESPACE
    root, earlier = WHERE[source](path) if source in WHERE else (path, ())
    label = source_label(root)
    single = root.name if root.is_file() else None
    # The same source named by another path before: its parts were known by other refs.
    aliases = [(source_label(p), p.name if p.is_file() else None) for p in earlier]
    report = ImportReport(source, label, namespace, dry_run)
    existing = imported_memories(vault)
    remembered = ImportMemo(vault, f"{source} {label}")
    if remembered.still_holds(existing):
        # Not a file the source was read from has changed, and every memory it gave is
        # as it was imported: nothing to read again.
        report.skipped = remembered.skipped(existing)
        return report
    with watching() as looked_at, passing_over() as passed:
        items: list[Item] = list(SOURCES[source](path))
    items += [Skipped(relative(p, root), reason) for p, reason in passed]
    looked_at.add(path)
    pin_order = max((int(m.pin_order or 0) for m in vault.index.pins()), default=0)
    seen: set[str] = set()
    taken_ids = vault.index.ids()
    folder = f"memories/{slug(namespace, 40)}"
    taken_names = _names_in(vault.root / folder)
    new_files: list[tuple[str, bytes, notefile.NoteFile]] = []
    replacements: list[tuple[Suggestion, Proposed]] = []
    parts: dict[str, str] = {}  # every part read, with the digest of its text
    named: dict[str, str] = {}  # a part's ref now, where its memory knows it by another
    moved = moved_items(
        [
            (_ref(label, single, i.ref), _ref(label, single, i.group), i.body)
            for i in items
            if isinstance(i, Found) and i.group
        ],
        existing,
    )
    renamed = _left_behind(label, [_ref(label, single, i.ref) for i in items], existing, moved)
    for done, item in enumerate(items, start=1):
        if progress and (done % 500 == 0 or done == len(items)):
            progress("checking", done, len(items))
        if isinstance(item, Skipped):
            report.skipped.append(Skipped(_ref(label, single, item.ref), item.reason))
            continue
        ref = _ref(label, single, item.ref)
        if ref in seen:
            report.skipped.append(
                Skipped(ref, "the source holds this part twice; the first is used")
            )
            continue
        seen.add(ref)
        if not item.body.strip():
            report.skipped.append(Skipped(ref, "empty"))
            continue
        old = existing.get(ref) or moved.get(ref)
        for other_label, other_single in aliases if old is None else ():
            old = existing.get(_ref(other_label, other_single, item.ref))
            if old is not None:
                break
        text_digest = digest(item.body)
        if old is None and not item.group:  # a file renamed or moved, its text as it was
            old = renamed.pop(text_digest, None)
        known_as = old.source_ref if old is not None and old.source_ref else ref
        parts[known_as] = text_digest
        if known_as != ref:
            named[known_as] = ref
        if old is not None:
            if unchanged(old, item.body):
                report.skipped.append(Skipped(ref, f"{_UNCHANGED} {old.id}"))
                continue
            suggestion = Suggestion(
                "replace",
                (old.id,),
                f"its source changed: {ref}",
                "import",
                ref=source,
                trigger=f"text {text_digest}",
                body=item.body.strip() + "\n",
            )
            replacements.append((suggestion, Proposed(ref, old.id, old.title)))
            continue
        mid = _fresh_id(taken_ids)
        order = None
        if item.pinned:
            pin_order += 1
            order = pin_order
        data = _frontmatter(item, mid, ref, namespace, order, now, text_digest)
        relpath = _free_path(folder, slug(data["title"]), taken_names)
        note = notefile.new_note(data, item.body.strip("\n"))
        new_files.append((relpath, note.to_bytes(), note))
        report.made.append(Made(ref, mid, str(data["title"]), relpath, item.retired))
    if dry_run:
        report.proposed = [p for _, p in replacements]
        return report
    if progress and (new_files or replacements):
        progress("writing", 0, len(new_files) + len(replacements))
    with vault.rows_aside(new_files) as rows:
        _write(vault, report, new_files, replacements, now, rows)
    source_skips = [s for s in report.skipped if not s.reason.startswith(_UNCHANGED)]
    remembered.save(looked_at, parts, source_skips, named)
    return report


def _left_behind(
    label: str, refs: list[str], existing: dict[str, Memory], moved: dict[str, Memory]
) -> dict[str, Memory]:
    """The memories this source gave whose part it no longer has, by the digest of the
    text they were imported from: a part by a new name with that very text is the same
    part, renamed or moved (a topic file renamed), and makes no second memory."""
    now_read = set(refs)
    claimed = {m.id for m in moved.values()}
    found: dict[str, Memory] = {}
    for ref, memory in existing.items():
        inside = ref.startswith((f"{label}/", f"{label}#"))
        if inside and ref not in now_read and memory.id not in claimed and memory.source_digest:
            found.setdefault(memory.source_digest, memory)
    return found


def moved_items(
    found: list[tuple[str, str, str]], existing: dict[str, Memory]
) -> dict[str, Memory]:
    """The memory each new list item (ref, its list, its text) came from, when its ref is
    not one an import made. Of the memories of items its list no longer has: the one with
    its text (the item was known by other words or by its place before), else the first
    left (its first words were edited). An item with neither is new."""
    seen = {ref for ref, _, _ in found}
    groups: dict[str, list[Memory]] = {}  # the memories of items each list no longer has
    for ref, memory in existing.items():
        group, colon, _ = ref.rpartition(":")
        if colon and "#" in group and ref not in seen:
            groups.setdefault(group, []).append(memory)
    fresh = [(ref, group, body) for ref, group, body in found if ref not in existing]
    claimed: set[str] = set()
    moved: dict[str, Memory] = {}
    for ref, group, body in fresh:
        for memory in groups.get(group, []):
            if memory.id not in claimed and unchanged(memory, body):
                moved[ref] = memory
                claimed.add(memory.id)
                break
    for ref, group, _ in fresh:
        if ref in moved:
            continue
        gone = next((m for m in groups.get(group, []) if m.id not in claimed), None)
        if gone is not None:
            moved[ref] = gone
            claimed.add(gone.id)
    return moved


def _write(
    vault: Vault,
    report: ImportReport,
    new_files: list[tuple[str, bytes, notefile.NoteFile]],
    replacements: list[tuple[Suggestion, Proposed]],
    now: dt.datetime,
    rows: RowsAside,
) -> None:
    from memoryctl.decisions import Change

    change = Change.start(vault, now)
    filed = {p.key: p for p in change.propose([s for s, _ in replacements])}
    for suggestion, proposed in replacements:
        proposal = filed.get(suggestion.key)
        if proposal is None:
            report.skipped.append(
                Skipped(
                    proposed.ref,
                    f"a replacement of {proposed.id} with this text was proposed before",
                )
            )
            continue
        report.proposed.append(Proposed(proposed.ref, proposed.id, proposed.title, proposal.id))
    for relpath, data, _ in new_files:
        change.add_file(relpath, data)
    if not new_files and not filed:
        return
    lines = [f"Import {report.source}: {len(report.made)} made, {len(report.proposed)} proposed"]
    lines += ["", f"source: {report.path}"]
    report.commit = change.commit("\n".join(lines))
    if new_files:
        vault.index_written(new_files, rows)


class ImportMemo:
    """What the last import of one source read: the files and folders it looked at (with
    their sizes and times) and the parts it found. Kept beside the index, as a cache:
    without it, or when anything differs, the source is simply read again."""

    def __init__(self, vault: Vault, key: str) -> None:
        self.file = vault.db_path.parent / MEMO_FILE
        self.key = key
        try:
            memos = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            memos = {}
        self.memos: dict[str, Any] = memos if isinstance(memos, dict) else {}
        self.memo = self.memos.get(key) if isinstance(self.memos.get(key), dict) else None

    def still_holds(self, existing: dict[str, Memory]) -> bool:
        memo = self.memo
        if not memo or not memo.get("parts"):
            return False
        for name, seen in memo.get("looked_at", {}).items():
            if _stat(name) != seen:
                return False
        return all(
            ref in existing and _as_imported(existing[ref], part_digest)
            for ref, part_digest in memo["parts"].items()
        )

    def skipped(self, existing: dict[str, Memory]) -> list[Skipped]:
        assert self.memo is not None
        found = [Skipped(ref, reason) for ref, reason in self.memo.get("skipped", [])]
        named = self.memo.get("named", {})
        return found + [
            Skipped(named.get(ref, ref), f"{_UNCHANGED} {existing[ref].id}")
            for ref in self.memo["parts"]
        ]

    def save(
        self,
        looked_at: set[Path],
        parts: dict[str, str],
        skipped: list[Skipped],
        named: dict[str, str],
    ) -> None:
        self.memos[self.key] = {
            "named": named,
            "looked_at": {name: _stat(name) for name in sorted(map(str, looked_at))},
            "parts": parts,
            "skipped": [[s.ref, s.reason] for s in skipped],
        }
        with contextlib.suppress(OSError):  # a cache: failing to keep it costs time only
            self.file.parent.mkdir(parents=True, exist_ok=True)
            self.file.write_text(json.dumps(self.memos), encoding="utf-8")


MEMO_FILE = "imports.json"


def _stat(path: Path | str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size if stat.S_ISREG(st.st_mode) else 0, st.st_mtime_ns]


def _as_imported(memory: Memory, part_digest: str) -> bool:
    return memory.source_digest == part_digest or digest(memory.body) == part_digest


def _fresh_id(taken: set[str]) -> str:
    while True:
        candidate = new_id(secrets.randbits(50))
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def _free_path(folder: str, stem: str, taken: set[str]) -> str:
    """A new file's path in `folder`, by a name no file there nor another new memory
    has (`taken`: the names in use, as `_name_key` gives them)."""
    name = f"{stem}.md"
    number = 2
    while _name_key(name) in taken:
        name = f"{stem}-{number}.md"
        number += 1
    taken.add(_name_key(name))
    return f"{folder}/{name}"


def _names_in(folder: Path) -> set[str]:
    """The names of a folder's entries, listed once rather than asked about one by one."""
    try:
        return {_name_key(name) for name in os.listdir(folder)}
    except OSError:
        return set()


def _name_key(name: str) -> str:
    # Compared as a file system that ignores case and Unicode forms compares them.
    return unicodedata.normalize("NFC", name.casefold())
