"""What contests a memory: a newer one that replaces, excludes or retires it, that has
its title, or that states something of the same subject beside it; or a proposal about
it that waits for the person.

Nothing is decided here: a contested memory stays current until the person decides.
The bundle shows each contest beneath the memory it is about, dated, so an agent is
never handed two current facts without being told which one is newer. These are pure
functions over memories and proposals; the bundle loads what they need.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memoryctl.memory import Memory
from memoryctl.proposals import Proposal
from memoryctl.rules import Predicate, folded_exclusions, is_typed, normalized
from memoryctl.same_subject import Statement, statements
from memoryctl.same_title import newer_of_title, newest_by_title

# Why a memory is contested, strongest first: when one newer memory contests another
# in several ways, the first of these names it.
WHYS = ("retires", "replaces", "excludes", "same_title", "proposed", "same_subject")
# What the line says a pending proposal asks for.
ASKS = {
    "retire": "retire this",
    "replace": "replace this text",
    "needs_review": "hold this for review",
    # A conflict from sync: the file holds this device's version, the proposal the other.
    "conflict": "choose between this and another device's version",
}
# Origins whose `ref` names the newer memory behind the proposal.
NEWER_ORIGINS = ("rule", "explicit")


@dataclass(frozen=True)
class Contest:
    """One thing that contests `target`: a newer memory, or a pending proposal."""

    target: str
    why: str  # one of WHYS
    newer: Memory | None = None
    proposal: str | None = None  # the pending proposal's id
    action: str | None = None  # what it asks for
    proposed: str | None = None  # when it was proposed
    # What the two share, for `same_title` (the newer one's title) and `same_subject`
    # (the subject, and "is" or "are" as the newer one says it).
    about: str | None = None
    verb: str | None = None

    @property
    def date(self) -> str:
        moment = self.newer.created if self.newer is not None else self.proposed or ""
        return moment[:10]


def by_facts(
    shown: Iterable[Memory], facts: Iterable[Memory], registry: Mapping[str, Predicate]
) -> list[Contest]:
    """A newer active fact about the same subject that ends a shown fact, by the
    registry's rules (as `rules.rule_suggestions` proposes): the newest fact of a
    single-valued predicate with another value replaces it; the newest fact of an
    excluding predicate with the same value excludes it."""
    single = {normalized(n) for n, p in registry.items() if p.cardinality == "single"}
    excluded_by = folded_exclusions(dict(registry))
    newest: dict[tuple[str, str, str], Memory] = {}  # (subject, predicate, value)
    newest_single: dict[tuple[str, str], Memory] = {}  # (subject, predicate)
    for fact in facts:
        if not is_typed(fact) or fact.status != "active":
            continue
        subject, name = normalized(fact.subject), normalized(fact.predicate)
        key = (subject, name, normalized(fact.value))
        if key not in newest or fact.order_key > newest[key].order_key:
            newest[key] = fact
        if name in single:
            held = newest_single.get((subject, name))
            if held is None or fact.order_key > held.order_key:
                newest_single[(subject, name)] = fact
    found: list[Contest] = []
    for memory in shown:
        if not is_typed(memory):
            continue
        subject, name = normalized(memory.subject), normalized(memory.predicate)
        value = normalized(memory.value)
        newer = newest_single.get((subject, name))
        if (
            newer is not None
            and newer.order_key > memory.order_key
            and normalized(newer.value) != value
        ):
            found.append(Contest(memory.id, "replaces", newer))
        for other in sorted(excluded_by.get(name, ())):
            newer = newest.get((subject, other, value))
            if newer is not None and newer.order_key > memory.order_key:
                found.append(Contest(memory.id, "excludes", newer))
    return found


def by_retires(shown: Iterable[Memory], naming: Iterable[Memory]) -> list[Contest]:
    """An active memory that names a shown memory in its `retires`."""
    ids = {m.id for m in shown}
    return [
        Contest(target, "retires", memory)
        for memory in naming
        if memory.status == "active" and not memory.broken
        for target in dict.fromkeys(memory.retires)
        if target in ids and target != memory.id
    ]


def by_proposals(
    shown: Iterable[Memory], pending: Iterable[Proposal], known: Mapping[str, Memory]
) -> list[Contest]:
    """A pending proposal about a shown memory. One that a rule or a `retires` made
    names its newer memory (in `known`); any other names only itself."""
    ids = {m.id for m in shown}
    found: list[Contest] = []
    for proposal in pending:
        if not proposal.is_pending or proposal.action not in ASKS:
            continue
        newer = known.get(proposal.ref or "") if proposal.origin in NEWER_ORIGINS else None
        for target in proposal.targets:
            if target in ids and (newer is None or newer.id != target):
                found.append(
                    Contest(
                        target, "proposed", newer, proposal.id, proposal.action, proposal.created
                    )
                )
    return found


def by_title(shown: Iterable[Memory], newest: Iterable[Memory]) -> list[Contest]:
    """The newest current memory of a shown memory's title (same kind, same namespace),
    when it is newer and says something else (see `same_title.py`)."""
    latest = newest_by_title(newest)
    found = []
    for memory in shown:
        newer = newer_of_title(memory, latest)
        if newer is not None:
            found.append(Contest(memory.id, "same_title", newer, about=_one_line(newer.title)))
    return found


def by_subject(together: Sequence[Memory]) -> list[Contest]:
    """Two current memories of one kind shown together, where a sentence of each states
    something different of the same subject (see `same_subject.py`): the older one is
    contested, weakly, by the newest memory stating something of it, unless that one
    says the same. Only what is shown together is compared, so this never reads the
    index and never proposes anything."""
    stating: dict[tuple[str, tuple[str, str]], list[tuple[Memory, Statement]]] = {}
    for memory in together:
        if memory.status != "active" or memory.broken:
            continue
        for statement in statements(memory.text):
            stating.setdefault((memory.kind, statement.key), []).append((memory, statement))
    found = []
    for group in stating.values():
        newest, said_last = max(group, key=lambda pair: pair[0].order_key)
        for older, said in group:
            # Only the newest statement of the subject is named: one between them that
            # the newest contradicts again is no news.
            if newest.order_key > older.order_key and said_last.rest != said.rest:
                found.append(
                    Contest(
                        older.id,
                        "same_subject",
                        newest,
                        about=said_last.subject,
                        verb=said_last.verb,
                    )
                )
    return found


def _one_line(text: str) -> str:
    return " ".join(text.split())


def merged(contests: Iterable[Contest]) -> dict[str, list[Contest]]:
    """Each shown memory's contests: one per newer memory (its strongest reason), then
    one per proposal that names no newer memory; oldest first, like `now:` lines."""
    best: dict[tuple[str, str], Contest] = {}
    for contest in contests:
        key = (contest.target, contest.newer.id if contest.newer else f"#{contest.proposal}")
        held = best.get(key)
        if held is None or WHYS.index(contest.why) < WHYS.index(held.why):
            best[key] = contest
    result: dict[str, list[Contest]] = {}
    for contest in best.values():
        result.setdefault(contest.target, []).append(contest)
    for found in result.values():
        found.sort(key=_order)
    return result


def _order(contest: Contest) -> tuple[int, str, str]:
    if contest.newer is not None:
        return (0, *contest.newer.order_key)
    return (1, contest.proposed or "", contest.proposal or "")


def contested(
    shown: Sequence[Memory],
    *,
    facts: Iterable[Memory] = (),
    registry: Mapping[str, Predicate] | None = None,
    naming: Iterable[Memory] = (),
    pending: Iterable[Proposal] = (),
    known: Mapping[str, Memory] | None = None,
    titled: Iterable[Memory] = (),
    together: Sequence[Memory] | None = None,
) -> dict[str, list[Contest]]:
    """Every contest of these memories, by the memory's id. `titled` holds the newest
    memory of each of their titles; `together` is what is shown side by side (all of
    `shown` unless said), among which the same subject is looked for."""
    return merged(
        [
            *by_facts(shown, facts, registry or {}),
            *by_retires(shown, naming),
            *by_proposals(shown, pending, known or {}),
            *by_title(shown, titled),
            *by_subject(shown if together is None else together),
        ]
    )
