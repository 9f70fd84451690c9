"""Common words: a deprecated string that is one of these names no particular thing.

An agent over MCP may not deprecate one at all, whatever it would reach today: "the",
"repo" or "meeting" in a `deprecates` list would put a `now:` line beneath most of a
vault tomorrow. The list is the search's stopwords, the most frequent English words,
and the words of everyday work with code and people. A person can still deprecate any
of them with `memoryctl correct`, behind the guard.
"""

from __future__ import annotations

from memoryctl.search_query import STOPWORDS

_WORDS = """
    able across actually add added after afternoon again ago agree ahead almost alone
    along already although always among another answer anyone anything anyway anywhere
    around ask asked away back bad best better big bit book both bring build built busy
    call called came car care case cause change changed check child city clear close
    come comes coming company could course cut date day days dear decide different done
    door during early easy else end enough even evening ever every everyone everything
    example face fact family far fast feel felt file files find fine first fix follow
    food found free friend friends full fun gave give given go goes going gone good great
    group guess hand happen happened hard head hear heard help high hold home hope hour
    hours house idea ideas important inside instead issue issues item job keep kind knew
    last late later least leave left less life like likes line list little live long look
    looking lot lots love made make makes making man many matter maybe mean means meet
    meeting meetings message might mind minute minutes miss moment money month months
    morning move moved much must name names near never new news next nice night nothing
    number office often okay old once one open order part people person place plan plans
    point possible pretty probably problem problems put question questions quite rather
    read ready real really reason right room run running said same saw say says school
    second see seem seems seen send sent set several short show side since small someone
    something sometimes soon sorry sort start started still stop story sure take taken
    talk team thing things though thought three time times today together told tomorrow
    took top toward try trying turn two understand update upon use used using usually
    wait walk way week weeks well went whole wife will without woman word words work
    worked working world write wrong year years yes yesterday yet young
    account admin agent agents api app apps backlog bug bugs branch build builds chat
    ci client code commit commits config customer customers dashboard data database
    deadline deploy deployment design dev doc docs draft email emails error errors feature
    features feedback folder github link links log logs main manager merge note notes
    page pages password pr project projects release releases repo repos repository
    review script server service services settings slack spec sprint staging status
    task tasks test tests ticket tickets tool tools user users version
"""
COMMON_WORDS = frozenset(_WORDS.split()) | STOPWORDS


def is_common_word(needle: str) -> bool:
    """A string that is one common word, whatever its case or surrounding spaces."""
    word = needle.strip().casefold()
    return word.isalpha() and word in COMMON_WORDS
