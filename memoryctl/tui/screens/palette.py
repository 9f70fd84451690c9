"""The command palette (ctrl+p): every action of the screen in front, every screen, and
any memory by its title, searched in the index as the person types.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from memoryctl.tui.keys import bound_actions

if TYPE_CHECKING:
    from memoryctl.tui.app import MemoryApp

MEMORY_HITS = 12


class ActionCommands(Provider):
    """The actions behind the keys of the app and of the screen the palette opened over."""

    def _actions(self) -> list[tuple[str, str, partial[object]]]:
        app = self.app
        return [
            (binding.description, binding.tooltip, command)
            for binding, command in bound_actions(app, self.screen)
        ]

    async def discover(self) -> Hits:
        for text, help_text, command in self._actions():
            yield DiscoveryHit(text, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, help_text, command in self._actions():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), command, help=help_text)


class MemoryCommands(Provider):
    """Jump to a memory by title: the index answers, a dozen rows at a time."""

    async def search(self, query: str) -> Hits:
        app: MemoryApp = self.app  # type: ignore[assignment]
        if not query.strip():
            return
        from memoryctl.tui.screens.base import opened_index

        def find() -> list[tuple[str, str]]:
            index = opened_index(app.vault)
            return [(m.id, m.title) for m in index.list(text=query, limit=MEMORY_HITS)]

        try:
            found = await asyncio.to_thread(find)
        except Exception:
            return  # a half-typed query FTS cannot read: no hits rather than an error
        matcher = self.matcher(query)
        for mid, title in found:
            score = max(matcher.match(title), 0.1)
            yield Hit(
                score,
                matcher.highlight(f"Open: {title}"),
                partial(app.open_memory, mid),
                help=f"memory {mid}",
            )
