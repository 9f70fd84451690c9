"""Expiry: a memory whose `expires` has passed (a plan for last Friday) proposes its
own retirement. It is not retired until the person approves.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from memoryctl.memory import Memory
from memoryctl.moments import iso
from memoryctl.proposals import Suggestion


def expiry_suggestions(memories: Iterable[Memory], now: dt.datetime) -> list[Suggestion]:
    """A retirement for every memory, not already retired, whose `expires` is `now` or
    earlier. The expiry date is the trigger: a memory whose date is moved is proposed
    again when the new date passes, even if the old proposal was declined."""
    moment = iso(now)
    found = []
    for memory in memories:
        if memory.broken or memory.status == "retired" or not memory.expires:
            continue
        if memory.expires <= moment:
            found.append(
                Suggestion(
                    action="retire",
                    targets=(memory.id,),
                    reason=f"{memory.kind} expired on {memory.expires[:10]}",
                    origin="expiry",
                    ref=memory.id,
                    trigger=memory.expires,
                )
            )
    return sorted(found, key=lambda s: s.targets)
