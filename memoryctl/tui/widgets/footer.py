"""The footer of every screen: Textual's, rebuilt only when the keys it shows change.

Textual's footer removes and mounts every key whenever the screen's bindings are
signalled, which happens on each change of focus and each `refresh_bindings`. Opening a
memory signals several times, and the rebuilds cost more than the rest of the screen
(measured in bench/tui_bench.py). The keys shown are the same almost every time.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


def shown_keys(screen: Screen) -> tuple[tuple[object, ...], ...]:
    """What the footer would show for the screen: each shown binding and whether it is enabled."""
    return tuple(
        (binding.key, binding.description, binding.action, enabled, tooltip)
        for (_, binding, enabled, tooltip) in screen.active_bindings.values()
        if binding.show or binding.action == "app.command_palette"
    )


class KeysFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[tuple[object, ...], ...] | None = None

    def compose(self) -> ComposeResult:
        # A key starts compact and is then bound to the footer's (not compact) look, so
        # each key was styled twice more as it mounted: a sixth of a screen's first paint.
        # Each bound key starts as the footer is (the palette's key is not bound to it).
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, self.compact)
            yield widget

    def bindings_changed(self, screen: Screen) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            keys = shown_keys(screen)
            if keys == self._shown:
                return
            self._shown = keys
        super().bindings_changed(screen)
