"""Two current memories of one title: the strong sign that they are about one thing.

Two `active` memories of the same kind, in the same namespace, whose titles are equal
once folded (`folded_title`) and whose texts differ: the newer one is shown beneath
the older in the bundle, and a check proposes retiring the older, for the person to
approve or decline. Nothing is retired here. These are pure functions; the index keeps
each current memory's folded title in a column of its own (`title_key`), so the
memories that share one are found without a scan.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from memoryctl.memory import Memory, folded_title, normalized
from memoryctl.proposals import Suggestion

ORIGIN = "rule"
IMPORTED = "import"  # the source kind of what `memoryctl import` writes


def says_the_same(one: Memory, other: Memory) -> bool:
    return normalized(one.text) == normalized(other.text)


def imported_from_other_files(one: Memory, other: Memory) -> bool:
    """Two sections imported from two files share a heading, not a subject: "Testing" in
    one repository's AGENTS.md and in another's are two things."""
    if one.source_kind != IMPORTED or other.source_kind != IMPORTED:
        return False
    return (one.source_ref or "").partition("#")[0] != (other.source_ref or "").partition("#")[0]


def newest_by_title(memories: Iterable[Memory]) -> dict[tuple[str, str, str], Memory]:
    """The newest current memory of each title (with its kind and namespace)."""
    newest: dict[tuple[str, str, str], Memory] = {}
    for memory in memories:
        key = memory.title_group
        if key is None:
            continue
        held = newest.get(key)
        if held is None or memory.order_key > held.order_key:
            newest[key] = memory
    return newest


def newer_of_title(
    memory: Memory, newest: dict[tuple[str, str, str], Memory], *, texts: bool = True
) -> Memory | None:
    """The newest memory of this one's title, when it is newer and says something else
    (without `texts`, whatever it says: for memories read without their bodies)."""
    key = memory.title_group
    newer = newest.get(key) if key is not None else None
    if newer is None or newer.order_key <= memory.order_key:
        return None
    if (texts and says_the_same(newer, memory)) or imported_from_other_files(newer, memory):
        return None
    return newer


def title_suggestions(
    memories: Iterable[Memory], involving: Collection[str] | None = None, *, texts: bool = True
) -> list[Suggestion]:
    """The retirements that shared titles propose among these memories: the newest
    current memory of a title proposes retiring each older one whose text differs.

    With `involving`, only those whose older or newer memory has one of these ids. Without
    `texts`, whatever the texts say: what may have been proposed, for memories read
    without their bodies."""
    memories = list(memories)
    newest = newest_by_title(memories)
    found = []
    for older in memories:
        newer = newer_of_title(older, newest, texts=texts)
        if newer is None:
            continue
        if involving is not None and older.id not in involving and newer.id not in involving:
            continue
        if older.id in newer.retires:
            continue  # its `retires` proposes that already
        found.append(title_suggestion(older, newer))
    return sorted(found, key=lambda suggestion: suggestion.targets)


def title_suggestion(older: Memory, newer: Memory) -> Suggestion:
    return Suggestion(
        action="retire",
        targets=(older.id,),
        reason=(
            f"the newer {newer.id} ({newer.created[:10]}) has the same title, "
            f"{' '.join(newer.title.split())!r}, and says something else"
        ),
        origin=ORIGIN,
        ref=newer.id,
        trigger=f"same title {folded_title(newer.title)}",
    )
