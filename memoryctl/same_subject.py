"""What a sentence states something of: the weak sign that two memories are about one
thing.

"My working hours are now 08:00 to 16:00" and "... My working hours are 09:30 to
17:30 ..." both state what "working hours" are. A sentence's subject is the words
before its copula (is, are, was, were, 's, 're and their negations), folded, with
leading possessives and articles (my, our, the, a ...) and change words (now,
currently, still, no longer ...) dropped. A pronoun (I, we, it, this, that, they,
you ...) or one letter is no subject, and neither is a clause (a subject that opens
with if, when, because ...) or a run of more than five words.

A participle or "due" right after the copula is part of what is said, not of the value:
"Project Alpha is due in March" and "Project Alpha is written in Rust" state two
different things of Project Alpha, so they do not share a statement; "... is due in
April" shares one with the first.

English only: the copula, the articles and the pronouns are English words, and other
languages mark a subject otherwise. Pure functions: no index, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memoryctl.memory import normalized


def words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


COPULAS = {
    "is": "is",
    "are": "are",
    "was": "is",
    "were": "are",
    "isn't": "is",
    "aren't": "are",
    "wasn't": "is",
    "weren't": "are",
}
# A word ending in one of these is a copula only when no plain one follows in the
# sentence: "My name's Ada", but "Ada's bike is red".
CONTRACTED = {"'s": "is", "'re": "are"}
LEADING = words_of("my our your his her their its the a an this that these those")
CHANGE_WORDS = words_of("now currently still already no longer anymore actually presently today")
# Words that only say when a statement holds, dropped from what it says: "are now 9 to
# 5" says what "are 9 to 5" says. ("no longer" and "not" stay: they reverse it.)
WHEN_WORDS = words_of("now currently presently actually")
NO_SUBJECT = words_of(
    "i we it this that they you he she there here what which who these those one "
    "everything something nothing anything all both each"
)
CLAUSES = words_of(
    "if when whenever because although though while whether since unless until once "
    "before after so and but or as where how why then also"
)
PARTICIPLE_WORDS = words_of(
    "due written built made run kept held set done gone known based going seen "
    "taken given paid owned hosted"
)
MAX_SUBJECT_WORDS = 5

_SENTENCES = re.compile(r"(?<=[.!?;:])\s+|\n+")
_WORDS = re.compile(r"[\w'’-]+")
# Every sentence with a copula has one of these; most sentences have none, and this
# search costs a tenth of splitting one into words.
_MAYBE_COPULA = re.compile(r"\b(?:is|are|was|were)(?:n['’]t)?\b|['’](?:s|re)(?!\w)")


@dataclass(frozen=True)
class Statement:
    """One sentence's claim about a subject: `key` is what two statements must share."""

    subject: str  # the subject's words, folded, as a person reads them: "working hours"
    verb: str  # "is" or "are", for the wording of a line
    predicate: str  # a participle that names what is said ("due"), or ""
    rest: str  # everything after the copula, folded: what the sentence says of it

    @property
    def key(self) -> tuple[str, str]:
        return (self.subject, self.predicate)


@lru_cache(maxsize=4096)
def statements(text: str) -> tuple[Statement, ...]:
    """The statements of a text, one at most per sentence, in order. Remembered: the
    bundle asks of the same pins on every message."""
    found = []
    for sentence in _SENTENCES.split(text):
        statement = sentence_statement(sentence)
        if statement is not None:
            found.append(statement)
    return tuple(found)


def sentence_statement(sentence: str) -> Statement | None:
    text = normalized(sentence)
    return _statement(text) if _MAYBE_COPULA.search(text) else None


def _statement(text: str) -> Statement | None:
    """`sentence_statement` of a folded sentence, looked for word by word."""
    words = [w.replace("’", "'").strip("'-") for w in _WORDS.findall(text)]
    words = [w for w in words if w]
    at = _copula_at(words)
    if at is None:
        return None
    word = words[at]
    if word in COPULAS:
        subject_words, verb = words[:at], COPULAS[word]
    else:
        suffix = word[-2:]
        subject_words, verb = [*words[:at], word[:-2]], CONTRACTED[suffix]
    subject = _subject(subject_words)
    if subject is None:
        return None
    said = [w for w in words[at + 1 :] if w not in WHEN_WORDS]
    after = [w for w in said if w != "not"]
    predicate = after[0] if after and _is_participle(after[0]) else ""
    return Statement(" ".join(subject), verb, predicate, " ".join(said))


def _copula_at(words: list[str]) -> int | None:
    plain = next((i for i, w in enumerate(words) if w in COPULAS), None)
    if plain is not None:
        return plain
    return next(
        (i for i, w in enumerate(words) if len(w) > 3 and w[-2:] in CONTRACTED),
        None,
    )


def _subject(words: list[str]) -> list[str] | None:
    while words and (words[0] in LEADING or words[0] in CHANGE_WORDS):
        words = words[1:]
    words = [w for w in words if w not in CHANGE_WORDS]
    if not words or len(words) > MAX_SUBJECT_WORDS or words[0] in CLAUSES:
        return None
    if len(words) == 1 and (words[0] in NO_SUBJECT or len(words[0]) == 1):
        return None
    if all(w in NO_SUBJECT or w in LEADING for w in words):
        return None
    return words


def _is_participle(word: str) -> bool:
    return word in PARTICIPLE_WORDS or (
        len(word) > 4 and word.isalpha() and word.endswith(("ed", "ing"))
    )
