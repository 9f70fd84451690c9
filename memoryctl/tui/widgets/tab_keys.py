"""Keys that switch the tabs of a screen, and the focus that goes with them.

A tab bar with the focus takes the arrow keys for itself; a person who arrives on a
screen expects them to move in its list. So a tab switched to, by a key or by a click,
hands the focus to the first thing in it that takes focus.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import TabbedContent, Tabs

TAB_KEYS = [
    Binding(
        "right_square_bracket,ctrl+pagedown",
        "step_tab(1)",
        "Next tab",
        id="memoryctl.tabs.next",
        tooltip="Show the next tab (also ctrl+pgdn)",
    ),
    Binding(
        "left_square_bracket,ctrl+pageup",
        "step_tab(-1)",
        "Prev tab",
        id="memoryctl.tabs.previous",
        tooltip="Show the previous tab (also ctrl+pgup)",
    ),
]


def step_tab(tabs: TabbedContent, step: int) -> None:
    """Show the next (or previous) tab, wrapping around. The tab bar moves itself, as for
    its own keys, so the panes follow it as they do a click; the screen's handler of
    `TabbedContent.TabActivated` then calls `focus_in_tab`."""
    bar = tabs.query_one(Tabs)
    bar.action_next_tab() if step > 0 else bar.action_previous_tab()


def focus_in_tab(tabs: TabbedContent) -> None:
    """Give the focus to the first widget of the shown tab that takes it, unless the
    focus is already inside that tab."""
    pane = tabs.active_pane
    if pane is None:
        return
    focused = tabs.screen.focused
    if focused is not None and focused is not pane and pane in focused.ancestors:
        return
    target = next((w for w in pane.query("*") if w.focusable), None)
    if target is not None:
        target.focus()


def tab_bar_has_focus(tabs: TabbedContent) -> bool:
    focused = tabs.screen.focused
    return focused is None or isinstance(focused, Tabs)
