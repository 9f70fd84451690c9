"""The predicate registry: how typed facts (subject, predicate, value) relate.

A predicate holds one value (`single`: a person lives in one city) or many (`multi`: a
person likes many fruits), and may exclude other predicates value for value:
`dislikes: mangoes` ends `likes: mangoes`. The registry lives in `memoryctl.toml`
under `[predicates.NAME]`; a vault without one uses the starter registry below.

The rules never retire anything: `rule_suggestions` returns proposals for the person
to approve or decline (see proposals.py and review.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from memoryctl.memory import Memory, normalized
from memoryctl.proposals import Suggestion
from memoryctl.storage.config import ConfigError, VaultConfig

CARDINALITIES = ("single", "multi")


@dataclass(frozen=True)
class Predicate:
    name: str
    cardinality: str = "multi"
    excludes: tuple[str, ...] = ()


STARTER_REGISTRY: dict[str, Predicate] = {
    p.name: p
    for p in (
        Predicate("likes", "multi", ("dislikes", "avoids")),
        Predicate("dislikes", "multi", ("likes", "prefers")),
        Predicate("prefers", "multi", ("dislikes", "avoids")),
        Predicate("avoids", "multi", ("likes", "prefers", "uses")),
        Predicate("owns", "multi", ("gave_away", "sold", "lost")),
        Predicate("gave_away", "multi", ("owns",)),
        Predicate("sold", "multi", ("owns",)),
        Predicate("lost", "multi", ("owns",)),
        Predicate("uses", "multi", ("stopped_using", "avoids")),
        Predicate("stopped_using", "multi", ("uses",)),
        Predicate("plans", "multi", ("cancelled", "finished")),
        Predicate("cancelled", "multi", ("plans",)),
        Predicate("finished", "multi", ("plans",)),
        Predicate("lives_in", "single"),
        Predicate("works_at", "single"),
        Predicate("role", "single"),
        Predicate("timezone", "single"),
        Predicate("relationship", "single"),
    )
}


def _predicate(name: str, table: object) -> Predicate:
    where = f"memoryctl.toml: [predicates.{name}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    cardinality = table.get("cardinality", "multi")
    if cardinality not in CARDINALITIES:
        raise ConfigError(f"{where} cardinality must be single or multi")
    excludes = table.get("excludes", [])
    if not isinstance(excludes, list) or not all(isinstance(e, str) for e in excludes):
        raise ConfigError(f"{where} excludes must be a list of predicate names")
    return Predicate(name, cardinality, tuple(excludes))


def load_registry(config: VaultConfig) -> dict[str, Predicate]:
    """The vault's registry: the starter registry, with the vault's own entries on top."""
    tables = config.raw.get("predicates", {})
    if not isinstance(tables, dict):
        raise ConfigError("memoryctl.toml: [predicates] must be a table of predicates")
    registry = dict(STARTER_REGISTRY)
    for name, table in tables.items():
        registry[name] = _predicate(name, table)
    return registry


def exclusions(registry: dict[str, Predicate]) -> dict[str, frozenset[str]]:
    """Which predicates exclude which, in both directions."""
    pairs: dict[str, set[str]] = {}
    for predicate in registry.values():
        for other in predicate.excludes:
            pairs.setdefault(predicate.name, set()).add(other)
            pairs.setdefault(other, set()).add(predicate.name)
    return {name: frozenset(others) for name, others in pairs.items()}


def folded_exclusions(registry: dict[str, Predicate]) -> dict[str, frozenset[str]]:
    """`exclusions` with every name folded as facts compare predicates, so `Likes`
    in a memory meets `dislikes` in the registry."""
    return {
        normalized(name): frozenset(normalized(o) for o in others)
        for name, others in exclusions(registry).items()
    }


# --- typed-fact rules: what a newer fact proposes to retire ------------------------------


def _by_name(registry: dict[str, Predicate]) -> dict[str, Predicate]:
    return {normalized(name): predicate for name, predicate in registry.items()}


def is_typed(memory: Memory) -> bool:
    return (
        all(normalized(part) for part in (memory.subject, memory.predicate, memory.value))
        and not memory.broken
    )


def fact_problems(memory: Memory, registry: dict[str, Predicate]) -> list[str]:
    """What keeps a memory that sets `subject`, `predicate` or `value` from being the
    typed fact it means to be: a blank part (then no rule applies to it), or a predicate
    the registry does not know (then it holds many values and excludes nothing)."""
    parts = {"subject": memory.subject, "predicate": memory.predicate, "value": memory.value}
    if not any(normalized(v) for v in parts.values()):
        return []
    problems = []
    blank = [key for key, v in parts.items() if not normalized(v)]
    if blank:
        problems.append(
            f"typed fact: {' and '.join(blank)} {'is' if len(blank) == 1 else 'are'} blank; "
            "a typed fact needs a subject, a predicate and a value, so no rule applies to it"
        )
    if normalized(memory.predicate) and normalized(memory.predicate) not in _by_name(registry):
        problems.append(
            f"typed fact: predicate {memory.predicate!r} is not in the predicate registry "
            "(add it as [predicates.NAME] in memoryctl.toml); until then it holds many "
            "values and excludes nothing"
        )
    return problems


def rule_suggestions(
    memories: Iterable[Memory],
    registry: dict[str, Predicate],
    involving: Collection[str] | None = None,
) -> list[Suggestion]:
    """The retirements the registry's rules propose among these typed facts.

    - A `single` predicate holds one value per subject: the newest active fact proposes
      retiring every older one with another value.
    - A predicate that excludes another ends it value for value: a newer `dislikes:
      mangoes` proposes retiring an older `likes: mangoes` (exclusion works both ways,
      as in the context bundle's conflicts).

    Only an active fact proposes, only a fact that is not retired is proposed, and each
    fact is proposed once, by the newest fact that ends it. Anything else, such as
    `likes: papayas` beside `likes: mangoes`, proposes nothing.

    With `involving`, only the proposals whose older or newer fact has one of these ids
    (exactly those of the whole list): the live checks ask about what changed, and a
    single-valued predicate with a thousand values proposes a thousand retirements.
    """
    predicates = _by_name(registry)
    single = {name for name, p in predicates.items() if p.cardinality == "single"}
    excluded_by = folded_exclusions(registry)
    # Each fact with its parts folded once: (order, predicate, value, memory).
    by_subject: dict[str, list[tuple[tuple[str, str], str, str, Memory]]] = {}
    for memory in memories:
        if memory.status == "retired" or memory.broken:
            continue
        subject = normalized(memory.subject)
        name, value = normalized(memory.predicate), normalized(memory.value)
        if subject and name and value:
            by_subject.setdefault(subject, []).append((memory.order_key, name, value, memory))

    # Each older fact's newest ender, and how it ends it; only those are worded.
    chosen: dict[str, tuple[tuple[str, str], Memory, Memory, bool]] = {}

    def offer(older: Memory, newer: Memory, single: bool) -> None:
        previous = chosen.get(older.id)
        if previous is None or newer.order_key > previous[0]:
            chosen[older.id] = (newer.order_key, older, newer, single)

    for group in by_subject.values():
        group.sort(key=lambda fact: fact[0])
        newest_single: dict[str, tuple[tuple[str, str], str, str, Memory]] = {}
        newest_holding: dict[tuple[str, str], tuple[tuple[str, str], Memory]] = {}
        for fact in group:
            order, name, value, memory = fact
            if memory.status != "active":
                continue
            newest_holding[(name, value)] = (order, memory)
            if name in single:
                newest_single[name] = fact
        for order, name, value, older in group:
            newer = newest_single.get(name)
            if newer and newer[0] > order and newer[2] != value:
                offer(older, newer[3], True)
            for other_name in excluded_by.get(name, ()):
                other = newest_holding.get((other_name, value))
                if other is not None and other[0] > order:
                    offer(older, other[1], False)
    found = [
        (_single_suggestion if single else _excludes_suggestion)(older, newer)
        for _, older, newer, single in chosen.values()
        if involving is None or older.id in involving or newer.id in involving
    ]
    return sorted(found, key=lambda suggestion: suggestion.targets)


def _retire_for(older: Memory, newer: Memory, reason: str, trigger: str) -> Suggestion:
    """A rule's proposal: retire the older fact, because of the newer one."""
    return Suggestion(
        action="retire",
        targets=(older.id,),
        reason=reason,
        origin="rule",
        ref=newer.id,
        trigger=trigger,
    )


def _single_suggestion(older: Memory, newer: Memory) -> Suggestion:
    return _retire_for(
        older,
        newer,
        f"{newer.predicate} holds one value for {newer.subject}: the newer "
        f"{newer.value!r} ({newer.id}, {newer.created[:10]}) replaces {older.value!r}",
        f"single {normalized(newer.predicate)}={normalized(newer.value)}",
    )


def _excludes_suggestion(older: Memory, newer: Memory) -> Suggestion:
    return _retire_for(
        older,
        newer,
        f"the newer {newer.subject} {newer.predicate}: {newer.value} "
        f"({newer.id}, {newer.created[:10]}) excludes {older.predicate}: {older.value}",
        f"excludes {normalized(newer.predicate)}/{normalized(older.predicate)}"
        f"={normalized(newer.value)}",
    )
