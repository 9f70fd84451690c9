"""Which corrections a memory shows on its `now:` lines.

A correction reaches every older memory that names one of its deprecated strings (the
index keeps those pairs). When a correction is itself reached by a newer correction,
the memory shows the newest one, the head of the chain. Chains are walked with a bound
and a visited set, so hand-edited files that contradict each other can never loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from memoryctl.memory import Memory

MAX_CHAIN = 32


def heads(
    memory_id: str,
    reached_by: Mapping[str, Sequence[str]],
    order: Callable[[str], object],
    max_chain: int = MAX_CHAIN,
    inactive: frozenset[str] = frozenset(),
) -> list[str]:
    """The newest corrections at the ends of the chains that start at this memory.

    `reached_by[x]` lists the corrections that reach x. Each head appears once, and
    heads come oldest first (by `order`). An inactive (retired, or held for review)
    correction is never shown itself, but a chain still runs through it: when it has
    newer corrections, their heads stand in for it; when it has none, the chain ends
    at the correction before it.
    """
    found: dict[str, None] = {}
    # The heads each correction leads to, worked out once: when every correction of a
    # string names it, each newer one reaches all older ones, and walking every path
    # instead of every correction takes 2**n steps. Newest first, so the depth bound
    # only cuts chains that really are that long.
    done: dict[str, tuple[str, ...]] = {}

    def walk(correction: str, path: frozenset[str], depth: int) -> tuple[str, ...]:
        if correction in done:
            return done[correction]
        newer = [c for c in reached_by.get(correction, ()) if c not in path]
        result: tuple[str, ...] = ()
        if newer and depth < max_chain:
            newer.sort(key=order, reverse=True)
            result = tuple(dict.fromkeys(h for s in newer for h in walk(s, path | {s}, depth + 1)))
        if not result and correction not in inactive:
            result = (correction,)
        done[correction] = result
        return result

    for correction in sorted(reached_by.get(memory_id, ()), key=order, reverse=True):
        if correction != memory_id:
            found.update(dict.fromkeys(walk(correction, frozenset({memory_id, correction}), 1)))
    return sorted(found, key=order)


class ReachSource(Protocol):
    """What `now_lines` needs from an index (kept small so tests can pass a dict)."""

    def corrections_reaching(self, mids: Iterable[str]) -> dict[str, list[str]]: ...

    def get_many(self, mids: Iterable[str]) -> dict[str, Memory]: ...


def reaching_graph(
    source: ReachSource, memory_ids: Iterable[str]
) -> tuple[dict[str, list[str]], dict[str, Memory]]:
    """Load the part of the reach graph that chains from these memories can walk.

    A pair the person detached is gone. Corrections of every status are loaded, so a
    chain can run through one that is retired (see `heads`).
    """
    edges: dict[str, list[str]] = {}
    corrections: dict[str, Memory] = {}
    frontier = set(memory_ids)
    seen: set[str] = set()
    for _ in range(MAX_CHAIN + 1):
        todo = frontier - seen
        if not todo:
            break
        seen |= todo
        found = source.corrections_reaching(todo)
        new = {c for cs in found.values() for c in cs} - corrections.keys()
        corrections.update(source.get_many(new))
        for target, candidates in found.items():
            edges[target] = [
                c for c in candidates if c in corrections and target not in corrections[c].detached
            ]
        frontier = new
    return edges, corrections


def now_lines(source: ReachSource, memories: Sequence[Memory]) -> dict[str, list[Memory]]:
    """For each memory, the corrections shown beneath it, oldest first."""
    edges, corrections = reaching_graph(source, [m.id for m in memories])

    def order(mid: str) -> tuple[str, str]:
        return corrections[mid].order_key

    inactive = frozenset(mid for mid, c in corrections.items() if c.status != "active")
    return {
        m.id: [corrections[h] for h in heads(m.id, edges, order, inactive=inactive)]
        for m in memories
    }


def overtaken(source: ReachSource, memories: Sequence[Memory]) -> set[str]:
    """The ids of these memories that show at least one `now:` line."""
    return {mid for mid, shown in now_lines(source, memories).items() if shown}


def render_with_now(memory: Memory, now: Sequence[Memory]) -> str:
    """A memory's text as its file holds it, every line kept (else its description or
    title), and beneath it a `now:` line per correction, as the agent is told them."""
    text = memory.body.replace("\r\n", "\n").strip("\n").rstrip() or memory.text
    return "\n".join([text, *(f"    now: {correction.text}" for correction in now)])
