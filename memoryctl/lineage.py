"""Lineage: the `derived_from` links between memories, walked downwards.

When a memory is retired or replaced, everything built from it (a summary, a plan, a
draft) may carry the old claim. Every memory whose `derived_from` includes it, directly
or through other memories, is proposed for review; nothing unrelated is touched. The
walks here take the links as a function or a mapping, so they need no index, and they
end on hand-edited cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from memoryctl.memory import Memory
from memoryctl.proposals import Suggestion

# children(ids) -> {id: [ids of the memories derived from it]}, for one generation.
Children = Callable[[Iterable[str]], Mapping[str, Sequence[str]]]


@dataclass(frozen=True)
class Descent:
    id: str
    parent: str  # the memory it was derived from on the way down
    depth: int  # 1 for a memory derived directly from a root


def descendants(roots: Iterable[str], children: Children) -> list[Descent]:
    """Every memory derived from the roots, directly or transitively, nearest first.

    One call of `children` per generation. A memory is listed once, at its shortest
    distance; roots are never listed, so a cycle back to a root ends the walk.
    """
    seen = set(roots)
    found: list[Descent] = []
    frontier = sorted(seen)
    depth = 0
    while frontier:
        depth += 1
        kids = children(frontier)
        next_frontier: list[str] = []
        for parent in frontier:
            for child in sorted(kids.get(parent, ())):
                if child not in seen:
                    seen.add(child)
                    found.append(Descent(child, parent, depth))
                    next_frontier.append(child)
        frontier = next_frontier
    return found


def children_from(edges: Mapping[str, Sequence[str]]) -> Children:
    """`children` over a mapping of id -> derived_from (as in the files)."""
    below: dict[str, list[str]] = {}
    for child, sources in edges.items():
        for source in sources:
            below.setdefault(source, []).append(child)
    return lambda ids: {i: below[i] for i in ids if i in below}


def cycles(edges: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Each cycle of `derived_from` links, as a path that starts and ends at one id.

    One cycle is reported per strongly connected group of memories (Tarjan), starting
    at the group's smallest id, so the output is stable.
    """
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    nodes = sorted(set(edges) | {s for sources in edges.values() for s in sources})
    for start in nodes:
        if start in index_of:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index_of[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index_of:
                    index_of[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index_of[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index_of[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in edges.get(node, ()):
                    groups.append(sorted(group))
    return [_cycle_path(group, edges) for group in sorted(groups)]


def _cycle_path(group: list[str], edges: Mapping[str, Sequence[str]]) -> list[str]:
    """A shortest path from the group's first id back to itself, inside the group."""
    members = set(group)
    start = group[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        next_frontier = []
        for node in frontier:
            for succ in sorted(edges.get(node, ())):
                if succ not in members:
                    continue
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if succ not in previous:
                    previous[succ] = node
                    next_frontier.append(succ)
        frontier = next_frontier
    return [*group, group[0]]


def lineage_suggestions(
    ancestor: Memory,
    found: Sequence[Descent],
    memories: Mapping[str, Memory],
    *,
    event: str,
    trigger: str,
) -> list[Suggestion]:
    """A needs_review proposal for each descendant that is not retired.

    `event` says what happened to the ancestor, in words ("was retired: the plan
    expired"); `trigger` names that decision, so the cascade is made once per decision.
    """
    suggestions = []
    for descent in found:
        memory = memories.get(descent.id)
        if memory is None or memory.status == "retired" or memory.broken:
            continue
        suggestions.append(
            Suggestion(
                action="needs_review",
                targets=(descent.id,),
                reason=_path_reason(descent, ancestor, event),
                origin="lineage",
                ref=ancestor.id,
                trigger=trigger,
            )
        )
    return suggestions


def _path_reason(descent: Descent, ancestor: Memory, event: str) -> str:
    what = f"{ancestor.id} ({ancestor.title}), which {event}"
    if descent.depth == 1:
        return f"derived from {what}"
    if descent.depth == 2:
        return f"derived from {descent.parent}, which is derived from {what}"
    between = descent.depth - 2
    others = f"{between} other memor{'y' if between == 1 else 'ies'}"
    return f"derived from {descent.parent}, which descends through {others} from {what}"
