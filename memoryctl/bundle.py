"""The context bundle: exactly what an agent sees on its next turn, and why.

One function builds it, and every face (the TUI's preview, `memoryctl preview`,
`memoryctl export`, the MCP server) renders the same result, so what a person previews
is byte for byte what the agent receives. Nothing here reads the clock: the age of a
code-anchored memory is judged against `now` only when a caller passes one.

Order: the pins, in the person's order and all of them whatever the budget; then the
memories recalled for the message, best first, until the budget is spent. Beneath
each, the `now:` lines of the corrections that reach it and a `newer` line for each
newer memory (or pending proposal) that contests it. Then the conflicts between typed
facts. Everything that matched but was held back is listed with its reason. No text is
carried twice: a line naming a memory already shown above points at it by its head.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memoryctl.contested import ASKS, Contest, contested
from memoryctl.corrections import now_lines
from memoryctl.memory import TEMPLATE_KIND, Memory
from memoryctl.moments import parse_moment
from memoryctl.proposals import Proposal
from memoryctl.rules import Predicate
from memoryctl.storage.config import Profile, VaultConfig
from memoryctl.storage.index import Index
from memoryctl.tokens import Counter, counter

HEADER = "# Memory"
SECTION_TITLES = {"pinned": "Pinned", "recalled": "Relevant memories", "conflicts": "Conflicts"}
# A line that names a memory already shown above gives only this many of its words.
HEAD_WORDS = 12
WHY_WORDS = {
    "retires": "retires this",
    "replaces": "replaces this",
    "excludes": "excludes this",
    "proposed": "proposed to retire this",
    "same_title": "also titled {about}",
    "same_subject": "also says what {about} {verb}",
}


@dataclass(frozen=True)
class Beneath:
    """One line beneath an entry that names another memory (or a pending proposal).

    `kind` is `now` (a correction) or `newer` (a contest). `above` says where the named
    memory is already shown in full (`pinned` or `recalled`), when the line points at it
    instead of repeating it.
    """

    kind: str
    line: str
    memory: Memory | None = None
    contest: Contest | None = None
    above: str | None = None


@dataclass(frozen=True)
class Entry:
    memory: Memory
    block: str
    tokens: int
    now: tuple[Memory, ...] = ()
    notes: tuple[str, ...] = ()
    beneath: tuple[Beneath, ...] = ()

    @property
    def newer(self) -> tuple[Beneath, ...]:
        return tuple(b for b in self.beneath if b.kind == "newer")


@dataclass(frozen=True)
class Conflict:
    subject: str
    value: str
    older: Memory
    newer: Memory

    @property
    def line(self) -> str:
        def fact(m: Memory) -> str:
            return _one_line(f"{m.subject} {m.predicate} {m.value} ({m.created[:10]}, {m.id})")

        return (
            f"- {fact(self.older)} and {fact(self.newer)} are both recorded; "
            "the newer one usually holds."
        )


@dataclass(frozen=True)
class Excluded:
    id: str
    title: str
    reason: str


@dataclass(frozen=True)
class Bundle:
    profile: Profile
    message: str | None
    budget: int
    method: str
    pinned: tuple[Entry, ...]
    recalled: tuple[Entry, ...]
    conflicts: tuple[Conflict, ...]
    excluded: tuple[Excluded, ...]
    text: str
    sections: dict[str, int] = field(default_factory=dict)
    used: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def pins_over_budget(self) -> bool:
        """Only the pins can take the text over the budget: recalled memories never do."""
        return self.used > self.budget


# The proposals waiting for the person, or what finds those about given memory ids.
Pending = Sequence[Proposal] | Callable[[Iterable[str]], Sequence[Proposal]]


# --- what a profile may see ---------------------------------------------------------------


def visibility_reason(memory: Memory, profile: Profile) -> str | None:
    if not profile.sees_namespace(memory.namespace):
        return f"outside the profile: namespace {memory.namespace!r}"
    if not profile.sees_visibility(memory.visibility):
        return f"outside the profile: visibility {memory.visibility!r}"
    return None


# Each id a memory was derived from, with every file that has it (usually one).
Ancestors = Mapping[str, Sequence[Memory]]


def lineage_reason(memory: Memory, profile: Profile, ancestors: Ancestors) -> str | None:
    """A memory derived from one the profile may not see is held out with it.

    Where files share a source's id, the source is ambiguous: the memory is held out
    unless the profile may see every one of them (it fails closed).
    """
    # Every source is checked, however many there are: a summary of a hundred notes must
    # not slip through because its secret source came last. `seen` stops cycles.
    seen: set[str] = set()
    todo = list(memory.derived_from)
    while todo:
        mid = todo.pop()
        if mid in seen:
            continue
        seen.add(mid)
        sources = ancestors.get(mid, ())
        if any(visibility_reason(source, profile) for source in sources):
            if len(sources) > 1:
                return (
                    f"outside the profile: its source id is ambiguous ({mid} is used by "
                    f"{len(sources)} files, not all of which the profile may see)"
                )
            return f"outside the profile: derived from {mid}, which the profile may not see"
        for source in sources:
            todo.extend(source.derived_from)
    return None


def status_reason(memory: Memory) -> str | None:
    if memory.broken:
        return f"unreadable: {memory.broken}"
    if memory.kind == TEMPLATE_KIND:
        return "a template, not a memory"
    if memory.status == "retired":
        return "retired"
    if memory.status == "needs_review":
        return "needs review"
    return None


def _ancestors(index: Index, memories: Sequence[Memory]) -> dict[str, list[Memory]]:
    """Every memory these were derived from, however far back: one query per generation.
    Each id maps to every file that has it, so twins are all checked.

    An id that names no memory (its file was deleted) is asked for once, not again in
    every generation; a cycle of hand-edited `derived_from` lists ends the walk.
    """
    found: dict[str, list[Memory]] = {}
    missing: set[str] = set()
    todo = {mid for m in memories for mid in m.derived_from}
    while todo:
        batch = index.with_ids(todo)
        found.update(batch)
        missing |= todo - batch.keys()
        todo = (
            {mid for twins in batch.values() for m in twins for mid in m.derived_from}
            - found.keys()
            - missing
        )
    return found


# --- notes beneath a memory ----------------------------------------------------------------


def age_note(memory: Memory, now: dt.datetime | None, days: int) -> str | None:
    """A code-anchored memory should be checked against the code before it is trusted.

    Without `now` the age cannot be known, so every anchored memory carries the note.
    """
    if not memory.anchors:
        return None
    checked = memory.checked or memory.updated or memory.created
    if now is not None:
        if now.tzinfo is None:  # a moment without a zone is UTC, as everywhere in memoryctl
            now = now.replace(tzinfo=dt.UTC)
        moment = dt.datetime.fromisoformat(parse_moment(checked).replace("Z", "+00:00"))
        if now - moment <= dt.timedelta(days=days):
            return None
    where = ", ".join(a.path + (f"#{a.symbol}" if a.symbol else "") for a in memory.anchors)
    return (
        f"verify: describes {where}; check the current code before relying on it "
        f"(last checked {checked[:10]})"
    )


def provenance_suffix(memory: Memory) -> str:
    """What an agent inferred is marked, so nobody mistakes it for what the user said."""
    if memory.source_kind != "inference":
        return ""
    source = f"; source: {_one_line(memory.source_ref)}" if memory.source_ref else ""
    return f" (agent inference{source})"


def _one_line(text: str) -> str:
    """Text on one line, so that a hand-written title or ref with line breaks cannot
    start a line of its own (a heading, or a marker that would break an AGENTS.md block)."""
    return " ".join(text.split())


def head(text: str, words: int = HEAD_WORDS) -> str:
    """The first words of a text, marked as cut when they are not all of it."""
    parts = text.split()
    return " ".join(parts) if len(parts) <= words else " ".join(parts[:words]) + " …"


def _named(memory: Memory, above: str | None) -> str:
    """A memory named on a line beneath another: in full, or by its head when it is
    already shown in full above."""
    if above is None:
        return f"{_one_line(memory.text)}{provenance_suffix(memory)}"
    return f"({above}) {head(memory.text)}"


def now_line(correction: Memory, above: str | None = None) -> str:
    return f"now: {_named(correction, above)}"


def newer_line(contest: Contest, above: str | None = None) -> str:
    """`newer (DATE, WHY): TEXT`, or for a pending proposal that names no newer memory,
    `pending (DATE): a proposal to ACTION awaits the person's decision`."""
    if contest.newer is None:
        ask = ASKS.get(contest.action or "", "change this")
        return f"pending ({contest.date}): a proposal to {ask} awaits the person's decision"
    why = WHY_WORDS[contest.why].format(about=f'"{contest.about}"', verb=contest.verb)
    if contest.why == "proposed" and contest.action:
        why = f"proposed to {ASKS.get(contest.action, 'change this')}"
    return f"newer ({contest.date}, {why}): {_named(contest.newer, above)}"


def render_block(
    memory: Memory,
    now: Sequence[Memory],
    notes: Sequence[str],
    beneath: Sequence[Beneath] | None = None,
) -> str:
    lines = [f"- {_one_line(memory.text)}{provenance_suffix(memory)}"]
    if beneath is None:
        beneath = [Beneath("now", now_line(c), c) for c in now]
    lines += [f"    {b.line}" for b in beneath]
    lines += [f"    {_one_line(n)}" for n in notes]
    return "\n".join(lines)


# --- conflicts -----------------------------------------------------------------------------


def _norm(value: str | None) -> str:
    return " ".join((value or "").casefold().split())


def conflicts_for(
    entries: Sequence[Memory],
    candidates: Sequence[Memory],
    excludes: Mapping[str, frozenset[str]],
) -> list[Conflict]:
    """Typed facts whose subject and value are held under predicates that exclude each other."""
    found: dict[tuple[str, str], Conflict] = {}
    for memory in entries:
        if not (memory.subject and memory.predicate and memory.value):
            continue
        for other in candidates:
            if other.id == memory.id or not (other.predicate and other.value):
                continue
            if _norm(other.subject) != _norm(memory.subject):
                continue
            if _norm(other.value) != _norm(memory.value):
                continue
            mine, theirs = _norm(memory.predicate), _norm(other.predicate)
            if theirs not in excludes.get(mine, frozenset()) and (
                mine not in excludes.get(theirs, frozenset())
            ):
                continue
            older, newer = sorted((memory, other), key=lambda m: m.order_key)
            found.setdefault(
                (older.id, newer.id),
                Conflict(_norm(memory.subject), _norm(memory.value), older, newer),
            )
    return sorted(found.values(), key=lambda c: (c.older.order_key, c.newer.order_key))


# --- building ----------------------------------------------------------------------------


@dataclass
class _Builder:
    index: Index
    profile: Profile
    counter: Counter
    now: dt.datetime | None
    age_days: int
    excluded: list[Excluded] = field(default_factory=list)
    # The sources of what is shown beside an entry (the corrections on its `now:` lines,
    # the facts in a conflict), so that one derived from a memory the profile may not
    # see is held back like any other memory.
    beside_ancestors: dict[str, list[Memory]] = field(default_factory=dict)

    def sees(self, memory: Memory) -> bool:
        return not (
            visibility_reason(memory, self.profile)
            or lineage_reason(memory, self.profile, self.beside_ancestors)
        )

    def exclude(self, memory: Memory, reason: str) -> None:
        self.excluded.append(Excluded(memory.id, memory.title, reason))

    def admissible(self, memory: Memory, ancestors: Ancestors) -> bool:
        reason = (
            status_reason(memory)
            or visibility_reason(memory, self.profile)
            or lineage_reason(memory, self.profile, ancestors)
        )
        if reason:
            self.exclude(memory, reason)
            return False
        return True

    def entry(
        self,
        memory: Memory,
        now: Sequence[Memory],
        contests: Sequence[Contest] = (),
        above: Mapping[str, str] | None = None,
    ) -> Entry:
        """A memory's lines. `above` maps the memories already shown in full (or
        pinned) to where; a line naming one of them points at it instead."""
        above = above or {}
        beneath = [
            Beneath("now", now_line(c, above.get(c.id)), c, above=above.get(c.id))
            for c in now
            if self.sees(c)
        ]
        for contest in contests:
            newer = contest.newer
            if newer is not None and not self.sees(newer):
                continue  # a profile that may not see the newer memory gets no line
            where = above.get(newer.id) if newer is not None else None
            beneath.append(Beneath("newer", newer_line(contest, where), newer, contest, where))
        visible = tuple(b.memory for b in beneath if b.kind == "now" and b.memory is not None)
        notes = [n for n in (age_note(memory, self.now, self.age_days),) if n]
        block = render_block(memory, visible, notes, beneath)
        return Entry(
            memory, block, self.counter.count(block), visible, tuple(notes), tuple(beneath)
        )


def build_bundle(
    index: Index,
    config: VaultConfig,
    profile: Profile,
    message: str | None = None,
    *,
    budget: int | None = None,
    now: dt.datetime | None = None,
    excludes: Mapping[str, frozenset[str]] | None = None,
    count: Counter | None = None,
    registry: Mapping[str, Predicate] | None = None,
    pending: Pending = (),
) -> Bundle:
    """Build the bundle for a profile and (optionally) the user's next message.

    `registry` (the predicate registry) and `pending` (the proposals waiting for the
    person, or what finds those about given ids) decide which shown memories are
    contested; without them only `retires` does.
    """
    limit = budget if budget is not None else profile.budget
    if limit < 1:
        raise ValueError("the budget must be at least 1 token")
    tokens = count or counter()
    builder = _Builder(index, profile, tokens, now, config.anchor_age_days)
    message = _clean_message(message)

    pins = index.pins()
    candidates: list[Memory] = []
    if message:
        rows = index.search_rows(
            message, limit=max(profile.recall * 3, 30), statuses=None, message=True
        )
        candidates = index.by_rowids(rows)
    ancestors = _ancestors(index, [*pins, *candidates])
    kept_pins = [m for m in pins if builder.admissible(m, ancestors)]
    pinned_ids = {m.id for m in pins}

    chosen: list[Memory] = []
    seen_text: dict[str, str] = {}
    for pin in kept_pins:  # a recalled memory that says what a pin says is a duplicate
        seen_text.setdefault(_norm(pin.text), pin.id)
    for memory in candidates:
        if memory.id in pinned_ids:
            continue
        if not builder.admissible(memory, ancestors):
            continue
        key = _norm(memory.text)
        if key in seen_text:
            builder.exclude(memory, f"superseded as a lower-ranked duplicate of {seen_text[key]}")
            continue
        seen_text[key] = memory.id
        chosen.append(memory)

    # The facts that can conflict with what may be shown, read once: the newer lines and
    # the Conflicts section both need them.
    same_subject = _same_subject(index, [*kept_pins, *chosen], excludes) if excludes else []
    # The lines beneath a memory (its `now:` lines, the newer memories that contest it)
    # are read for what can be shown: the pins and the candidates the recall count lets
    # in, among which the same subject is looked for; the candidates after those only
    # if the loop below reaches them, when some before were carried or over budget.
    together = [*kept_pins, *chosen[: profile.recall]]
    heads: dict[str, list[Memory]] = {}
    contests: dict[str, list[Contest]] = {}

    def read_lines(memories: Sequence[Memory]) -> None:
        ids = {m.id for m in memories}
        heads.update(now_lines(index, memories))
        found = contests_in(
            index,
            memories,
            registry,
            excludes,
            pending,
            same_subject=same_subject,
            together=together,
        )
        contests.update((mid, found_for) for mid, found_for in found.items() if mid in ids)
        beside = [c for mid in ids for c in heads[mid]]
        beside += [c.newer for mid in ids for c in contests.get(mid, ()) if c.newer is not None]
        builder.beside_ancestors.update(_ancestors(index, beside))

    read_lines(together)
    # A pin is always whole: every line that names one points at it.
    above = {m.id: "pinned" for m in kept_pins}
    carried: dict[str, str] = {}  # a memory shown in full beneath an entry -> the reason

    def carry(entry: Entry) -> None:
        for line in entry.beneath:
            if line.memory is not None and line.above is None:
                where = "on a now: line" if line.kind == "now" else "as the newer memory"
                carried.setdefault(line.memory.id, f"shown beneath {entry.memory.id} {where}")

    pinned = [builder.entry(m, heads[m.id], contests.get(m.id, ()), above) for m in kept_pins]
    for entry in pinned:
        carry(entry)
    # Start from what the pins take in the text, headings included, not from their sum.
    used = tokens.count(render_text(pinned, [], [], tokens)[0] if pinned else HEADER)
    used += tokens.count(f"## {SECTION_TITLES['recalled']}")
    recalled: list[Entry] = []
    for position, memory in enumerate(chosen):
        if memory.id in carried:  # its text is in the bundle already, once
            builder.exclude(memory, carried[memory.id])
            continue
        if len(recalled) >= profile.recall:
            builder.exclude(memory, f"over the profile's recall limit ({profile.recall})")
            continue
        if used >= limit:  # full: no entry fits, so none is rendered
            builder.exclude(memory, "over budget")
            continue
        if memory.id not in heads:
            read_lines(chosen[position:])
        entry = builder.entry(memory, heads[memory.id], contests.get(memory.id, ()), above)
        if used + entry.tokens > limit:
            builder.exclude(memory, "over budget")
            continue
        recalled.append(entry)
        used += entry.tokens
        above[memory.id] = "recalled above"
        carry(entry)

    shown = [e.memory for e in (*pinned, *recalled)]
    conflicts: list[Conflict] = []
    if excludes:
        typed = [m for m in shown if m.subject and m.value]
        builder.beside_ancestors.update(_ancestors(index, same_subject))
        # Only facts the profile may see can be named in a conflict line.
        others = [m for m in same_subject if builder.sees(m)]
        conflicts = conflicts_for(typed, others, excludes)

    text, sections = render_text(pinned, recalled, conflicts, tokens)
    # Token counts do not add up exactly, and the conflict lines come last: the whole text
    # is what must fit, so the lowest-ranked recalled memories go until it does.
    total = tokens.count(text)
    while recalled and total > limit:
        builder.exclude(recalled.pop().memory, "over budget")
        shown_ids = {e.memory.id for e in (*pinned, *recalled)}
        conflicts = [c for c in conflicts if {c.older.id, c.newer.id} & shown_ids]
        text, sections = render_text(pinned, recalled, conflicts, tokens)
        total = tokens.count(text)
    warnings = []
    if total > limit:
        warnings.append(
            f"the pins alone use {total} tokens, over the budget of {limit}: "
            "every pin is still included, but nothing else fits"
        )
    return Bundle(
        profile=profile,
        message=message,
        budget=limit,
        method=tokens.method,
        pinned=tuple(pinned),
        recalled=tuple(recalled),
        conflicts=tuple(conflicts),
        excluded=tuple(builder.excluded),
        text=text,
        sections=sections,
        used=total,
        warnings=tuple(warnings),
    )


def contests_in(
    index: Index,
    memories: Sequence[Memory],
    registry: Mapping[str, Predicate] | None,
    excludes: Mapping[str, frozenset[str]] | None,
    pending: Pending,
    *,
    same_subject: Sequence[Memory] | None = None,
    together: Sequence[Memory] | None = None,
) -> dict[str, list[Contest]]:
    """What contests each of these memories, read from the index: the newest fact of
    each single-valued predicate they hold, the facts that exclude theirs, the memories
    that name them in `retires`, the newer memories behind pending proposals, and the
    newest memory of each of their titles; and, among `together` (all of them unless
    said: what is shown side by side), the newer ones that state something of the same
    subject.

    `same_subject` is what `_same_subject` reads for these memories, when the caller
    has read it already."""
    ids = {m.id for m in memories}
    typed = [m for m in memories if m.subject and m.predicate and m.value]
    facts: list[Memory] = []
    if registry:
        single = {_norm(n) for n, p in registry.items() if p.cardinality == "single"}
        pairs = [(m.subject, m.predicate) for m in typed if _norm(m.predicate) in single]
        facts += index.newest_facts([(s, p) for s, p in pairs if s and p])
        if excludes:
            facts += _same_subject(index, typed, excludes) if same_subject is None else same_subject
    listed = pending(sorted(ids)) if callable(pending) else pending
    about = [p for p in listed if p.is_pending and ids.intersection(p.targets)]
    refs = {p.ref for p in about if p.ref}
    known = {
        mid: m
        for mid, m in (index.get_many(refs).items() if refs else ())
        if m.status == "active" and not m.broken
    }
    titles = {m.title_group for m in memories if m.title_group is not None}
    return contested(
        memories,
        facts=facts,
        registry=registry,
        naming=index.naming_in_retires(ids),
        pending=about,
        known=known,
        titled=index.newest_of_titles(titles) if titles else (),
        together=together,
    )


def _same_subject(
    index: Index, typed: Sequence[Memory], excludes: Mapping[str, frozenset[str]]
) -> list[Memory]:
    """The current facts that can conflict with these: same subject, same value, and a
    predicate that excludes theirs. Only those are loaded, since one subject (`user`)
    can hold thousands of facts and reading them all took most of a bundle's time."""
    subjects = sorted({m.subject for m in typed if m.subject})
    predicates = sorted(
        {p for m in typed if m.predicate for p in excludes.get(_norm(m.predicate), ())}
    )
    values = {_norm(m.value) for m in typed if m.value}
    return index.facts_holding(subjects, predicates, values)


def _clean_message(message: str | None) -> str | None:
    """Control characters are dropped and a huge message is cut; neither can crash a build."""
    if message is None:
        return None
    cleaned = "".join(c if c.isprintable() or c in "\n\t" else " " for c in message[:100_000])
    return cleaned.strip() or None


def render_text(
    pinned: Sequence[Entry],
    recalled: Sequence[Entry],
    conflicts: Sequence[Conflict],
    tokens: Counter,
) -> tuple[str, dict[str, int]]:
    parts = [HEADER]
    sections: dict[str, int] = {}
    for key, blocks in (
        ("pinned", [e.block for e in pinned]),
        ("recalled", [e.block for e in recalled]),
        ("conflicts", [c.line for c in conflicts]),
    ):
        if not blocks:
            sections[key] = 0
            continue
        section = f"## {SECTION_TITLES[key]}\n\n" + "\n".join(blocks)
        sections[key] = tokens.count(section)
        parts.append(section)
    if len(parts) == 1:
        parts.append("No memories for this turn.")
    return "\n\n".join(parts) + "\n", sections
