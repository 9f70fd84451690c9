"""The predicate registry: how typed facts (subject, predicate, value) relate.

A predicate holds one value (`single`: a person lives in one city) or many (`multi`: a
person likes many fruits), and may exclude other predicates value for value:
`dislikes: mangoes` ends `likes: mangoes`. The registry lives in `memoryctl.toml`
under `[predicates.NAME]`; a vault without one uses the starter registry below.
"""

from __future__ import annotations

from dataclasses import dataclass

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
