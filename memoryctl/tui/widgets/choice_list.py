"""A list of choices whose cursor stops at its ends and whose rows are named by id.

Textual's OptionList wraps from the last row to the first, which reads as a jump to
the top; and a screen that remembers its cursor by position lands on another row when a
refresh adds or removes one above it. Every list a person acts on names its rows by id.
"""

from __future__ import annotations

from typing import Literal

from textual._widget_navigation import find_next_enabled_no_wrap
from textual.widgets import OptionList
from textual.widgets.option_list import OptionDoesNotExist


class ChoiceList(OptionList):
    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_cursor_down(self) -> None:
        self._step(1)

    def _step(self, direction: Literal[-1, 1]) -> None:
        found = find_next_enabled_no_wrap(self.options, self.highlighted, direction)
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
