"""The one rule for "this text names that deprecated string".

Matching is case-insensitive (full Unicode case folding, so `Straße` matches
`STRASSE`) and literal (regex metacharacters mean themselves). A match is bounded at
its edges the way people read names, repository slugs, paths and URLs:

- An edge of the string that is a letter, digit or underscore must not continue a
  longer name in the text: `acme/api` does not match inside `myacme/api` or
  `acme/apis`.
- A hyphen followed by a name character continues the name, so `acme/api` does not
  match `acme/api-client` (or `my-acme/api`).
- Any other neighbour ends the name: spaces, punctuation, `/`, `.`, `@`, brackets and
  the ends of the text. So `acme/api` matches `github.com/acme/api/pull/12`,
  `(acme/api)` and `moved off acme/api.`.
- An edge of the string that is itself punctuation (`c++`, `.env`) has no boundary
  requirement on that side.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache

MIN_LENGTH = 3
# The blocks of combining marks that follow Latin, Greek and Cyrillic letters.
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"


def fold(text: str) -> str:
    """Case-fold and compose, so "café" is one form whichever way it was typed."""
    return unicodedata.normalize("NFC", text.casefold())


def _is_name_char(char: str) -> bool:
    return char.isalnum() or char == "_"


@lru_cache(maxsize=4096)
def pattern(needle: str) -> re.Pattern[str]:
    """The compiled rule for one deprecated string; it runs on case-folded text."""
    folded = fold(needle)
    body = re.escape(folded)
    left = r"(?<![\w])(?<![\w]-)" if folded and _is_name_char(folded[0]) else ""
    # A combining mark after the last letter belongs to that letter ("cafe" + U+0301),
    # so it continues the name just as another letter would.
    right = rf"(?![\w{_MARKS}])(?!-[\w])" if folded and _is_name_char(folded[-1]) else ""
    return re.compile(left + body + right)


def matches(text_folded: str, needle: str) -> bool:
    """Does this case-folded text name the deprecated string?"""
    return pattern(needle).search(text_folded) is not None


def any_match(text: str, needles: Iterable[str]) -> list[str]:
    """The deprecated strings this (unfolded) text names, in the order given."""
    folded = fold(text)
    return [needle for needle in needles if matches(folded, needle)]


def spans(text: str, needle: str) -> Iterator[tuple[int, int]]:
    """Where the string is named in the original text, as (start, end) offsets.

    Case folding can change lengths (ß becomes ss), so the search runs on a folded copy
    and each folded offset is mapped back to the character it came from.
    """
    folded_chars: list[str] = []
    origin: list[tuple[int, int]] = []
    for start, end in _clusters(text):
        # A letter is folded together with the accents that follow it, as `fold` does
        # for the whole text, so "Cafe" + U+0301 is found by "café".
        piece = fold(text[start:end])
        folded_chars.append(piece)
        origin.extend([(start, end)] * len(piece))
    folded = "".join(folded_chars)
    for match in pattern(needle).finditer(folded):
        if match.end() == match.start():
            continue
        yield origin[match.start()][0], origin[match.end() - 1][1]


def _clusters(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each character with the combining marks that follow it."""
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or not unicodedata.combining(text[index]):
            yield start, index
            start = index


def check_needle(needle: str) -> str | None:
    """Why a deprecated string cannot be used, or None when it can."""
    if not isinstance(needle, str) or not needle.strip():
        return "a deprecated string cannot be empty"
    if len(needle.strip()) < MIN_LENGTH:
        return f"{needle!r} is shorter than {MIN_LENGTH} characters and would reach too much"
    return None
