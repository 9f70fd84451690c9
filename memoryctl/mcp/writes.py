"""What an agent may write, and how each write is attributed.

An agent can add memories and propose changes; it can never retire, restore, confirm
or edit a memory, pick a file name, or write outside the vault. Everything it writes
is an inference (source kind `inference`, with a source naming the agent) and a git
commit whose message names the agent and the tool. Its corrections pass the
broad-string guard with no way to force it: only the person can.

Limits keep a confused or hostile agent from flooding the vault: a body of at most
64 KB, at most 20 deprecated strings, and a number of writes a minute set by
`[mcp] writes_per_minute` in memoryctl.toml. Every refusal is an `AgentRefused` whose
message tells the agent what to change.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryctl import review_actions
from memoryctl.actions import NewMemory, same_title_as, utcnow
from memoryctl.mcp.agents import commit_trailer, source_ref_for
from memoryctl.mcp.view import AgentRefused, Caller, hidden, visible_memory
from memoryctl.memory import DEFAULT_NAMESPACE, KINDS, Memory
from memoryctl.reach import CommonWordRefused, GuardTripped, correct
from memoryctl.review_actions import AlreadyHeld, AlreadyRetired, IsRetired, ReviewError, SameText
from memoryctl.storage import write_counts
from memoryctl.storage.config import CONFIG_NAME, ConfigError, VaultConfig
from memoryctl.storage.vault import Vault

MAX_BODY_BYTES = 64 * 1024
MAX_DEPRECATES = 20
MAX_DEPRECATE_CHARS = 200
MAX_TITLE_CHARS = 200
MAX_TAGS = 20
MAX_TAG_CHARS = 64
MAX_DERIVED_FROM = 20
MAX_SOURCE_REF_CHARS = 300
MAX_REASON_CHARS = 2000
DEFAULT_WRITES_PER_MINUTE = 30
REACH_SAMPLE = 20


def writes_per_minute(config: VaultConfig) -> int:
    """`[mcp] writes_per_minute` from memoryctl.toml: writes each agent may make a minute."""
    section = config.raw.get("mcp", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{CONFIG_NAME}: [mcp] must be a table")
    value = section.get("writes_per_minute", DEFAULT_WRITES_PER_MINUTE)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"{CONFIG_NAME}: [mcp] writes_per_minute must be a whole number (0 stops agent writes)"
        )
    return value


@dataclass
class WriteGate:
    """One per server: the writes-a-minute limit for each agent, and one write at a time.

    Writes are serialised because each ends in a git commit, and git allows one at a time
    (across processes the vault's write lock does the same). With a `ledger` file the
    limit holds across every process that serves the vault (an HTTP server's workers):
    the recent writes are counted there, in one SQLite transaction per write, so no two
    workers admit the same last write. Without one they are counted in this process.
    """

    per_minute: int
    clock: Callable[[], float] = time.time
    ledger: Path | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    _recent: dict[str, deque[float]] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, agent: str) -> None:
        if self.per_minute == 0:
            raise AgentRefused(
                "this vault accepts no writes from agents ([mcp] writes_per_minute = 0 in "
                "memoryctl.toml); tell the user what you would have stored"
            )
        now = self.clock()
        with self._guard:
            oldest = (
                write_counts.admit(self.ledger, agent, now, self.per_minute)
                if self.ledger
                else self._admit_here(agent, now)
            )
        if oldest is not None:
            wait = max(1, int(60 - (now - oldest)) + 1)
            raise AgentRefused(
                f"too many writes: an agent may make {self.per_minute} writes a minute "
                f"([mcp] writes_per_minute in memoryctl.toml). Try again in {wait} s, and "
                "store fewer, more complete memories"
            )

    def _admit_here(self, agent: str, now: float) -> float | None:
        """None if the write is admitted (and counted), else the oldest write in the minute."""
        recent = self._recent.setdefault(agent, deque())
        while recent and now - recent[0] >= 60:
            recent.popleft()
        if len(recent) >= self.per_minute:
            return recent[0]
        recent.append(now)
        return None


# --- checking what an agent sends ---------------------------------------------------------


def _one_line(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise AgentRefused(f"{what} must be text")
    text = value.strip()
    if not text:
        raise AgentRefused(f"{what} cannot be empty")
    if len(text) > limit:
        raise AgentRefused(f"{what} is {len(text)} characters; the limit is {limit}")
    if any(not c.isprintable() for c in text):
        raise AgentRefused(f"{what} must be one line of printable text")
    return text


def _strings(value: object, what: str, most: int, each: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise AgentRefused(f"{what} must be a list of strings")
    if len(value) > most:
        raise AgentRefused(f"{what} has {len(value)} entries; the limit is {most}")
    return list(dict.fromkeys(_one_line(v, f"each of {what}", each) for v in value))


def check_body(body: object) -> str:
    if not isinstance(body, str):
        raise AgentRefused("body must be text")
    if not body.strip():
        raise AgentRefused("body cannot be empty: write the memory as a sentence that stands alone")
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise AgentRefused(
            f"body is {size} bytes; the limit is {MAX_BODY_BYTES} bytes (64 KB). Store one "
            "fact per memory, or a summary with a link to the document"
        )
    if "\x00" in body:
        raise AgentRefused("body cannot contain NUL characters")
    return body


@dataclass(frozen=True)
class AgentMemory:
    """What an agent asks to remember, before it is checked."""

    body: object
    title: object = None
    kind: object = None
    tags: object = None
    deprecates: object = None
    derived_from: object = None
    source_ref: object = None


@dataclass(frozen=True)
class Remembered:
    memory: Memory
    reached: tuple[tuple[Memory, str], ...]  # only what the agent may see
    reach_count: int
    # The other current memories of its title, kind and namespace the agent may see.
    same_title: tuple[Memory, ...] = ()

    @property
    def text(self) -> str:
        m = self.memory
        lines = [f"Stored {m.kind} {m.id}: {m.title}"]
        if m.deprecates:
            lines.append(
                f"This correction reaches {self.reach_count} older memor"
                f"{'y' if self.reach_count == 1 else 'ies'} you can see"
                + (":" if self.reached else ".")
            )
            lines += [f"  {r.id}  {r.title}  ({needle})" for r, needle in self.reached]
            if self.reach_count > len(self.reached):
                lines.append(f"  … and {self.reach_count - len(self.reached)} more")
        if self.same_title:
            lines.append("Current memories with the same title (all stay current):")
            lines += [f"  {o.id}  {o.title}  ({o.created[:10]})" for o in self.same_title]
            older = self.same_title[-1].id
            lines.append(
                "The context shows each of them with this one beneath it, as newer. If this "
                f"one replaces {older}, call propose with action 'replace' on {older} and "
                "this text (or 'retire'); the user decides."
            )
        return "\n".join(lines) + "\n"

    def as_json(self) -> dict[str, Any]:
        m = self.memory
        data: dict[str, Any] = {
            "id": m.id,
            "title": m.title,
            "kind": m.kind,
            "namespace": m.namespace,
            "visibility": m.visibility,
            "source": {"kind": m.source_kind, "ref": m.source_ref},
            "deprecates": list(m.deprecates),
        }
        data["same_title"] = [
            {"id": o.id, "title": o.title, "created": o.created} for o in self.same_title
        ]
        if m.deprecates:
            data["reach"] = {
                "count": self.reach_count,
                "memories": [
                    {"id": r.id, "title": r.title, "needle": needle} for r, needle in self.reached
                ],
            }
        return data


def home_of(caller: Caller) -> tuple[str, str]:
    """Where an agent's memories go: its profile's first namespace, at its profile's level.

    So the agent can read back what it wrote, and what it learned at a private level is
    never shown to a less private profile.
    """
    names = [n for n in caller.profile.namespaces if n != "*"]
    return (names[0] if names else DEFAULT_NAMESPACE), caller.profile.visibility


def _check_commits(vault: Vault) -> None:
    if not vault.is_git or not vault.config.autocommit:
        why = "is not a git repository" if not vault.is_git else "has [git] autocommit = false"
        raise AgentRefused(
            f"this vault {why}, so a write could not be attributed to you in git; agents may "
            "only write to a vault that commits every change. Tell the user what you would store"
        )


def new_memory_for(vault: Vault, caller: Caller, request: AgentMemory) -> NewMemory:
    """Check an agent's request and turn it into the core's NewMemory (nothing is written)."""
    body = check_body(request.body)
    title = None if request.title is None else _one_line(request.title, "title", MAX_TITLE_CHARS)
    kind = None
    if request.kind is not None:
        kind = _one_line(request.kind, "kind", 40)
        if kind not in KINDS:
            raise AgentRefused(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    tags = _strings(request.tags, "tags", MAX_TAGS, MAX_TAG_CHARS)
    deprecates = _strings(request.deprecates, "deprecates", MAX_DEPRECATES, MAX_DEPRECATE_CHARS)
    derived = _strings(request.derived_from, "derived_from", MAX_DERIVED_FROM, 64)
    derived_ids = [visible_memory(vault, caller, ref, "derived_from").id for ref in derived]
    detail = None
    if request.source_ref is not None:
        detail = _one_line(request.source_ref, "source_ref", MAX_SOURCE_REF_CHARS)
    namespace, visibility = home_of(caller)
    return NewMemory(
        body=body,
        title=title,
        kind=kind,
        tags=tags,
        namespace=namespace,
        visibility=visibility,
        source="inference",
        source_ref=source_ref_for(caller.agent, detail),
        deprecates=deprecates,
        derived_from=derived_ids,
    )


def remember(vault: Vault, caller: Caller, request: AgentMemory, gate: WriteGate) -> Remembered:
    """Store an agent's memory (a correction when it deprecates strings), committed to git."""
    new = new_memory_for(vault, caller, request)
    _check_commits(vault)
    gate.admit(caller.agent)
    with gate.lock:
        try:
            memory = correct(
                vault,
                new,
                force=False,
                why=commit_trailer(caller.agent, "remember"),
                refuse_common=True,
            )
        except CommonWordRefused as common:
            raise AgentRefused(
                f"deprecates {common.needle!r}, a common word, which would put a correction "
                "beneath memories about anything; deprecate the exact outdated name, slug, path "
                "or phrase instead. Agents cannot deprecate a common word at all"
            ) from None
        except GuardTripped as tripped:
            worst = tripped.worst
            share = (
                f", more than {tripped.limits.share:.0%} of the vault"
                if tripped.rule == "share"
                else ""
            )
            raise AgentRefused(
                f"deprecates {worst.needle!r} would reach {worst.count} memories{share}, more "
                f"than this vault allows ({tripped.guard}); use a longer, more specific string, "
                "such as a full repository slug, path or name. Agents cannot override this; the "
                "user can, with `memoryctl correct --force`"
            ) from None
    reached: list[tuple[Memory, str]] = []
    if memory.deprecates:
        pairs = vault.index.reach_of(memory.id)
        fenced = hidden(vault.index, caller.profile, [m for m, _ in pairs])
        reached = [(m, needle) for m, needle in pairs if m.id not in fenced]
    same = same_title_as(vault, memory)
    fenced = hidden(vault.index, caller.profile, same)
    same = tuple(m for m in same if m.id not in fenced)
    return Remembered(memory, tuple(reached[:REACH_SAMPLE]), len(reached), same)


# --- proposals -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proposed:
    proposal: Any  # memoryctl.proposals.Proposal
    target: Memory
    new: bool  # False: the same agent had already proposed this, and that one stands

    @property
    def text(self) -> str:
        p = self.proposal
        if self.new:
            head = f"Proposed {p.id}: {p.action} {self.target.id} ({self.target.title})."
            return f"{head} The user decides it (memoryctl review).\n"
        return (
            f"You already proposed this ({p.id}, {p.state}); it is not filed again. "
            "The user decides it.\n"
        )

    def as_json(self) -> dict[str, Any]:
        p = self.proposal
        return {
            "id": p.id,
            "action": p.action,
            "target": self.target.id,
            "state": p.state,
            "origin": {"kind": p.origin, "ref": p.ref},
            "new": self.new,
        }


def _reason(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AgentRefused("reason cannot be empty: say why, so the user can decide")
    reason = " ".join(value.split())
    if len(reason) > MAX_REASON_CHARS:
        raise AgentRefused(f"reason is {len(reason)} characters; the limit is {MAX_REASON_CHARS}")
    return reason


def _refusal(error: ReviewError, memory: Memory) -> AgentRefused:
    """A refusal of the review core, worded for an agent: what it may do instead."""
    if isinstance(error, AlreadyRetired | IsRetired):
        return AgentRefused(f"{memory.id} is already retired; only the user can restore it")
    if isinstance(error, SameText):
        return AgentRefused(f"body is the same as the current text of {memory.id}")
    if isinstance(error, AlreadyHeld):
        return AgentRefused(f"{memory.id} is already held for review; the user decides it")
    return AgentRefused(str(error))


def propose(
    vault: Vault,
    caller: Caller,
    action: object,
    target: object,
    reason: object,
    body: object,
    gate: WriteGate,
    *,
    now: dt.datetime | None = None,
) -> Proposed:
    """File an agent's proposal through the review queue's own `propose`; only the
    person decides it. Its guards are the queue's; their refusals are worded here for
    an agent, and checked before the write counts against the agent's limit."""
    from memoryctl import review

    named = review_actions.by_word(action) if isinstance(action, str) else None
    if named is not None and not named.proposable:
        raise AgentRefused(
            f"an agent cannot propose {action!r}: only the user restores or confirms a memory"
        )
    if named is None or action != named.word or action not in review_actions.PROPOSAL_WORDS:
        raise AgentRefused(f"action must be one of {', '.join(review_actions.PROPOSAL_WORDS)}")
    memory = visible_memory(vault, caller, target, "target")
    why = _reason(reason)
    text: str | None = None
    if named is review_actions.REPLACE:
        if body is None:
            raise AgentRefused("a replace proposal needs the new text in body")
        text = check_body(body)
    elif body is not None:
        raise AgentRefused(f"body is only for action 'replace', not {action!r}")
    asked = {"reason": why, "body": text, "origin": "agent", "origin_ref": caller.agent}
    try:
        review.suggestion_for(vault, named.name, memory.id, **asked)
    except ReviewError as error:
        raise _refusal(error, memory) from None
    _check_commits(vault)
    gate.admit(caller.agent)
    with gate.lock:
        try:
            proposal, created = review.propose(
                vault,
                named.name,
                memory.id,
                now=now or utcnow(),
                trailer=commit_trailer(caller.agent, "propose"),
                **asked,
            )
        except ReviewError as error:
            raise _refusal(error, memory) from None
    return Proposed(proposal, memory, new=created)
