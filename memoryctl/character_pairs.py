"""Words inside Chinese, Japanese and Korean text, found by pairs of characters.

These scripts write a sentence without spaces ("我每天早上喝咖啡", "毎朝コーヒーを飲む"),
and SQLite's `unicode61` tokenizer takes a whole run of their characters as one term,
so a search could find only the whole run. The full-text index stores each run as its
overlapping pairs of characters and its last character alone ("咖啡店" as "咖啡 啡店
店"), and a query's run becomes the same pairs, in order, as a phrase: every string of
two or more characters inside a run is found, and one character is found as the first
of a pair or the last of a run (a prefix query). Korean writes spaces between words but
joins particles to them ("커피를"), so "커피" is found the same way. Text in other
scripts is left as it is. See docs/ARCHITECTURE.md, "Search".
"""

from __future__ import annotations

import re
import unicodedata

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
_RUN = re.compile(f"[{RUN_CHARACTERS}]+")
_ONLY_RUN = re.compile(f"[{RUN_CHARACTERS}]+\\Z")
# The width forms Japanese text mixes in: full-width Latin letters, digits and signs
# (ＡＢＣ１２３, from a Japanese input method), and half-width katakana and its
# punctuation (ｶﾀｶﾅ, from older systems). NFKC makes them ABC123 and カタカナ (a
# half-width sound mark joins its kana: ｶﾞ is ガ), so the index and a query agree.
_WIDTH_FORMS = "\uff01-\uff5e\uff61-\uff9f"
_WIDTH_RUN = re.compile(f"[{_WIDTH_FORMS}]+")
_ONLY_WIDTH_FORM = re.compile(f"[{_WIDTH_FORMS}]\\Z")
# One pass finds both, so text with neither (accented Latin) costs no second scan.
_RUN_OR_WIDTH = re.compile(f"[{RUN_CHARACTERS}{_WIDTH_FORMS}]+")


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


def pairs(run: str) -> list[str]:
    """The overlapping pairs of characters of a run, in order; a run of one character is
    itself."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def indexed(text: str) -> str:
    """Text as the full-text index is given it: each run written as its pairs and its
    last character, apart from the text around it; any other text is unchanged."""
    if text.isascii():
        return text
    return _RUN_OR_WIDTH.sub(_stored_or_folded, text)


def _stored_or_folded(found: re.Match[str]) -> str:
    if _WIDTH_RUN.search(found[0]) is None:
        return _stored(found)
    return _RUN.sub(_stored, widths_folded(found[0]))


def _stored(found: re.Match[str]) -> str:
    # Composed first: a decomposed kana's sound mark (か + U+3099) would end a term.
    run = unicodedata.normalize("NFC", found[0])
    terms = [*pairs(run), run[-1]] if len(run) > 1 else [run]
    return " " + " ".join(terms) + " "


def runs_apart(text: str) -> str:
    """Text with a space on either side of each run, so the run is a term of its own:
    "我在berlin工作" holds "berlin"."""
    if text.isascii():
        return text
    return _RUN.sub(lambda found: f" {found[0]} ", text)
