"""What an agent may read: its context, recall and the pins, within its profile.

The bundle decides what is in context; this module adds only what an agent's view
needs on top of it. An agent sees nothing outside its profile's namespaces and
visibility, nor anything derived from such a memory, and that holds for the bundle's
report as much as for its text: the person's preview lists every held-out memory by
title, but the copy an agent gets leaves out those it may not see. The rules are the
bundle's own (`visibility_reason`, `lineage_reason`); nothing here restates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memoryctl.bundle import (
    Beneath,
    Bundle,
    Pending,
    _ancestors,
    age_note,
    lineage_reason,
    newer_line,
    now_line,
    render_block,
    visibility_reason,
)
from memoryctl.bundle_formats import as_json, newer_json
from memoryctl.context import contests_of, context_bundle
from memoryctl.corrections import now_lines
from memoryctl.memory import Memory
from memoryctl.storage.config import Profile
from memoryctl.storage.index import Index
from memoryctl.storage.vault import Vault, VaultError

MAX_MESSAGE_BYTES = 64 * 1024
MAX_QUERY_CHARS = 2000
MAX_RECALL = 50
DEFAULT_RECALL = 10
# Recall fetches more than it returns, since some matches may be outside the profile.
_OVERFETCH = 5
OUTSIDE_NOTE = (
    "Memories outside this agent's profile (other namespaces, more private visibility, "
    "or derived from such memories) are never shown."
)


class AgentRefused(VaultError):
    """A request the agent can fix; the message says how."""


@dataclass(frozen=True)
class Caller:
    """Who is asking: an agent's name (for attribution) and the profile it reads through."""

    agent: str
    profile: Profile
    transport: str = "stdio"


@dataclass(frozen=True)
class Shown:
    """One memory as an agent is shown it: the bundle's block and its `now:` lines."""

    memory: Memory
    block: str
    now: tuple[Memory, ...]
    notes: tuple[str, ...]
    newer: tuple[Beneath, ...] = ()

    @property
    def text(self) -> str:
        m = self.memory
        source = m.source_kind or "unknown"
        return (
            f"{self.block}\n    [id {m.id} · {m.kind} · {m.status} · {m.created[:10]} · "
            f"source: {source}]"
        )

    def as_json(self) -> dict[str, Any]:
        """What the agent is told of it beside the text: who and what it is, not its
        wording, which the text holds (docs/MCP.md)."""
        m = self.memory
        return {
            "id": m.id,
            "title": m.title,
            "kind": m.kind,
            "status": m.status,
            "pinned": m.pinned,
            "namespace": m.namespace,
            "tags": list(m.tags),
            "created": m.created,
            "source": {"kind": m.source_kind, "ref": m.source_ref},
            "now": [{"id": c.id} for c in self.now],
            "newer": [newer_json(b, texts=False) for b in self.newer],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Shelf:
    """What a read returned: memories, and notes on what was not shown and why."""

    shown: tuple[Shown, ...]
    notes: tuple[str, ...]
    empty_text: str = "No memories match."

    @property
    def text(self) -> str:
        parts = [s.text for s in self.shown] or [self.empty_text]
        return "\n".join(parts + list(self.notes)) + "\n"

    def as_json(self) -> dict[str, Any]:
        return {
            "count": len(self.shown),
            "memories": [s.as_json() for s in self.shown],
            "notes": list(self.notes),
        }


# --- the profile's fence ---------------------------------------------------------------


def hidden(index: Index, profile: Profile, memories: Iterable[Memory]) -> set[str]:
    """Ids of the memories this profile may not see, by namespace, visibility or lineage."""
    memories = list(memories)
    ancestors = _ancestors(index, memories)
    return {
        m.id
        for m in memories
        if visibility_reason(m, profile) or lineage_reason(m, profile, ancestors)
    }


def visible(index: Index, profile: Profile, memories: Sequence[Memory]) -> list[Memory]:
    fenced = hidden(index, profile, memories)
    return [m for m in memories if m.id not in fenced]


def _shown(
    vault: Vault, profile: Profile, memories: Sequence[Memory], pending: Pending | None = None
) -> list[Shown]:
    """Each memory with its `now:` lines and the newer memories that contest it, as the
    bundle shows them, with nothing the profile may not see."""
    index = vault.index
    heads = now_lines(index, memories)
    contests = contests_of(vault, list(memories), pending)
    beside = [c for cs in heads.values() for c in cs]
    beside += [c.newer for cs in contests.values() for c in cs if c.newer is not None]
    fenced = hidden(index, profile, beside)
    result = []
    for memory in memories:
        now = tuple(c for c in heads[memory.id] if c.id not in fenced)
        beneath = [Beneath("now", now_line(c), c) for c in now]
        beneath += [
            Beneath("newer", newer_line(c), c.newer, c)
            for c in contests.get(memory.id, ())
            if c.newer is None or c.newer.id not in fenced
        ]
        notes = tuple(n for n in (age_note(memory, None, vault.config.anchor_age_days),) if n)
        block = render_block(memory, now, notes, beneath)
        result.append(Shown(memory, block, now, notes, tuple(b for b in beneath if b.contest)))
    return result


# --- reads --------------------------------------------------------------------------------


def context_for(
    vault: Vault, caller: Caller, message: str | None, pending: Pending | None = None
) -> tuple[Bundle, dict[str, Any]]:
    """The bundle for the agent's next turn, and its report with nothing outside the profile.

    The bundle is exactly what `memoryctl preview --profile P --message M` shows.
    `pending`, here and below, tells the pending proposals (see `context_bundle`).
    """
    if message is not None:
        if not isinstance(message, str):
            raise AgentRefused("message must be text")
        size = len(message.encode("utf-8"))
        if size > MAX_MESSAGE_BYTES:
            raise AgentRefused(
                f"message is {size} bytes; the limit is {MAX_MESSAGE_BYTES} bytes. "
                "Send the user's latest message, not the whole conversation"
            )
    bundle = context_bundle(vault, profile=caller.profile.name, message=message, pending=pending)
    report = as_json(bundle, texts=False)
    excluded = vault.index.get_many(x.id for x in bundle.excluded)
    fenced = hidden(vault.index, caller.profile, excluded.values())
    report["excluded"] = [
        x for x in report["excluded"] if x["id"] in excluded and x["id"] not in fenced
    ]
    report["notes"] = [OUTSIDE_NOTE]
    return bundle, report


def recall_for(
    vault: Vault,
    caller: Caller,
    query: str,
    limit: int | None = None,
    namespace: str | None = None,
    pending: Pending | None = None,
) -> Shelf:
    """Current memories matching a query, best first, each with its `now:` lines."""
    if not isinstance(query, str) or not query.strip():
        raise AgentRefused("query must be some text to search for, such as a name or topic")
    if len(query) > MAX_QUERY_CHARS:
        raise AgentRefused(
            f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}. Use a few "
            "keywords; get_context takes the user's whole message"
        )
    limit = DEFAULT_RECALL if limit is None else limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RECALL:
        raise AgentRefused(f"limit must be a whole number from 1 to {MAX_RECALL}")
    profile = caller.profile
    if namespace is not None and not profile.sees_namespace(namespace):
        return Shelf(
            (),
            (
                f"Namespace {namespace!r} is outside the profile {profile.name!r}; "
                "nothing from it is shown.",
            ),
            empty_text="No memories returned.",
        )
    index = vault.index
    rows = index.search_rows(query, limit=min(limit * _OVERFETCH, 500), statuses=("active",))
    found = [m for m in index.by_rowids(rows) if namespace is None or m.namespace == namespace]
    kept = visible(index, profile, found)[:limit]
    shown = _shown(vault, profile, kept, pending)
    return Shelf(tuple(shown), (OUTSIDE_NOTE,))


def pins_for(vault: Vault, caller: Caller, pending: Pending | None = None) -> Shelf:
    """The pinned memories the profile may see, in the person's order."""
    bundle = context_bundle(vault, profile=caller.profile.name, pending=pending)
    shown = [Shown(e.memory, e.block, e.now, e.notes, e.newer) for e in bundle.pinned]
    return Shelf(tuple(shown), (OUTSIDE_NOTE,), empty_text="No pinned memories.")


def visible_memory(vault: Vault, caller: Caller, ref: object, what: str) -> Memory:
    """The memory an agent names by its exact id, if the agent may see it.

    A memory outside the profile gets the same answer as one that does not exist, so
    an agent cannot probe for what it may not see.
    """
    if not isinstance(ref, str) or not ref.strip():
        raise AgentRefused(f"{what} must be a memory id, as returned by recall or get_context")
    ref = ref.strip()
    memory = vault.index.get(ref) if len(ref) <= 64 else None
    if memory is None or memory.broken or hidden(vault.index, caller.profile, [memory]):
        raise AgentRefused(
            f"{what} {ref[:64]!r} names no memory this agent can see; use an id from recall"
        )
    return memory
