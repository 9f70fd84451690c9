"""What the server answered lately, given again while nothing it was made from changed.

Agents ask the same things again and again: every turn's `get_context` carries the same
pins, several agents share a profile, an agent recalls the same name twice in a task.
A read's answer (`get_context`, `recall`, `pins`) is made from nothing but the index,
the settings, the caller's profile, the tool's arguments and the pending proposals it
asked about, so it is remembered with each of those:

- the index's generation (`Index.generation`), which any commit to the index changes,
  from this process or another: a sync, an agent's write, `reindex --full`;
- the settings object itself, which the server replaces when `memoryctl.toml` changes;
- the profile and the arguments, in the key: an answer is never given to another profile;
- the pending proposals it was told about, asked again (a few `stat` calls) before it is
  given again, so a proposal filed or decided since is never missed.

A repeated call then costs the transport and a lookup instead of a search and a bundle.
The server gives a remembered answer on its event loop (`remembered`), without the hop
to a worker thread that making one needs; under twenty agents at once that hop, and the
worker threads' turns at the interpreter, cost more than the lookup itself.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from memoryctl.context import pending_about
from memoryctl.proposals import Proposal
from memoryctl.storage.config import VaultConfig
from memoryctl.storage.vault import Vault

T = TypeVar("T")


class PendingAsked:
    """The pending proposals a read asked about, and what it was told, to ask again."""

    def __init__(self, pending: Callable[[Iterable[str]], Sequence[Proposal]]) -> None:
        self.pending = pending
        self.asked: list[tuple[tuple[str, ...], tuple[Proposal, ...]]] = []

    def __call__(self, ids: Iterable[str]) -> Sequence[Proposal]:
        ids = tuple(ids)
        found = tuple(self.pending(ids))
        self.asked.append((ids, found))
        return found

    def still_told(self) -> bool:
        """Whether asking again gives the same proposals for every question asked."""
        return all(tuple(self.pending(ids)) == found for ids, found in self.asked)


@dataclass(frozen=True)
class _Answer(Generic[T]):
    config: VaultConfig
    asked: PendingAsked
    value: T


class RecentAnswers(Generic[T]):
    """The answers of one generation of the index, up to `MAX`, the oldest used
    forgotten first. Safe to ask from the server's worker threads at once."""

    MAX = 512

    def __init__(self) -> None:
        self._generation: int | None = None
        self._answers: OrderedDict[Hashable, _Answer[T]] = OrderedDict()
        self._lock = threading.Lock()

    def remembered(self, vault: Vault, key: Hashable) -> T | None:
        """The answer for `key` if one is remembered and still holds, else None; for the
        server's event loop, so it costs no more than a few `stat` calls: while the
        pending proposals' listing is out of date (a proposal filed or decided since),
        it answers None and leaves the asking again to `answer`."""
        if not pending_about(vault).is_current():
            return None
        return self._hit(vault, vault.index.generation(), key)

    def answer(
        self,
        vault: Vault,
        key: Hashable,
        make: Callable[[PendingAsked], T],
    ) -> T:
        """The answer for `key`: remembered, or made by `make`, which asks about the
        pending proposals only through the callable it is given."""
        # Read before the answer is made: a commit while it is made leaves it under a
        # generation that has passed, where no later call finds it.
        generation = vault.index.generation()
        hit = self._hit(vault, generation, key)
        if hit is not None:
            return hit
        config = vault.config
        asked = PendingAsked(pending_about(vault))
        value = make(asked)
        with self._lock:
            if generation == self._generation:
                self._answers[key] = _Answer(config, asked, value)
                self._answers.move_to_end(key)
                while len(self._answers) > self.MAX:
                    self._answers.popitem(last=False)
        return value

    def _hit(self, vault: Vault, generation: int, key: Hashable) -> T | None:
        with self._lock:
            if generation != self._generation:
                self._answers.clear()
                self._generation = generation
            hit = self._answers.get(key)
        if hit is None or hit.config is not vault.config or not hit.asked.still_told():
            return None
        with self._lock:
            if key in self._answers:
                self._answers.move_to_end(key)
        return hit.value
