"""Writing corrections: the broad-string guard, the reach report, and detaching."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from memoryctl.actions import NewMemory, add_memory, frontmatter_for, utcnow
from memoryctl.memory import Memory, iso
from memoryctl.storage.vault import Vault, VaultError

SAMPLE = 5


@dataclass(frozen=True)
class NeedleReach:
    needle: str
    count: int
    sample: tuple[Memory, ...]


class GuardTripped(VaultError):
    """A deprecated string would reach more memories than the vault's guard allows."""

    def __init__(self, broad: list[NeedleReach], guard: int) -> None:
        worst = broad[0]
        titles = "; ".join(m.title for m in worst.sample)
        super().__init__(
            f"{worst.needle!r} would reach {worst.count} memories (the guard is {guard}), "
            f"for example: {titles}. Use a more specific string, or --force"
        )
        self.broad = broad
        self.guard = guard


def preview_reach(
    vault: Vault, deprecates: Sequence[str], *, created: str | None = None
) -> list[NeedleReach]:
    """How many memories each string would reach for a correction made at `created`."""
    before = (created, "\uffff") if created else None
    result = []
    for needle in deprecates:
        rows = vault.index.count_matching(needle, before)
        result.append(NeedleReach(needle, len(rows), tuple(vault.index.by_rowids(rows[:SAMPLE]))))
    return result


def check_guard(vault: Vault, deprecates: Sequence[str], created: str | None) -> None:
    guard = vault.config.correction_guard
    broad = [r for r in preview_reach(vault, deprecates, created=created) if r.count > guard]
    if broad:
        raise GuardTripped(sorted(broad, key=lambda r: -r.count), guard)


def correct(
    vault: Vault,
    new: NewMemory,
    *,
    force: bool = False,
    now: dt.datetime | None = None,
    why: str | None = None,
) -> Memory:
    """Store a correction after checking that its strings are specific enough."""
    moment = now or utcnow()
    if new.deprecates and not force:
        # Also validates the whole memory, so a bad date is reported before any counting.
        created = frontmatter_for(vault, new, moment)["created"]
        check_guard(vault, new.deprecates, iso(created))
    return add_memory(vault, new, now=moment, why=why)


def reach_of(vault: Vault, ref: str) -> tuple[Memory, list[tuple[Memory, str]]]:
    correction = vault.resolve(ref)
    if not correction.deprecates:
        raise VaultError(
            f"{correction.id} ({correction.title}) has no deprecates; it reaches nothing"
        )
    reached = [
        (memory, needle)
        for memory, needle in vault.index.reach_of(correction.id)
        if memory.id not in correction.detached
    ]
    return correction, reached


def detach(vault: Vault, correction_ref: str, memory_ref: str, *, undo: bool = False) -> Memory:
    """Stop (or, with undo, restart) a correction from reaching one memory."""
    correction = vault.resolve(correction_ref)
    memory = vault.resolve(memory_ref)
    if not correction.deprecates:
        raise VaultError(f"{correction.id} is not a correction (it has no deprecates)")
    loaded = vault.load(correction)
    detached = list(loaded.memory.detached)
    if undo:
        if memory.id not in detached:
            raise VaultError(f"{memory.id} is not detached from {correction.id}")
        detached.remove(memory.id)
        message = f"Reattach correction {correction.title} to {memory.title}"
    else:
        if memory.id in detached:
            raise VaultError(f"{memory.id} is already detached from {correction.id}")
        reached = {m.id for m, _ in vault.index.reach_of(correction.id)}
        if memory.id not in reached:
            raise VaultError(f"{correction.id} does not reach {memory.id}; nothing to detach")
        detached.append(memory.id)
        message = f"Detach correction {correction.title} from {memory.title}"
    body = f"{message}\n\ncorrection: {correction.id}\nmemory: {memory.id}"
    return vault.write(loaded, {"detached": detached or None}, body)
