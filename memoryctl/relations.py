"""Who "my sister" is: the people a vault names by how they relate to its owner.

A person asks about "my sister" or "my partner's car"; the chats name Ines and Felix,
and so do the notes that say who they are ("Ines is my older sister", "my brother
Marek"). A message's relations are looked up in the vault's own words, and the name a
note gives each one joins the message, so the memories that name the person (and the
turns they spoke) are recalled as if the message had named them.

Pure functions: the index finds the newest memories that say "my" and the relation's
words, and passes their text here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Set

from memoryctl.matching import fold

# The most words of one relation ("my climbing partner", "my best friend"), and of one
# name ("Oma Rut").
MOST_WORDS = 2
NAME_WORDS = 2
# The most relations of one message that are looked up: a pasted page that says "my"
# a thousand times costs what a sentence does.
MOST_RELATIONS = 3
_TOKEN = re.compile(r"[^\W\d_]+|[^\w\s]")
_MY = re.compile(r"\bmy\s+([^\W\d_]+)(?:\s+([^\W\d_]+))?", re.IGNORECASE)


def asked(message: str, stopwords: Set[str]) -> list[tuple[str, ...]]:
    """The relations a message asks about, the longest wording first: "my best friend's
    teacher" asks about ("best", "friend") or else ("best",)."""
    found: list[tuple[str, ...]] = []
    for first, second in _MY.findall(fold(message)):
        if first in stopwords:
            continue
        words = (first, second) if second and second not in stopwords else (first,)
        for size in range(min(len(words), MOST_WORDS), 0, -1):
            if words[:size] not in found:
                found.append(words[:size])
    return found[: 2 * MOST_RELATIONS]


def stated(text: str, stopwords: Set[str]) -> list[tuple[tuple[str, ...], str]]:
    """The (relation, name) pairs a memory states: "Ines is my older sister; ..." states
    (("older", "sister"), "Ines"), and "my brother Marek" (("brother",), "Marek"). A
    relation is the words after "my" up to a stop word or a mark; a name, the words
    with a capital right before "is my", "was my" or ", my", or right after the
    relation."""
    words = _TOKEN.findall(text)
    pairs = []
    for at, word in enumerate(words):
        if word.casefold() != "my":
            continue
        relation = _relation(words[at + 1 : at + 2 + MOST_WORDS], stopwords)
        if not relation:
            continue
        before = words[max(0, at - 1 - NAME_WORDS) : at]
        if before and (before[-1].casefold() in ("is", "was") or before[-1] == ","):
            name = _capitals(before[:-1][::-1])[::-1]
            if name:
                pairs.append((relation, " ".join(name)))
        after = words[at + 1 + len(relation) :]
        if after and after[0] == ",":
            after = after[1:]
        name = _capitals(after)
        if name:
            pairs.append((relation, " ".join(name)))
    return pairs


def _relation(words: list[str], stopwords: Set[str]) -> tuple[str, ...]:
    """The relation's words among these (the caller hands at most `MOST_WORDS + 1`)."""
    kept: list[str] = []
    for word in words:
        folded = fold(word)
        if not word[0].isalpha() or word[0].isupper() or folded in stopwords:
            break
        kept.append(folded)
    return tuple(kept)


def _capitals(words: list[str]) -> list[str]:
    """The leading words that begin with a capital (and are not all capitals, as "OK"
    is), at most a name's length."""
    kept: list[str] = []
    for word in words[:NAME_WORDS]:
        if not word[0].isupper() or (len(word) > 1 and word.isupper()):
            break
        kept.append(word)
    return kept


def named(relation: tuple[str, ...], texts: Iterable[str], stopwords: Set[str]) -> str | None:
    """The name these memories give the relation: a statement of exactly it ("Felix is my
    partner") before one with a word more in front ("Priya is my climbing partner" for
    "my partner", "Ines is my older sister" for "my sister"). The name stated most often
    wins; None when no statement names it, or two names are stated as often."""
    exact: Counter[str] = Counter()
    loose: Counter[str] = Counter()
    for text in texts:
        for words, name in stated(text, stopwords):
            if words == relation:
                exact[name] += 1
            elif len(words) == len(relation) + 1 and words[1:] == relation:
                loose[name] += 1
    for counts in (exact, loose):
        ranked = counts.most_common(2)
        if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
            return ranked[0][0]
    return None
