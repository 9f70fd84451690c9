"""What a sentence states something of, and the lookalikes that must not meet: the weak
rule that shows a newer memory beneath an older one when both say what one subject is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryctl.contested import by_subject
from memoryctl.memory import Memory, folded_title, normalized
from memoryctl.same_subject import _statement, sentence_statement, statements


def memory(mid: str, body: str, created: str, kind: str = "fact") -> Memory:
    return Memory(id=mid, path=f"{mid}.md", title=mid, body=body, created=created, kind=kind)


@pytest.mark.parametrize(
    ("sentence", "subject"),
    [
        ("My working hours are now 08:00 to 16:00", "working hours"),
        ("Our standup is at 09:15 on weekdays.", "standup"),
        ("The deadline for Project Alpha was 3 March", "deadline for project alpha"),
        ("Currently my favourite editor is Helix", "favourite editor"),
        ("My name's Ada", "name"),
        ("Ada's bike is red", "ada's bike"),
        ("The staging cluster isn't in eu-west-1 any more", "staging cluster"),
        ("Ines is my older sister", "ines"),
    ],
)
def test_a_sentence_states_something_of_the_words_before_its_copula(sentence, subject):
    [statement] = statements(sentence)
    assert statement.subject == subject


@pytest.mark.parametrize(
    "sentence",
    [
        "I also like papayas",  # no copula
        "It is raining in Porto",  # a pronoun
        "This is how we release",
        "They are on holiday",
        "I am vegetarian",
        "X is unknown",  # one letter
        "If the build is red, stop and tell me",  # a clause
        "When the tests are slow, run them in parallel",
        "Anything that my manager asks on Fridays after lunch is urgent",  # too long
        "Today is Monday",  # only a change word
    ],
)
def test_a_pronoun_a_clause_or_no_copula_is_no_subject(sentence):
    assert statements(sentence) == ()


# (older, newer, whether the older is shown with the newer beneath it)
PAIRS = [
    ("My working hours are 09:30 to 17:30.", "My working hours are now 08:00 to 16:00", True),
    ("My favourite editor is Neovim.", "my  Favourite editor is Helix!", True),
    ("Project Alpha is due in March.", "Project Alpha is due in April.", True),
    ("My office is in Lisbon.", "My office is no longer in Lisbon.", True),
    # Lookalikes: one subject, different things said of it, or no subject at all.
    ("Project Alpha is due in March.", "Project Alpha is written in Rust.", False),
    ("Project Alpha is a Rust service.", "Project Alpha is hosted on Fly.", False),
    ("I like mangoes.", "I also like papayas.", False),
    ("It is sunny in Porto today.", "It is raining in Porto.", False),
    ("My working hours are 09:30 to 17:30.", "My working hours are now 09:30 to 17:30.", False),
    ("The release is on Friday.", "The release notes are in CHANGELOG.md.", False),
    ("My sister is Ines.", "My sister's dog is called Bolo.", False),
]


@pytest.mark.parametrize(("older", "newer", "contested"), PAIRS)
def test_two_memories_stating_what_one_subject_is_are_told_apart_from_lookalikes(
    older, newer, contested
):
    found = by_subject(
        [memory("old0000001", older, "2026-06-01"), memory("new0000001", newer, "2026-10-14")]
    )
    assert [(c.target, c.newer.id) for c in found] == (
        [("old0000001", "new0000001")] if contested else []
    )


def test_the_same_subject_in_memories_of_another_kind_is_not_compared():
    found = by_subject(
        [
            memory("old0000001", "My working hours are 9 to 5.", "2026-06-01"),
            memory("new0000001", "My working hours are 8 to 4.", "2026-10-14", kind="plan"),
        ]
    )
    assert found == []


def test_only_the_newest_statement_of_a_subject_is_named_beneath_each_older_one():
    found = by_subject(
        [
            memory("a000000001", "My working hours are 9 to 5.", "2026-06-01"),
            memory("b000000001", "My working hours are 8 to 4.", "2026-08-01"),
            memory("c000000001", "My working hours are 7 to 3.", "2026-10-01"),
        ]
    )
    assert sorted((c.target, c.newer.id, c.about, c.verb) for c in found) == [
        ("a000000001", "c000000001", "working hours", "are"),
        ("b000000001", "c000000001", "working hours", "are"),
    ]


def test_a_newest_statement_that_says_what_the_oldest_says_contests_only_the_middle_one():
    found = by_subject(
        [
            memory("a000000001", "My working hours are 9 to 5.", "2026-06-01"),
            memory("b000000001", "My working hours are 8 to 4.", "2026-08-01"),
            memory("c000000001", "My working hours are now 9 to 5.", "2026-10-01"),
        ]
    )
    assert [(c.target, c.newer.id) for c in found] == [("b000000001", "c000000001")]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Indent with tabs", "indent  with TABS."),
        ("Straße", "STRASSE"),
        ("Café notes", "Cafe\u0301 notes"),
        ("Deploy steps…", "deploy steps?!"),
    ],
)
def test_titles_are_one_once_case_whitespace_and_trailing_punctuation_are_folded(one, other):
    assert folded_title(one) == folded_title(other)


def test_titles_that_differ_inside_stay_apart():
    assert folded_title("Indent with tabs") != folded_title("Indent with spaces")
    assert folded_title("v1.2 notes") != folded_title("v12 notes")


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(["", ".", "!?", " …", "  "]),
)
def test_a_title_folds_the_same_whatever_its_case_spacing_and_last_punctuation(title, end):
    folded = folded_title(title)
    assert folded_title(folded) == folded
    assert folded_title(" ".join(title.upper().split()) + end) == folded_title(title.upper())


# Words and marks that make and break copulas: plain and contracted, with apostrophes,
# hyphens and cases a copula search could miss.
_PIECES = st.sampled_from(
    [
        "is",
        "IS",
        "are",
        "was",
        "Were",
        "isn't",
        "isn’t",
        "ARE'NT",
        "wasn't",
        "weren’t",
        "'s",
        "’s",
        "'re",
        "name's",
        "NAME’S",
        "we're",
        "Ada''s",
        "-is-",
        "'is'",
        "is_",
        "x-is",
        "is2",
        "my",
        "the",
        "working",
        "hours",
        "now",
        "not",
        "due",
        "İS",
        "ß",
        "Ines",
        "sister",
        "09:30",
        "-",
        "'",
        "’",
        " ",
        "  ",
        ",",
        ".",
        "\n",
        "\t",
        "é",
    ]
)


@given(st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=12))
def test_a_sentence_is_searched_for_a_copula_word_by_word_only_when_it_may_have_one(pieces):
    # Most sentences have no copula; a quick search skips reading them word by word,
    # and must never skip one that has.
    sentence = "".join(pieces) if len(pieces) % 2 else " ".join(pieces)
    assert sentence_statement(sentence) == _statement(normalized(sentence))
