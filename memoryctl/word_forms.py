"""The forms of a word a search looks for: "mangoes" finds "mango", "fixed" finds "fix",
"went" finds "go".

The full-text index keeps words as written (corrections must match exact strings), so a
search widens each of its words instead: a word of four letters or more by its stem as a
prefix (`signed` → `sign*`), a shorter one by its regular forms (a prefix of three
letters would match too much), and a common irregular verb by all its forms. Every
form is one term of the index; a group of them is written with spaces between
(`fix fixes fixed fixing`), and `search_query` turns it into an OR of the forms.

Written for English, the language the stop words and the endings are in; a word in
another script is looked for as it is.
"""

from __future__ import annotations

from functools import lru_cache

# Plural and verb endings a search looks past, longest first.
_ENDINGS = ("ies", "ing", "es", "ed", "s")
MIN_STEM = 4
_VOWELS = frozenset("aeiou")

# Common irregular verbs, as base, past, past participle (hand-written for this project).
# Left out: forms that are also a common noun of another meaning ("rose", "lay", "lie").
_IRREGULAR_TEXT = """
    begin began begun; bite bit bitten; blow blew blown; break broke broken;
    bring brought; build built; buy bought; catch caught; choose chose chosen;
    come came; draw drew drawn; drink drank drunk; drive drove driven; eat ate eaten;
    fall fell fallen; feed fed; feel felt; fight fought; find found; fly flew flown;
    forget forgot forgotten; forgive forgave forgiven; freeze froze frozen;
    give gave given; go went gone; grow grew grown; hang hung; hear heard;
    hide hid hidden; hold held; keep kept; lead led; leave left; lend lent; lose lost;
    make made; mean meant; meet met; pay paid; ride rode ridden; ring rang rung;
    run ran; say said; see saw seen; sell sold; send sent; shake shook shaken;
    shoot shot; show showed shown; sing sang sung; sink sank sunk; sit sat;
    sleep slept; speak spoke spoken; spend spent; stand stood; steal stole stolen;
    stick stuck; swim swam swum; take took taken; teach taught; tear tore torn;
    tell told; think thought; throw threw thrown; understand understood;
    wake woke woken; wear wore worn; win won; write wrote written
"""


def _irregular() -> dict[str, str]:
    table: dict[str, str] = {}
    for entry in _IRREGULAR_TEXT.split(";"):
        base, *past = entry.split()
        group = " ".join(dict.fromkeys([base, _s_form(base), _ing_form(base), *past]))
        for form in group.split(" "):
            table[form] = group
    return table


def _s_form(base: str) -> str:
    if base.endswith(("s", "x", "z", "ch", "sh", "o")):
        return base + "es"
    if base.endswith("y") and base[-2] not in _VOWELS:
        return base[:-1] + "ies"
    return base + "s"


def _ing_form(base: str) -> str:
    if base.endswith("ie"):
        return base[:-2] + "ying"
    if base.endswith("e") and not base.endswith("ee"):
        return base[:-1] + "ing"
    if _ends_short(base):
        return base + base[-1] + "ing"  # "run" → "running", "begin" → "beginning"
    return base + "ing"


def _ends_short(word: str) -> bool:
    """Ends in consonant, vowel, consonant (not w, x or y), so a suffix doubles the last."""
    tail = word[-3:]
    return (
        len(tail) == 3
        and tail[0] not in _VOWELS
        and tail[1] in _VOWELS
        and tail[2] not in _VOWELS
        and tail[2] not in "wxy"
    )


_IRREGULAR = _irregular()


@lru_cache(maxsize=8192)
def search_form(term: str, stopwords: frozenset[str] = frozenset()) -> str:
    """What a search looks for in place of a folded word: `mangoes` → `mango*`, `signed`
    → `sign*`; `move` → `move* moving`; `fixed` → `fix fixes fixed fixing`; `went` → the
    forms of "go". A stop word, a word of one or two letters, and any word that is not
    plain ASCII letters stay as they are, so "a" or "go" never match half the vault."""
    if term in _IRREGULAR and term not in stopwords:
        return _IRREGULAR[term]
    if not term.isascii() or not term.isalpha() or term in stopwords:
        return term
    stem, ending = term, ""
    for end in _ENDINGS:
        if term.endswith(end) and len(term) - len(end) >= MIN_STEM - 1:
            if end == "s" and term.endswith("ss"):
                break  # "access" is not a plural
            if end == "es" and term[-3] not in "oxzh":
                continue  # "notes" → "note", via the "s" rule below
            stem, ending = term[: -len(end)], end
            break
    doubled = ending in ("ing", "ed") and len(stem) >= MIN_STEM and _doubled(stem)
    if doubled:
        stem = stem[:-1]  # "running" → "run", "stopped" → "stop"
    if len(stem) >= MIN_STEM:
        if not ending and term.endswith("e"):
            return f"{term}* {term[:-1]}ing"  # "move" is also "moving"
        return stem + "*"
    if len(stem) < MIN_STEM - 1:
        return term
    forms = _forms(stem)
    if ending in ("ing", "ed") and not doubled and stem[-1] not in _VOWELS:
        forms.append(stem + "e*")  # "moving" may be "move", "taking" "take"
    return " ".join(dict.fromkeys([*forms, term]))


def _doubled(stem: str) -> bool:
    return stem[-1] == stem[-2] and stem[-1] not in _VOWELS and stem[-1] not in "lsz"


def _forms(root: str) -> list[str]:
    """The regular forms of a three-letter word: `fix` → fix, fixes, fixed, fixing."""
    if root.endswith("ee"):
        return [root, root + "s", root + "n", root + "ing"]
    if root.endswith("e"):
        return [root, root + "s", root + "d", root[:-1] + "ing"]
    forms = [root, _s_form(root), root + "ed", root + "ing"]
    if _ends_short(root):
        forms += [root + root[-1] + "ed", root + root[-1] + "ing"]
    return forms
