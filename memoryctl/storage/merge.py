"""Merging two versions of one memory file against their common ancestor.

Frontmatter is merged key by key: a key changed on one side only takes that change, so a
pin on one device and a retirement on the other both hold. The body is merged by git's
own text merge (`git merge-file`). Every key and line that nobody changed keeps its
bytes, because the frontmatter is split by `notefile`'s key splitter and reassembled
from the original text, never dumped again.

When both sides changed the same key or the same lines, the merge is not settled here:
`merge_note` returns the file with the local side winning each conflict, and beside it
the same merge with the other side winning, for the person to choose between.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from memoryctl.storage import notefile
from memoryctl.storage.config import PROPOSALS_DIR, VaultConfig
from memoryctl.storage.scan import is_memory_path

BODY = "(body)"
# Keys that say when something last happened: when both sides moved them, the later one
# is right, and that is not a disagreement a person needs to settle.
LATEST_WINS = ("updated", "checked")
APPROVED = "approved"  # a proposal's state once its change was made


@dataclass(frozen=True)
class Merged:
    """The outcome of a three-way merge of one file.

    `text` is what the file holds afterwards: every change that does not conflict, and
    the local side of every conflict. When something conflicted, `other` is the same
    merge with the other side of each conflict, and `conflicts` names the keys (BODY
    for the text) both sides changed differently.
    """

    text: bytes
    other: bytes | None = None
    conflicts: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.conflicts


def merges_by_key(relpath: str, config: VaultConfig) -> bool:
    """Whether memoryctl merges this file key by key: a memory, or a proposal. Every other
    file (a README, a note in a folder the vault does not treat as memories) is the
    person's, and merges as git merges text, conflict markers and all."""
    if relpath.startswith(f"{PROPOSALS_DIR}/"):
        return relpath.lower().endswith(".md")
    return is_memory_path(relpath, config)


def merge_plain(base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    """Git's text merge of a file that is not a memory; None when lines conflict (or git
    cannot merge it as text)."""
    try:
        merged = _merge_whole(base, ours, theirs)
    except OSError:
        return None
    return merged.text if merged.clean else None


def merge_note(base: bytes | None, ours: bytes, theirs: bytes) -> Merged:
    """Merge two versions of a memory file against their ancestor (None: both added it)."""
    if ours == theirs or theirs == base:
        return Merged(ours)
    if ours == base:
        return Merged(theirs)
    try:
        notes = [notefile.parse_bytes(v) if v is not None else None for v in (base, ours, theirs)]
    except notefile.NoteError:
        return _merge_whole(base, ours, theirs)
    b, o, t = notes
    assert o is not None and t is not None
    if not (o.has_frontmatter and t.has_frontmatter) or o.bom != t.bom:
        return _merge_whole(base, ours, theirs)
    base_segments = _keyed(b.segments) if b is not None and b.has_frontmatter else {}
    front_ours, front_theirs, conflicts = _merge_keys(base_segments, o.segments, t.segments)
    body_ours, body_theirs, body_conflict = merge_text(
        b.body if b is not None else None, o.body, t.body
    )
    if body_conflict:
        conflicts.append(BODY)
    text = _assemble(o, front_ours, body_ours)
    other = _assemble(o, front_theirs, body_theirs) if conflicts else None
    if text is None or (conflicts and other is None):
        return _merge_whole(base, ours, theirs)
    return Merged(text, other, tuple(conflicts))


def approval_holds(merged: Merged, ours: bytes, theirs: bytes) -> tuple[Merged, str] | None:
    """Two devices decided one proposal differently and one of them approved it: the
    approval holds, because what it changed is in the memory's file, which merges in
    with it; a proposal saying "declined" beside a memory it retired would be false.
    Returns the settled file and which side approved ("ours" or "theirs"); None when
    this is not such a disagreement (the other decision stays in git either way)."""
    if "state" not in merged.conflicts or merged.other is None:
        return None
    try:
        states = [notefile.parse_bytes(raw).data.get("state") for raw in (ours, theirs)]
    except notefile.NoteError:
        return None
    if states.count(APPROVED) != 1:
        return None
    if states[0] == APPROVED:
        return Merged(merged.text), "ours"
    return Merged(merged.other), "theirs"


def _keyed(segments: Sequence[tuple[str | None, str]]) -> dict[str | None, str]:
    keyed: dict[str | None, str] = {}
    for key, text in segments:
        keyed[key] = keyed[key] + text if key in keyed else text
    return keyed


def _later(one: str, other: str) -> str:
    """Of two `key: moment` lines, the later moment (compared as written, which for
    memoryctl's ISO moments in UTC is the order of time)."""
    value = lambda line: line.partition(":")[2].strip().strip("\"'")  # noqa: E731
    return one if value(one) >= value(other) else other


def _merge_keys(
    base: dict[str | None, str],
    ours: Sequence[tuple[str | None, str]],
    theirs: Sequence[tuple[str | None, str]],
) -> tuple[list[str], list[str], list[str]]:
    """Both sides' frontmatter merged key by key: (ours winning, theirs winning, conflicts)."""
    mine, other = _keyed(ours), _keyed(theirs)
    order = _order(list(mine), list(other))
    won_ours: list[str] = []
    won_theirs: list[str] = []
    conflicts: list[str] = []
    for key in order:
        b, o, t = base.get(key), mine.get(key), other.get(key)
        if o == t or t == b:
            pick_o = pick_t = o
        elif o == b:
            pick_o = pick_t = t
        elif key in LATEST_WINS and o is not None and t is not None:
            pick_o = pick_t = _later(o, t)
        elif o is not None and t is not None and _without_moments(o) == _without_moments(t):
            # The same record made on both devices (one proposal approved twice, one
            # memory retired by it twice), apart from when: one event, not a conflict.
            pick_o = pick_t = o
        else:
            pick_o, pick_t = o, t
            conflicts.append(str(key))
        for picked, out in ((pick_o, won_ours), (pick_t, won_theirs)):
            if picked is None:
                continue
            if out and not out[-1].endswith(("\n", "\r")):
                out[-1] += "\r\n" if "\r\n" in picked else "\n"
            out.append(picked)
    return won_ours, won_theirs, conflicts


_MOMENT_LINE = re.compile(r"^[ \t]*(?:- )?at:.*$", re.M)


def _without_moments(segment: str) -> str:
    return _MOMENT_LINE.sub("", segment)


def _order(mine: list[str | None], other: list[str | None]) -> list[str | None]:
    """Our keys in our order, with each key only the other side has placed after the
    key it follows there, so a record added beside `status` stays beside it."""
    order = list(mine)
    for position, key in enumerate(other):
        if key in order:
            continue
        before = next((k for k in reversed(other[:position]) if k in order), None)
        order.insert(order.index(before) + 1 if before in order else 0, key)
    return order


def _assemble(layout: notefile.NoteFile, front: list[str], body: str) -> bytes | None:
    note = notefile.NoteFile(
        bom=layout.bom,
        newline=layout.newline,
        has_frontmatter=True,
        open_fence=layout.open_fence,
        frontmatter="".join(front),
        close_fence=layout.close_fence,
        body=body,
    )
    text = note.to_text()
    try:
        notefile.parse_text(text)
    except notefile.NoteError:
        return None
    return text.encode("utf-8")


def _merge_whole(base: bytes | None, ours: bytes, theirs: bytes) -> Merged:
    """A file that cannot be read as a memory is merged as plain text."""
    decode = lambda raw: raw.decode("utf-8", errors="surrogateescape")  # noqa: E731
    text_ours, text_theirs, conflict = merge_text(
        decode(base) if base is not None else None, decode(ours), decode(theirs)
    )
    encode = lambda text: text.encode("utf-8", errors="surrogateescape")  # noqa: E731
    if not conflict:
        return Merged(encode(text_ours))
    return Merged(encode(text_ours), encode(text_theirs), (BODY,))


def merge_text(base: str | None, ours: str, theirs: str) -> tuple[str, str, bool]:
    """Git's three-way text merge: (ours winning, theirs winning, whether lines conflicted)."""
    if ours == theirs or theirs == base:
        return ours, ours, False
    if ours == base:
        return theirs, theirs, False
    with tempfile.TemporaryDirectory(prefix="memoryctl-merge-") as folder:
        paths = []
        # git merge-file takes the current file, then the ancestor, then the other.
        for name, text in (("ours", ours), ("base", base or ""), ("theirs", theirs)):
            path = os.path.join(folder, name)
            with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
                f.write(text)
            paths.append(path)
        code, merged = _merge_file(paths, [])
        if code == 0:
            return merged, merged, False
        return _merge_file(paths, ["--ours"])[1], _merge_file(paths, ["--theirs"])[1], True


def _merge_file(paths: list[str], favor: list[str]) -> tuple[int, str]:
    """Run `git merge-file`; its exit code is the number of conflicts (negative: failed)."""
    result = subprocess.run(["git", "merge-file", "-p", *favor, *paths], capture_output=True)
    if result.returncode < 0 or result.returncode > 127:
        raise OSError(f"git merge-file failed: {result.stderr.decode(errors='replace').strip()}")
    return result.returncode, result.stdout.decode("utf-8", errors="surrogateescape")
