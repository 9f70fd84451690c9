"""Turning what a person types into an FTS5 query, and choosing how to rank it.

BM25 is the ranking, with one measured exception. A term that most memories contain
("the", or a project name in a project vault) carries almost no information, yet
ranking every memory that contains it costs hundreds of milliseconds on a large vault.
So the plan drops such terms when rarer ones remain, and when only common terms are
left it matches them all and returns the most recently indexed memories first.

Long messages (what a user says to an agent) are cut to their rarest terms, joined
with OR: those carry the ranking, and their short posting lists keep the query fast.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memoryctl.matching import fold

# A term in more than this share of memories is "common".
COMMON_SHARE = 0.2
# Most terms a message query keeps: enough to rank well, few enough to stay fast.
MESSAGE_TERMS = 6
MESSAGE_MIN_WORDS = 5
# A message query stops adding terms once their memories add up to this many.
MESSAGE_POSTINGS = 4000
# BM25 ranks at most this many matches: the most recently indexed ones.
RANK_CAP = 4000

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves let lets please tell know think want need
    also get got
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Terms as the index's tokenizer sees them: letters and digits, folded, no accents."""
    decomposed = unicodedata.normalize("NFD", fold(text))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _TOKEN.findall(unicodedata.normalize("NFC", plain))


def _quote(term: str) -> str:
    """A term as FTS5 query text; a trailing `*` (from `search_form`) stays a prefix."""
    if term.endswith("*"):
        return _quote(term[:-1]) + "*"
    return '"' + term.replace('"', '""') + '"'


match_term = _quote

# Plural and verb endings a search looks past, longest first: the index keeps words as
# written, so "mangoes" must also find "mango" and "signed" find "signing".
_ENDINGS = ("ies", "ing", "es", "ed", "s")
MIN_STEM = 4


def search_form(term: str) -> str:
    """The prefix a search looks for: `mangoes` → `mango*`, `signed` → `sign*`.

    Terms shorter than the minimum stay exact, so "a" or "go" never match half the vault.
    """
    stem = term
    for ending in _ENDINGS:
        if term.endswith(ending) and len(term) - len(ending) >= MIN_STEM:
            if ending == "s" and term.endswith("ss"):
                break  # "access" is not a plural
            if ending == "es" and term[-3] not in "oxzh":
                continue  # "notes" → "note", via the "s" rule below
            stem = term[: -len(ending)]
            break
    return stem + "*" if len(stem) >= MIN_STEM and stem.isascii() else term


def phrase(text: str) -> str | None:
    """An FTS5 phrase that finds every memory that might contain this exact string.

    None when no phrase can promise that, so the caller scans instead. SQLite's
    unicode61 tokenizer strips only Latin diacritics and keeps other combining marks
    inside a term (Cyrillic й, Greek ί, Devanagari vowel signs), so outside ASCII its
    terms can differ from `tokens` and a phrase would miss memories that name the string.
    """
    terms = tokens(text)
    if not terms or not all(term.isascii() for term in terms):
        return None
    return _quote(" ".join(terms))


def prefix_query(text: str) -> str | None:
    """As-you-type filtering: every word must appear, the last one as a prefix."""
    terms = tokens(text)
    if not terms:
        return None
    parts = [_quote(t) for t in terms[:-1]] + [_quote(terms[-1]) + "*"]
    return " AND ".join(parts)


@dataclass(frozen=True)
class QueryPlan:
    match: str
    by_recency: bool
    terms: tuple[str, ...]
    # About how many memories the MATCH finds (the rarest term for AND, the sum for OR).
    estimate: int = 0


def _and(terms: list[str], df: dict[str, int], by_recency: bool) -> QueryPlan:
    return QueryPlan(
        " AND ".join(_quote(t) for t in terms), by_recency, tuple(terms), min(df[t] for t in terms)
    )


def plan(
    query: str,
    frequency: Callable[[Sequence[str]], dict[str, int]],
    total: int,
    *,
    message: bool = False,
) -> QueryPlan | None:
    """Decide the MATCH expression and the ranking for a search.

    `message` marks what a person says to an agent: any of its words may recall a
    memory, however short it is ("mango ideas?"). Otherwise a short query is a search,
    and every word must match.
    """
    terms = list(dict.fromkeys(tokens(query)))
    if not terms:
        return None
    is_message = message or len(terms) >= MESSAGE_MIN_WORDS
    words = [t for t in terms if t not in STOPWORDS] or terms
    content = list(dict.fromkeys(search_form(t) for t in words))
    df = frequency(content)
    present = [t for t in content if df.get(t, 0) > 0]
    if not present:
        return None
    limit = max(1, int(total * COMMON_SHARE))
    by_rarity = sorted(present, key=lambda t: (df[t], t))
    rare = [t for t in by_rarity if df[t] <= limit]
    if is_message:
        if not rare:
            return _and(by_rarity[:2], df, True)
        # The rarest terms carry the ranking; stop adding terms once their posting lists
        # would make the query slow, but always keep at least one.
        chosen = [rare[0]]
        for term in rare[1:MESSAGE_TERMS]:
            if sum(df[t] for t in chosen) + df[term] > MESSAGE_POSTINGS:
                break
            chosen.append(term)
        match = " OR ".join(_quote(t) for t in chosen)
        return QueryPlan(match, False, tuple(chosen), sum(df[t] for t in chosen))
    if rare:
        return _and(rare, df, False)
    return _and(present, df, True)
