"""How counts read, on every face: "1 memory", "2 memories", "10,000 memories"."""

from __future__ import annotations


def counted(count: int, one: str, many: str | None = None) -> str:
    """`count` and the noun that goes with it; `many` defaults to `one` + "s"."""
    noun = one if count == 1 else (many or f"{one}s")
    return f"{count:,} {noun}"
