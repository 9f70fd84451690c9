"""Words inside text written without spaces, found by pairs of characters.

Chinese and Japanese write a sentence without spaces ("我每天早上喝咖啡", "毎朝コーヒーを飲む"),
and so do Thai, Lao, Khmer and Burmese ("ฉันชอบกินข้าวผัด"); SQLite's `unicode61` tokenizer
takes a whole run of their characters as one term, so a search could find only the whole
run. The full-text index stores each run as its overlapping pairs of characters and its
last character alone ("咖啡店" as "咖啡 啡店 店"), and a query's run becomes the same pairs,
in order, as a phrase: every string of two or more characters inside a run is found, and
one character is found as the first of a pair or the last of a run (a prefix query).
Korean writes spaces between words but joins particles to them ("커피를"), so "커피" is
found the same way. In Thai, Lao, Khmer and Burmese a "character" is a letter with the
vowel signs and tone marks written on it (and, in Khmer and Burmese, a letter stacked
below it): "ข้าว" is ข้ า ว, so its pairs are "ข้า าว", and ขาว (another word, without the
tone mark) is not found inside it. Text in other scripts is left as it is. See
docs/ARCHITECTURE.md, "Search".
"""

from __future__ import annotations

import re
import unicodedata
from itertools import pairwise

# Han ideographs (with their extensions and compatibility forms, and the iteration
# marks 々 〆 〇), Hiragana and Katakana (with the sound marks and the long vowel mark
# ー), half-width Katakana, and Hangul (syllables, and the jamo they are made of).
RUN_CHARACTERS = (
    "\u1100-\u11ff"  # Hangul jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3041-\u309a\u309d-\u309f"  # Hiragana (not the spacing sound marks ゛ ゜)
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana (not the middle dot ・)
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # Han, extension A
    "\u4e00-\u9fff"  # Han
    "\ua960-\ua97f"  # Hangul jamo extended A
    "\uac00-\ud7ff"  # Hangul syllables, jamo extended B
    "\uf900-\ufaff"  # Han compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # Han, extensions B to G
)
# Thai, Lao, Khmer and Myanmar (Burmese): their letters with their vowel signs, tone
# marks and stacking signs, not their digits or punctuation. A run of each is its own.
MARKED_SCRIPTS = (
    "\u0e01-\u0e3a\u0e40-\u0e4e",  # Thai
    "\u0e81-\u0ec6\u0ec8-\u0ece\u0edc-\u0edf",  # Lao
    "\u1780-\u17d3\u17d7\u17dc\u17dd",  # Khmer
    "\u1000-\u103f\u1050-\u108f\u109a-\u109d",  # Myanmar
)
RUN = re.compile("|".join(f"[{chars}]+" for chars in (RUN_CHARACTERS, *MARKED_SCRIPTS)))
_ONLY_RUN = re.compile(f"(?:{RUN.pattern})\\Z")
_MARKED = re.compile(f"[{''.join(MARKED_SCRIPTS)}]")


def _marks() -> str:
    """The characters of `MARKED_SCRIPTS` that are not letters: vowel signs, tone marks
    and stacking signs (and the code points not yet assigned among them)."""
    ranges = re.findall(r"(.)(?:-(.))?", "".join(MARKED_SCRIPTS))
    chars = (chr(c) for first, last in ranges for c in range(ord(first), ord(last or first) + 1))
    return "".join(c for c in chars if not unicodedata.category(c).startswith("L"))


# `unicode61` ends a term at a mark (its token characters are letters and digits), so the
# index is told to keep these inside a term (`index_format.FTS_DDL`), and a letter is
# read with the marks after it. A Khmer coeng or a Burmese virama puts the next letter
# below the one before: the two are one character.
MARKS = _marks()
_STACKING = "\u17d2\u1039"
_LETTER = re.compile(f".(?:[{_STACKING}][^{MARKS}]?|[{MARKS}])*", re.DOTALL)
# The width forms Japanese text mixes in: full-width Latin letters, digits and signs
# (ＡＢＣ１２３, from a Japanese input method), and half-width katakana and its
# punctuation (ｶﾀｶﾅ, from older systems). NFKC makes them ABC123 and カタカナ (a
# half-width sound mark joins its kana: ｶﾞ is ガ), so the index and a query agree.
_WIDTH_FORMS = "\uff01-\uff5e\uff61-\uff9f"
_WIDTH_RUN = re.compile(f"[{_WIDTH_FORMS}]+")
_ONLY_WIDTH_FORM = re.compile(f"[{_WIDTH_FORMS}]\\Z")
# One pass finds both, so text with neither (accented Latin) costs no second scan.
_RUN_OR_WIDTH = re.compile(f"[{RUN_CHARACTERS}{''.join(MARKED_SCRIPTS)}{_WIDTH_FORMS}]+")


def is_width_form(char: str) -> bool:
    """Whether a character is a full-width Latin or a half-width katakana form."""
    return _ONLY_WIDTH_FORM.match(char) is not None


def widths_folded(text: str) -> str:
    """Text with its full-width Latin and half-width katakana as their usual forms;
    any other text is unchanged."""
    if text.isascii():
        return text
    return _WIDTH_RUN.sub(lambda found: unicodedata.normalize("NFKC", found[0]), text)


def is_run(term: str) -> bool:
    """Whether a term is a run of these scripts' characters (as `runs_apart` splits)."""
    return _ONLY_RUN.match(term) is not None


def is_marked_run(term: str) -> bool:
    """Whether a term is a run of Thai, Lao, Khmer or Burmese (`MARKED_SCRIPTS`)."""
    return _MARKED.match(term) is not None and is_run(term)


def characters(run: str) -> list[str]:
    """The characters of a run, in order: in Thai, Lao, Khmer and Burmese each letter
    with its marks."""
    if _MARKED.match(run) is None:
        return list(run)
    return _LETTER.findall(run)


def pairs(run: str) -> list[str]:
    """The overlapping pairs of characters of a run, in order; a run of one character is
    itself."""
    if _MARKED.match(run) is not None:
        return _pairs(_LETTER.findall(run), run)
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _pairs(letters: list[str], run: str) -> list[str]:
    if len(letters) < 2:
        return [run]
    return [a + b for a, b in pairwise(letters)]


def indexed(text: str) -> str:
    """Text as the full-text index is given it: each run written as its pairs and its
    last character, apart from the text around it; any other text is unchanged."""
    if text.isascii():
        return text
    return _RUN_OR_WIDTH.sub(_stored_or_folded, text)


def _stored_or_folded(found: re.Match[str]) -> str:
    text = found[0]
    if _WIDTH_RUN.search(text) is not None:
        return RUN.sub(_stored, widths_folded(text))
    if _MARKED.search(text) is None:
        return _stored(found)  # Chinese, Japanese or Korean alone: no second scan
    # A run of Thai, Lao, Khmer or Burmese is stored apart from any other beside it.
    return RUN.sub(_stored, text)


def _stored(found: re.Match[str]) -> str:
    # Composed first: a decomposed kana's sound mark (か + U+3099) would end a term.
    run = unicodedata.normalize("NFC", found[0])
    if _MARKED.match(run) is None:
        terms = [*pairs(run), run[-1]] if len(run) > 1 else [run]
    else:
        letters = _LETTER.findall(run)
        terms = [*_pairs(letters, run), letters[-1]] if len(letters) > 1 else [run]
    return " " + " ".join(terms) + " "


def runs_apart(text: str) -> str:
    """Text with a space on either side of each run, so the run is a term of its own:
    "我在berlin工作" holds "berlin"."""
    if text.isascii():
        return text
    return RUN.sub(lambda found: f" {found[0]} ", text)
