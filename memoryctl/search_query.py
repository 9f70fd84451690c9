"""Turning what a person types into an FTS5 query, and choosing how to rank it.

BM25 is the ranking. Ranking costs time in proportion to the matches it scores (about
1.2 microseconds a match, measured at 100,000 memories on a loaded 2-core machine:
4,000 matches take 5 ms, 32,000 take 37 ms). So wherever the matches are few enough to
rank quickly, every match is ranked: in a vault of a few thousand memories, that is
every query. Past that, a term whose posting list is longer than that ("the", or a
project name in a project vault) is *common*: it carries little information, so the
plan drops it when rarer terms remain, and when only common terms are left it matches
them all and returns the most recently indexed memories first.

Long messages (what a user says to an agent) are cut to their rarest terms, joined
with OR, once all of them together would be slow to rank: those carry the ranking,
and their short posting lists keep the query fast.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache

from memoryctl import character_pairs, word_forms
from memoryctl.matching import fold

# BM25 ranks this many matches in a few milliseconds (see above): a query that matches
# no more is ranked whole, and a term in more memories than this is "common".
RANK_ALL = 4000
COMMON_POSTINGS = RANK_ALL
# Past RANK_ALL, the most terms a message query keeps: enough to rank well, few enough
# to stay fast; and it stops adding terms once their memories add up to this many.
MESSAGE_TERMS = 6
MESSAGE_MIN_WORDS = 5
MESSAGE_POSTINGS = RANK_ALL
# BM25 ranks at most this many matches: the most recently indexed ones.
RANK_CAP = RANK_ALL
# A message also recalls the memories that followed each of its best this many matches
# in the same source (the next turns of a conversation, where an answer follows what it
# answers): the k-th next turn gains the k-th weight times the match's BM25 score, so
# the turns after a strong match rank beside it and those after a weak one stay low. A
# turn spoken by a person the message names scores this many times its own, and a turn
# someone else spoke in a conversation that person is not in this many. Measured
# on the recall benchmark's conversations; see docs/ARCHITECTURE.md, "Recall".
NEXT_TURN_FROM = 20
NEXT_TURN_WEIGHTS = (0.8, 0.7, 0.5)
SPEAKER_BOOST = 1.2
OTHER_SPEAKER = 0.5
# FTS5 gives a term in more than half the memories an IDF of 1e-6: a BM25 score
# smaller than this in size comes from such terms alone.
NO_WEIGHT = 1e-4
# The most distinct words of one query that are looked up: a pasted page of 100,000
# characters is planned from its first and its last words (where a request usually
# is), as quickly as a sentence.
MAX_TERMS = 48

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
# A run (apart from the text around it) is one term, marks and all: a Thai vowel sign or
# tone mark is not a letter to `re`, and would split its word.
_RUN_OR_TOKEN = re.compile(f"{character_pairs.RUN.pattern}|{_TOKEN.pattern}")


def tokens(text: str) -> list[str]:
    """Terms as the index's tokenizer sees them: letters and digits, folded.

    SQLite's `unicode61 remove_diacritics 2` strips the accents of Latin letters only
    ("café" is "cafe", "phở" is "pho"; Greek "μένει", Cyrillic "й" and "ǿ" keep
    theirs), and drops a combining accent that stands alone, so the same is done here:
    otherwise a Greek or Russian word could never find itself. A run of Chinese, Japanese,
    Korean, Thai, Lao, Khmer or Burmese characters is a term of its own, apart from the
    letters around it, with its vowel signs and tone marks (`character_pairs`).
    """
    folded = fold(text)
    if folded.isascii():
        return _TOKEN.findall(folded)
    plain = "".join(_plain(char) for char in character_pairs.widths_folded(folded))
    return _RUN_OR_TOKEN.findall(character_pairs.runs_apart(plain))


@lru_cache(maxsize=8192)
def _plain(char: str) -> str:
    """A character as the tokenizer keeps it: an accented Latin letter without accents."""
    if _ACCENT_FIRST <= char <= _ACCENT_LAST:
        return ""
    parts = unicodedata.normalize("NFD", char)
    accents = parts[1:]
    if accents and parts[0].isascii() and all(_ACCENT_FIRST <= p <= _ACCENT_LAST for p in accents):
        return parts[0]
    return char


# The block of combining diacritical marks, the accents the tokenizer removes.
_ACCENT_FIRST, _ACCENT_LAST = "\u0300", "\u036f"


def _quote(term: str) -> str:
    """A term as FTS5 query text; a trailing `*` (from `search_form`) stays a prefix, and
    the forms of one word (`fix fixed fixes fixing`) are one group of alternatives. A run
    of Chinese, Japanese or Korean is the phrase of its pairs of characters, as the index
    keeps it, and one such character a prefix (the first of a pair, or a run's last)."""
    if " " in term:
        return "(" + " OR ".join(_quote(form) for form in term.split(" ")) + ")"
    if term.endswith("*"):
        quoted = _quote(term[:-1])
        return quoted if quoted.endswith("*") else quoted + "*"
    if character_pairs.is_run(term):
        grams = '"' + " ".join(character_pairs.pairs(term)) + '"'
        return grams + "*" if len(character_pairs.characters(term)) == 1 else grams
    return '"' + term.replace('"', '""') + '"'


match_term = _quote


def search_form(term: str) -> str:
    """The forms of a word a search looks for (`word_forms.search_form`); a stop word
    stays as it is."""
    return word_forms.search_form(term, STOPWORDS)


def phrase(text: str) -> str | None:
    """An FTS5 phrase that finds every memory that might contain this exact string.

    None when no phrase can promise that, so the caller scans instead. SQLite's
    unicode61 tokenizer strips only Latin diacritics (Cyrillic й and Greek ί keep
    theirs), ends a term at a vowel sign (Devanagari: नमस्ते is `नमस` and `त`) unless
    the index keeps it (Thai), and stores runs as pairs, so outside ASCII its terms can
    differ from the string's and a phrase could miss memories that name the string.
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
    parts = [_quote(t) for t in terms[:-1]] + [_quote(terms[-1] + "*")]
    return " AND ".join(parts)


@dataclass(frozen=True)
class QueryPlan:
    match: str
    by_recency: bool
    terms: tuple[str, ...]
    # About how many memories the MATCH finds (the rarest term for AND, the sum for OR).
    estimate: int = 0


def _or(terms: Sequence[str]) -> str:
    return " OR ".join(_quote(t) for t in terms)


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
    and every word must match. `total` is the number of memories in the vault.
    """
    terms = list(dict.fromkeys(tokens(query)))
    if not terms:
        return None
    is_message = message or sum(map(_words_in, terms)) >= MESSAGE_MIN_WORDS
    if is_message:
        # Any word of a message may recall a memory, and a run of Chinese or Japanese has
        # no spaces to show its words: each of its pairs of characters is a term.
        terms = list(dict.fromkeys(_pairs_apart(terms)))
    words = [t for t in terms if t not in STOPWORDS]
    if not words and is_message:
        return None  # "what is it?" names nothing to recall
    content = list(dict.fromkeys(search_form(t) for t in words or terms))
    if len(content) > MAX_TERMS:
        content = content[: MAX_TERMS // 2] + content[-(MAX_TERMS // 2) :]
    df = frequency(content)
    present = [t for t in content if df.get(t, 0) > 0]
    if not present:
        return None
    by_rarity = sorted(present, key=lambda t: (df[t], t))
    # BM25 gives a term in more than half the memories no weight (FTS5 clamps its IDF
    # to almost nothing), so a query of such terms alone is listed newest first.
    weightless = all(2 * df[t] > total for t in present)
    cheap = total <= RANK_ALL
    if is_message:
        if weightless:
            return _and(by_rarity[:2], df, True)
        if cheap or sum(df[t] for t in present) <= RANK_ALL:
            return QueryPlan(_or(by_rarity), False, tuple(by_rarity), min(total, sum(df.values())))
        # The rarest terms carry the ranking; stop adding terms once their posting lists
        # would make the query slow (so no common term joins a rarer one), but always
        # keep at least one: BM25 then ranks its most recently indexed matches.
        chosen = [by_rarity[0]]
        for term in by_rarity[1:MESSAGE_TERMS]:
            if sum(df[t] for t in chosen) + df[term] > MESSAGE_POSTINGS:
                break
            chosen.append(term)
        return QueryPlan(_or(chosen), False, tuple(chosen), sum(df[t] for t in chosen))
    # A search: every word must match, so the rarest term bounds the matches to rank.
    if weightless or (not cheap and df[by_rarity[0]] > COMMON_POSTINGS):
        return _and(by_rarity, df, True)
    return _and(by_rarity, df, False)


def _words_in(term: str) -> int:
    """How many words a term counts as: a run of Chinese, Japanese or Korean as many as
    its pairs of characters (most of their words are one or two characters long, so a
    run of six or more is a sentence rather than a name); a run of Thai, Lao, Khmer or
    Burmese one for every three pairs of its letters (their words are longer: "ข้าวผัด",
    fried rice, is five letters)."""
    pairs = len(_pairs_of(term))
    return -(-pairs // 3) if character_pairs.is_marked_run(term) else pairs


def _pairs_of(term: str) -> list[str]:
    return character_pairs.pairs(term) if character_pairs.is_run(term) else [term]


def _pairs_apart(terms: Sequence[str]) -> list[str]:
    return [pair for term in terms for pair in _pairs_of(term)]


def leading_terms(query: str) -> list[str]:
    """The words of a message that may name who spoke a turn."""
    return list(dict.fromkeys(t for t in tokens(query) if t not in STOPWORDS))[:MAX_TERMS]


def without_names(plan: QueryPlan, names: Set[str]) -> str | None:
    """The plan's match without the terms that are these names: what a message asks
    about a person. None when nothing else is left."""
    rest = [t for t in plan.terms if not names & set(t.rstrip("*").split(" "))]
    return _or(rest) or None


# A name and a colon: "Ines: …", or as Chinese and Japanese write it, with a full-width
# colon and no space after it ("小明：…").
_SPEAKER = re.compile(r"([^\W\d_][^\W_]*)(?::\s|：)")


def speaker(title: str) -> str | None:
    """Who speaks a turn of a conversation, folded as a query term: "Ines: we moved!" is
    by "ines", "小明：我们搬家了" by "小明". None for a title that does not begin with one
    word and a colon."""
    found = _SPEAKER.match(title)
    return tokens(found[1])[0] if found else None


def longest_first(
    scored: Sequence[tuple[int, float]], sizes: Mapping[int, int]
) -> list[tuple[int, float]]:
    """The ranked matches (rowid, BM25 score: lower is better), those in `sizes` (the
    turns that matched only their speaker's name) given the same scores among themselves
    longest first. BM25 scores such a match by its shortness alone, so small talk ("Ha,
    classic.") would come before what the person told; the other matches keep their
    places and scores."""
    if not sizes:
        return list(scored)
    scores = sorted(score for rowid, score in scored if rowid in sizes)
    longest = sorted((rowid for rowid, _ in scored if rowid in sizes), key=lambda r: -sizes[r])
    given = dict(zip(longest, scores, strict=True))
    return sorted(
        ((rowid, given.get(rowid, score)) for rowid, score in scored), key=lambda pair: pair[1]
    )


def with_next_turns(
    scored: Sequence[tuple[int, float]],
    following: Mapping[int, Sequence[int]],
    leading: Set[int] = frozenset(),
    elsewhere: Set[int] = frozenset(),
) -> list[int]:
    """The ranked matches (rowid, BM25 score: lower is better) with the memories that
    followed them, best first. A match spoken by someone else in a conversation the
    person the message names is not in (`elsewhere`) scores `OTHER_SPEAKER` times its
    BM25 score; each following memory gains its weight's share of that score, added to
    its own; and a match spoken by the person named (`leading`) then scores
    `SPEAKER_BOOST` times its own."""
    own = {
        rowid: -score * (OTHER_SPEAKER if rowid in elsewhere else 1.0) for rowid, score in scored
    }
    relevance = {
        rowid: value * (SPEAKER_BOOST if rowid in leading else 1.0) for rowid, value in own.items()
    }
    for rowid, value in own.items():
        for weight, nxt in zip(NEXT_TURN_WEIGHTS, following.get(rowid, ()), strict=False):
            relevance[nxt] = relevance.get(nxt, 0.0) + weight * value
    return sorted(relevance, key=lambda rowid: -relevance[rowid])
