"""A list of choices whose cursor stops at its ends and whose rows are named by id.

Textual's OptionList wraps from the last row to the first, which reads as a jump to
the top; and a screen that remembers its cursor by position lands on another row when a
refresh adds or removes one above it. Every list a person acts on names its rows by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from textual.widgets import OptionList
from textual.widgets.option_list import OptionDoesNotExist


class ChoiceList(OptionList):
    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_cursor_down(self) -> None:
        self._step(1)

    def _step(self, direction: Literal[-1, 1]) -> None:
        found = next_enabled([o.disabled for o in self.options], self.highlighted, direction)
        if found is not None:
            self.highlighted = found

    @property
    def highlighted_id(self) -> str | None:
        """The id of the row under the cursor."""
        if self.highlighted is None or self.highlighted >= self.option_count:
            return None
        return self.get_option_at_index(self.highlighted).id

    def highlight_id(self, option_id: str | None) -> bool:
        """Put the cursor on the row with this id; False when there is none."""
        if option_id is None:
            return False
        try:
            self.highlighted = self.get_option_index(option_id)
        except OptionDoesNotExist:
            return False
        return True


def next_enabled(disabled: Sequence[bool], at: int | None, direction: Literal[-1, 1]) -> int | None:
    """The next row that is not disabled, from `at` in `direction`, without wrapping
    (from nowhere: the first, or the last); None when there is none."""
    rows = range(len(disabled)) if direction == 1 else range(len(disabled) - 1, -1, -1)
    if at is not None:
        at = min(at, len(disabled))
        rows = range(at + 1, len(disabled)) if direction == 1 else range(at - 1, -1, -1)
    return next((row for row in rows if not disabled[row]), None)
