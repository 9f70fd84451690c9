"""The predicate registry's rules: what a newer typed fact proposes to retire.

Seed 003: a rule ends a fact only when the registry pairs the predicates, value for
value; a lookalike ("I also like papayas") proposes nothing, and nothing is retired
without the person's decision.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryctl.memory import Memory
from memoryctl.rules import STARTER_REGISTRY, Predicate, load_registry, rule_suggestions
from memoryctl.storage.config import ConfigError, VaultConfig


def fact(
    mid: str,
    predicate: str,
    value: str,
    created: str,
    *,
    subject: str = "user",
    status: str = "active",
) -> Memory:
    return Memory(
        id=mid,
        path=f"{mid}.md",
        title=f"{subject} {predicate} {value}",
        created=created,
        subject=subject,
        predicate=predicate,
        value=value,
        status=status,
    )


def retired_by(memories: list[Memory], registry=STARTER_REGISTRY) -> dict[str, str]:
    """{target: the fact that proposes retiring it}."""
    return {s.targets[0]: s.ref for s in rule_suggestions(memories, registry)}


def test_a_newer_city_for_a_single_predicate_proposes_retiring_the_older_one():
    lisbon = fact("lisbon0001", "lives_in", "Lisbon", "2026-06-02T08:40:00Z")
    porto = fact("porto00001", "lives_in", "Porto", "2026-10-28T19:10:00Z")
    [suggestion] = rule_suggestions([porto, lisbon], STARTER_REGISTRY)
    assert suggestion.action == "retire"
    assert suggestion.targets == ("lisbon0001",)
    assert suggestion.origin == "rule" and suggestion.ref == "porto00001"
    assert "Porto" in suggestion.reason and "Lisbon" in suggestion.reason


def test_dislikes_mangoes_proposes_retiring_likes_mangoes():
    likes = fact("likes00001", "likes", "mangoes", "2026-06-15T19:30:00Z")
    dislikes = fact("dislike001", "dislikes", "Mangoes", "2026-10-20T20:05:00Z")
    assert retired_by([likes, dislikes]) == {"likes00001": "dislike001"}


def test_gave_away_the_bike_proposes_retiring_owns_the_bike():
    owns = fact("owns000001", "owns", "road bike", "2026-06-21T07:45:00Z")
    gave = fact("gave000001", "gave_away", "road bike", "2026-10-25T17:00:00Z")
    assert retired_by([owns, gave]) == {"owns000001": "gave000001"}


def test_a_lookalike_under_a_multi_predicate_proposes_nothing():
    mangoes = fact("mango00001", "likes", "mangoes", "2026-06-15T19:30:00Z")
    papayas = fact("papaya0001", "likes", "papayas", "2026-07-08T08:10:00Z")
    coffee = fact("coffee0001", "likes", "coffee", "2026-07-09T08:10:00Z")
    assert rule_suggestions([mangoes, papayas, coffee], STARTER_REGISTRY) == []


def test_an_exclusion_needs_the_same_value_after_folding_case_and_whitespace():
    likes = fact("likes00001", "likes", "ripe  Mangoes", "2026-06-15T19:30:00Z")
    other = fact("dislike001", "dislikes", "papayas", "2026-10-20T20:05:00Z")
    same = fact("dislike002", "dislikes", " RIPE mangoes ", "2026-10-21T20:05:00Z")
    assert retired_by([likes, other]) == {}
    assert retired_by([likes, other, same]) == {"likes00001": "dislike002"}


def test_subjects_are_kept_apart():
    mine = fact("mine000001", "lives_in", "Lisbon", "2026-06-02T08:40:00Z")
    sisters = fact("ada0000001", "lives_in", "London", "2026-07-02T08:40:00Z", subject="Ada")
    assert rule_suggestions([mine, sisters], STARTER_REGISTRY) == []


def test_exclusion_works_both_ways_and_only_the_newer_fact_proposes():
    dislikes = fact("dislike001", "dislikes", "coffee", "2026-06-01T00:00:00Z")
    likes = fact("likes00001", "likes", "coffee", "2026-09-01T00:00:00Z")
    assert retired_by([dislikes, likes]) == {"dislike001": "likes00001"}


def test_retired_facts_neither_propose_nor_are_proposed():
    lisbon = fact("lisbon0001", "lives_in", "Lisbon", "2026-06-02T08:40:00Z", status="retired")
    porto = fact("porto00001", "lives_in", "Porto", "2026-10-28T19:10:00Z")
    braga = fact("braga00001", "lives_in", "Braga", "2026-11-28T19:10:00Z", status="retired")
    assert rule_suggestions([lisbon, porto, braga], STARTER_REGISTRY) == []


def test_a_fact_held_for_review_can_be_proposed_but_does_not_propose():
    lisbon = fact("lisbon0001", "lives_in", "Lisbon", "2026-06-02T08:40:00Z")
    porto = fact("porto00001", "lives_in", "Porto", "2026-10-28T19:10:00Z", status="needs_review")
    assert retired_by([lisbon, porto]) == {}
    braga = fact("braga00001", "lives_in", "Braga", "2026-11-28T19:10:00Z")
    assert retired_by([lisbon, porto, braga]) == {
        "lisbon0001": "braga00001",
        "porto00001": "braga00001",
    }


def test_each_fact_is_proposed_once_by_the_newest_fact_that_ends_it():
    lisbon = fact("lisbon0001", "lives_in", "Lisbon", "2026-06-02T08:40:00Z")
    porto = fact("porto00001", "lives_in", "Porto", "2026-10-28T19:10:00Z")
    braga = fact("braga00001", "lives_in", "Braga", "2026-11-28T19:10:00Z")
    assert retired_by([lisbon, porto, braga]) == {
        "lisbon0001": "braga00001",
        "porto00001": "braga00001",
    }


def test_the_same_value_stated_twice_is_not_a_contradiction():
    first = fact("porto00001", "lives_in", "Porto", "2026-10-28T19:10:00Z")
    again = fact("porto00002", "lives_in", "porto", "2026-11-28T19:10:00Z")
    assert rule_suggestions([first, again], STARTER_REGISTRY) == []


def test_the_same_finding_has_the_same_key_so_a_check_never_duplicates():
    likes = fact("likes00001", "likes", "mangoes", "2026-06-15T19:30:00Z")
    dislikes = fact("dislike001", "dislikes", "mangoes", "2026-10-20T20:05:00Z")
    first = rule_suggestions([likes, dislikes], STARTER_REGISTRY)
    second = rule_suggestions([dislikes, likes], STARTER_REGISTRY)
    assert [s.key for s in first] == [s.key for s in second]


def test_the_vaults_registry_adds_and_overrides_predicates():
    config = VaultConfig(
        raw={
            "predicates": {
                "favourite_colour": {"cardinality": "single"},
                "likes": {"cardinality": "multi", "excludes": []},
                "hates": {"excludes": ["likes"]},
            }
        }
    )
    registry = load_registry(config)
    assert registry["favourite_colour"] == Predicate("favourite_colour", "single", ())
    blue = fact("blue000001", "favourite_colour", "blue", "2026-01-01T00:00:00Z")
    green = fact("green00001", "favourite_colour", "green", "2026-02-01T00:00:00Z")
    likes = fact("likes00001", "likes", "jazz", "2026-01-01T00:00:00Z")
    hates = fact("hates00001", "hates", "jazz", "2026-03-01T00:00:00Z")
    assert retired_by([blue, green, likes, hates], registry) == {
        "blue000001": "green00001",
        "likes00001": "hates00001",
    }


def test_an_unknown_predicate_proposes_nothing():
    first = fact("first00001", "reads", "Dune", "2026-01-01T00:00:00Z")
    second = fact("second0001", "reads", "Emma", "2026-02-01T00:00:00Z")
    assert rule_suggestions([first, second], STARTER_REGISTRY) == []


def test_a_bad_registry_entry_is_a_clear_error():
    with pytest.raises(ConfigError, match="cardinality must be single or multi"):
        load_registry(VaultConfig(raw={"predicates": {"x": {"cardinality": "one"}}}))


def test_the_starter_registry_pairs_the_obvious_predicates():
    assert STARTER_REGISTRY["lives_in"].cardinality == "single"
    assert "likes" in STARTER_REGISTRY["dislikes"].excludes
    assert "owns" in STARTER_REGISTRY["gave_away"].excludes
    assert "plans" in STARTER_REGISTRY["cancelled"].excludes


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["lives_in", "likes", "dislikes", "owns", "gave_away", "knows"]),
            st.sampled_from(["Lisbon", "porto", "mangoes", " Mangoes ", "bike"]),
            st.integers(min_value=1, max_value=28),
            st.sampled_from(["active", "active", "needs_review", "retired"]),
        ),
        max_size=14,
    ),
    st.sets(st.integers(min_value=0, max_value=13), max_size=3),
)
def test_the_proposals_about_some_facts_are_those_of_the_whole_list_that_name_them(rows, picked):
    """The live checks ask only about what changed; they get what a full check finds."""
    facts = [
        fact(f"f{number:09d}", predicate, value, f"2026-10-{day:02d}T12:00:00Z", status=status)
        for number, (predicate, value, day, status) in enumerate(rows)
    ]
    involving = {f"f{number:09d}" for number in picked}
    whole = rule_suggestions(facts, STARTER_REGISTRY)
    expected = [s for s in whole if s.targets[0] in involving or s.ref in involving]
    assert rule_suggestions(facts, STARTER_REGISTRY, involving) == expected
