"""The deprecated-string rule: when does a text name a deprecated string?

The table spells out the cases people meet; the property tests compare the regex rule
with a plain, loop-and-`if` reading of the rule in the module docstring.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryctl.matching import any_match, check_needle, fold, matches, spans


def names(text: str, needle: str) -> bool:
    return matches(fold(text), needle)


# --- the table -------------------------------------------------------------------------

NAMED = [
    ("acme/api", "ACME/API"),
    ("acme/api", "acme/api"),
    ("acme/api", "github.com/acme/api/pull/12"),
    ("acme/api", "https://github.com/acme/api"),
    ("acme/api", "(acme/api)"),
    ("acme/api", "[acme/api]"),
    ("acme/api", "moved off acme/api."),
    ("acme/api", "acme/api's"),
    ("acme/api", "see acme/api\nnext"),
    ("acme/api", "acme/api, acme/web"),
    ("acme/api", "@acme/api"),
    ("acme/api", "acme/api-"),  # a hyphen that continues nothing
    ("acme/api", "acme/api -client"),
    ("acme/api", "x--acme/api"),  # "--" is not "name-"
    ("acme/api", "no: acme/api_v2 but acme/api yes"),  # a later occurrence counts
    ("c++", "we used C++ here"),
    ("c++", "c++11"),  # the edge `+` has no boundary requirement
    ("a.b*", "the a.b* glob"),
    ("[x]", "see [X] above"),
    (".env", "copy the .env file"),
    (".env", "config.env"),
    ("Straße", "STRASSE"),
    ("Straße", "strasse"),
    ("Straße", "straße"),
    ("STRASSE", "Straße"),
    ("strasse", "die Straße ist"),
    ("ufo", "UFO sighting"),
    ("ufo", "ufo"),
    ("Ünïcode", "ünïcode"),
    ("postgres 12", "still on Postgres 12."),
]

NOT_NAMED = [
    ("acme/api", "acme/api-client"),
    ("acme/api", "acme/apis"),
    ("acme/api", "myacme/api"),
    ("acme/api", "my-acme/api"),
    ("acme/api", "acme/api_v2"),
    ("acme/api", "acme/api2"),
    ("acme/api", "_acme/api"),
    ("acme/api", "acme / api"),
    ("a.b*", "axb"),
    ("a.b*", "a.bbbb"),
    ("a.b*", "a.b"),
    ("c++", "c"),
    ("c++", "abc++"),  # the edge `c` is a name character, so it needs a boundary
    ("[x]", "x"),
    ("ufo", "ufology"),
    ("ufo", "sulfuric"),
    ("Straße", "strassen"),
    ("strasse", "Straßen"),
    ("postgres 12", "postgres 120"),
]


@pytest.mark.parametrize(("needle", "text"), NAMED)
def test_a_text_that_names_the_deprecated_string_is_found(needle: str, text: str) -> None:
    assert names(text, needle)


@pytest.mark.parametrize(("needle", "text"), NOT_NAMED)
def test_a_longer_or_different_name_is_not_mistaken_for_it(needle: str, text: str) -> None:
    assert not names(text, needle)


def test_any_match_lists_the_named_strings_in_the_order_given() -> None:
    text = "Moved from ACME/API and c++ to the new acme/api-client."
    assert any_match(text, ["c++", "acme/api-client", "acme/api", "rust"]) == [
        "c++",
        "acme/api-client",
        "acme/api",
    ]


@pytest.mark.parametrize(
    ("needle", "ok"),
    [("", False), ("   ", False), ("ab", False), (" ab ", False), ("abc", True), ("c++", True)],
)
def test_too_short_or_empty_deprecated_strings_are_refused(needle: str, ok: bool) -> None:
    assert (check_needle(needle) is None) is ok


def test_spans_point_into_the_original_text_even_after_case_folding_changes_lengths() -> None:
    text = "Die Straße und die STRASSE: straße."
    found = list(spans(text, "strasse"))
    assert [text[a:b] for a, b in found] == ["Straße", "STRASSE", "straße"]


def test_spans_find_a_name_typed_with_a_combining_accent() -> None:
    text = "Cafe\u0301 au lait"  # "Café" with the accent typed separately
    assert names(text, "café")
    assert list(spans(text, "café")) == [(0, 5)]


def test_a_name_does_not_end_inside_an_accented_letter() -> None:
    assert not names("cafe\u0301s", "cafe")  # "cafés" with a combining accent
    assert not names("xİ", "xi")  # İ folds to "i" + a combining dot


# --- a plain reading of the documented rule ----------------------------------------------


def _name_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _left_edge_free(text: str, start: int, needle: str) -> bool:
    if not _name_char(needle[0]) or start == 0:
        return True
    before = text[start - 1]
    if _name_char(before):
        return False
    # "my-acme/api": a hyphen joined to a name on its far side continues that name.
    return not (before == "-" and start >= 2 and _name_char(text[start - 2]))


def _right_edge_free(text: str, end: int, needle: str) -> bool:
    if not _name_char(needle[-1]) or end == len(text):
        return True
    after = text[end]
    if _name_char(after):
        return False
    return not (after == "-" and end + 1 < len(text) and _name_char(text[end + 1]))


def reference_names(text: str, needle: str) -> bool:
    folded_text, folded_needle = fold(text), fold(needle)
    start = folded_text.find(folded_needle)
    while start != -1:
        end = start + len(folded_needle)
        if _left_edge_free(folded_text, start, folded_needle) and _right_edge_free(
            folded_text, end, folded_needle
        ):
            return True
        start = folded_text.find(folded_needle, start + 1)
    return False


EDGY = "abAB12_-/. ßS()"
needles = st.text(alphabet=EDGY, min_size=1, max_size=5)


@st.composite
def texts_around(draw: st.DrawFn, needle: str) -> str:
    """Text that often contains the needle (in another case), next to edgy characters."""
    pieces = draw(
        st.lists(
            st.one_of(
                st.text(alphabet=EDGY, max_size=4),
                st.sampled_from([needle, needle.upper(), needle.lower(), needle.casefold()]),
            ),
            max_size=6,
        )
    )
    return "".join(pieces)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_rule_agrees_with_a_plain_reading_of_the_docstring(data: st.DataObject) -> None:
    needle = data.draw(needles, label="needle")
    text = data.draw(texts_around(needle), label="text")
    assert names(text, needle) == reference_names(text, needle)


@settings(max_examples=250, deadline=None)
@given(st.data())
def test_spans_cut_the_original_text_where_it_names_the_string(data: st.DataObject) -> None:
    needle = data.draw(needles, label="needle")
    text = data.draw(texts_around(needle), label="text")
    found = list(spans(text, needle))
    for start, end in found:
        assert 0 <= start < end <= len(text)
        assert fold(text[start:end]) == fold(needle)
    assert [a for a, _ in found] == sorted({a for a, _ in found})  # in order, no repeats
    assert bool(found) == names(text, needle)
