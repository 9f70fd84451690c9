"""How counts read, on every face: "1 memory", "2 memories", "10,000 memories", and how
many of a long list a face shows before saying how many more there are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def counted(count: int, one: str, many: str | None = None) -> str:
    """`count` and the noun that goes with it; `many` defaults to `one` + "s"."""
    noun = one if count == 1 else (many or f"{one}s")
    return f"{count:,} {noun}"


def first_few(items: Sequence[T], most: int) -> tuple[list[T], int]:
    """The first `most` items and how many more there are; all of them when showing
    them all takes no more lines than "and 1 more" would."""
    if len(items) <= most + 1:
        return list(items), 0
    return list(items[:most]), len(items) - most
