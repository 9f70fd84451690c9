"""Writing corrections: the broad-string guard, the reach report, and detaching."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass

from memoryctl.actions import NewMemory, add_memory, frontmatter_for, utcnow
from memoryctl.common_words import is_common_word
from memoryctl.memory import Memory
from memoryctl.moments import iso
from memoryctl.storage.vault import Vault, VaultError

SAMPLE = 5


@dataclass(frozen=True)
class NeedleReach:
    needle: str
    count: int
    sample: tuple[Memory, ...]


@dataclass(frozen=True)
class Guard:
    """How many memories one deprecated string may reach without a question.

    A string may reach at most `cap` memories, and at most `share` of the vault once
    that share is more than `floor` memories (so a small vault's real corrections, which
    name a larger part of it, pass). `[corrections]` in memoryctl.toml sets all three.
    """

    cap: int
    share: float
    floor: int
    size: int  # memories in the vault

    @property
    def limit(self) -> int:
        return min(self.cap, max(self.floor, math.floor(self.share * self.size)))

    def rule(self, count: int) -> str | None:
        """`cap` or `share` when `count` is over the guard, else None."""
        if count > self.cap:
            return "cap"
        if count > self.limit:
            return "share"
        return None


class GuardTripped(VaultError):
    """A deprecated string would reach more memories than the vault's guard allows.

    `broad` lists the strings over it, the broadest first; `limits` is the vault's
    guard, `guard` the count it allowed the broadest string, and `rule` which part of
    it tripped (`cap` or `share`). The face says what overrides it, if anything does."""

    def __init__(self, broad: list[NeedleReach], guard: Guard) -> None:
        worst = broad[0]
        titles = "; ".join(m.title for m in worst.sample)
        super().__init__(
            f"{worst.needle!r} would reach {worst.count} memories "
            f"({_guard_words(guard, worst.count)}), for example: {titles}. "
            "Use a more specific string"
        )
        self.broad = broad
        self.limits = guard
        self.rule = guard.rule(worst.count) or "cap"
        self.guard = guard.cap if self.rule == "cap" else guard.limit

    @property
    def worst(self) -> NeedleReach:
        return self.broad[0]


def _guard_words(guard: Guard, count: int) -> str:
    if guard.rule(count) == "cap":
        return f"the guard is {guard.cap}"
    return f"more than {guard.share:.0%} of the vault's {guard.size}; the guard is {guard.limit}"


class CommonWordRefused(VaultError):
    """A deprecated string is one common word, which names no particular thing."""

    def __init__(self, needle: str) -> None:
        super().__init__(
            f"{needle!r} is a common word: a correction that deprecates it would reach "
            "memories about anything. Use the exact outdated name, slug, path or phrase"
        )
        self.needle = needle


def guard_of(vault: Vault) -> Guard:
    config = vault.config
    return Guard(
        config.correction_guard,
        config.correction_guard_share,
        config.correction_guard_floor,
        vault.index.count(),
    )


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


def refuse_common_words(deprecates: Sequence[str]) -> None:
    for needle in deprecates:
        if is_common_word(needle):
            raise CommonWordRefused(needle)


def check_guard(vault: Vault, deprecates: Sequence[str], created: str | None) -> None:
    """Raise GuardTripped when a string would reach too much of the vault."""
    guard = guard_of(vault)
    reaches = preview_reach(vault, deprecates, created=created)
    broad = [r for r in reaches if guard.rule(r.count)]
    if broad:
        raise GuardTripped(sorted(broad, key=lambda r: -r.count), guard)


def correct(
    vault: Vault,
    new: NewMemory,
    *,
    force: bool = False,
    now: dt.datetime | None = None,
    why: str | None = None,
    refuse_common: bool = False,
) -> Memory:
    """Store a correction after checking that its strings are specific enough.

    `force` skips the guard; `refuse_common` (for agents) refuses a common word first.
    """
    moment = now or utcnow()
    if new.deprecates and (refuse_common or not force):
        # Also validates the whole memory, so a bad date is reported before any counting.
        created = frontmatter_for(vault, new, moment)["created"]
        if refuse_common:
            refuse_common_words(new.deprecates)
        if not force:
            check_guard(vault, new.deprecates, iso(created))
    return add_memory(vault, new, now=moment, why=why)


def inactive_reason(correction: Memory) -> str | None:
    """Why a correction reaches nothing now: it is retired or held for review.

    Such a correction shows on no `now:` line (a chain runs through it to a newer one),
    so every face reports its reach as none, and says why.
    """
    if correction.status == "retired":
        return "retired"
    if correction.status != "active":
        return "needs review"
    return None


@dataclass(frozen=True)
class Reach:
    """What a correction reaches now. An inactive one reaches nothing; `dormant` is
    what its strings name, which it would reach again if it were restored."""

    correction: Memory
    reached: tuple[tuple[Memory, str], ...]
    inactive: str | None = None
    dormant: int = 0


def reach_report(vault: Vault, ref: str) -> Reach:
    correction = vault.resolve(ref)
    if not correction.deprecates:
        raise VaultError(
            f"{correction.id} ({correction.title}) has no deprecates; it reaches nothing"
        )
    named = tuple(
        (memory, needle)
        for memory, needle in vault.index.reach_of(correction.id)
        if memory.id not in correction.detached
    )
    inactive = inactive_reason(correction)
    if inactive:
        return Reach(correction, (), inactive, len(named))
    return Reach(correction, named)


def reach_of(vault: Vault, ref: str) -> tuple[Memory, list[tuple[Memory, str]]]:
    """A correction and what it reaches now (nothing when it is inactive)."""
    report = reach_report(vault, ref)
    return report.correction, list(report.reached)


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
