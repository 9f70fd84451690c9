"""What a bundle held out and why: each memory's title on a row of its own (cut to the
width), its reason beneath it in full. A bundle may hold out dozens, and a new message
brings a new list: only the entries in view are drawn, a line at a time."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

if TYPE_CHECKING:
    from memoryctl.bundle import Excluded

NOTHING = Content.styled("Nothing was held out.", "$text-muted")


def held_entry(excluded: Excluded, width: int = 0) -> Content:
    """One memory held out: its title cut to `width` (0: not cut), its reason beneath."""
    title = Content(excluded.title)
    if width:
        title = title.truncate(width, ellipsis=True)
    return Content.assemble(title, (f"\n  {excluded.reason}", "$text-muted"))


def held_content(excluded: Sequence[Excluded], width: int = 0) -> Content:
    """The whole list as one text, as the screen draws it."""
    if not excluded:
        return NOTHING
    return Content("\n").join(held_entry(x, width) for x in excluded)


class HeldOut(Widget):
    DEFAULT_CSS = "HeldOut { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.excluded: Sequence[Excluded] | None = None  # None: no bundle yet
        self._width = -1  # the width `_entries` and `_starts` were worked out for
        self._entries: list[Content] = []
        self._starts: list[int] = []  # the first line of each entry
        self._height = 0
        self._drawn: dict[int, list[Strip]] = {}  # entry -> its lines, as drawn
        self._reason_heights: dict[tuple[str, int], int] = {}

    def show(self, excluded: Sequence[Excluded]) -> None:
        if excluded == self.excluded:
            return
        self.excluded = excluded
        before = self._height
        self._width = -1
        self._lay_out(self.content_size.width)
        # As tall as before (as many held out, for reasons as long), it is only painted
        # again where it was: the screen needs no new layout.
        self.refresh(layout=self._height != before or not self.content_size)

    @property
    def text(self) -> str:
        """The list as it reads, each entry cut to the widget's width."""
        if self.excluded is None:
            return ""
        return held_content(self.excluded, self.content_size.width).plain

    def _lay_out(self, width: int) -> None:
        if width == self._width:
            return
        self._width = width
        self._drawn.clear()
        excluded = self.excluded or ()
        self._entries = [held_entry(x, width) for x in excluded] or [NOTHING]
        self._starts = [0]
        for x in excluded:
            self._starts.append(self._starts[-1] + 1 + self._reason_height(x.reason, width))
        self._height = self._starts.pop() if excluded else int(self.excluded is not None)

    def _reason_height(self, reason: str, width: int) -> int:
        key = (reason, width)
        if key not in self._reason_heights:
            line = Content(f"  {reason}")
            self._reason_heights[key] = line.get_height(self.styles, width) if width else 1
        return self._reason_heights[key]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._lay_out(width)
        return self._height

    def on_resize(self) -> None:
        self._lay_out(self.content_size.width)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        self._lay_out(width)
        index = bisect_right(self._starts, y) - 1
        if index < 0 or y >= self._height:
            return Strip.blank(width, self.visual_style.rich_style)
        lines = self._drawn.get(index)
        if lines is None:
            entry = self._entries[index]
            lines = Visual.to_strips(self, entry, width, None, self.visual_style)
            self._drawn[index] = lines
        offset = y - self._starts[index]
        if offset >= len(lines):
            return Strip.blank(width, self.visual_style.rich_style)
        return lines[offset]
