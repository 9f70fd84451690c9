"""The footer of every screen: the keys a person can press now, drawn as one line.

Textual's footer is a container holding a widget per key, removed and mounted again
whenever the screen's bindings are signalled (each change of focus, each
`refresh_bindings`). Styling and laying out those widgets was most of a screen's first
paint and of opening a memory (bench/tui_bench.py). This footer is one widget: it reads
the same bindings, looks the same (the same theme variables, the command palette's key
on the right), and draws again only when the keys it shows change. A key is pressed by
a click, and its tooltip shows on hover, as on Textual's footer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.color import Color
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget


@dataclass(frozen=True)
class FooterItem:
    """One key as the footer shows it."""

    key: str  # what pressing it sends
    display: str  # how the key reads ("⏎", "^q")
    description: str
    enabled: bool
    tooltip: str
    kept: bool = False  # shown however narrow the terminal (the key that shows the others)


# The key a narrow footer keeps when it leaves others out: the help lists every key.
KEPT = "memoryctl.help"


def fitting(widths: list[int], kept: list[bool], room: int) -> list[int]:
    """Which keys the footer draws, by position, when they are this wide and it has this
    much room: whole keys, in their order, up to the first that no longer fits, and the
    kept ones wherever they stand. A key is never cut, and the help key always shows."""
    left = room - sum(width for width, keep in zip(widths, kept, strict=True) if keep)
    drawn: list[int] = []
    full = False
    for at, (width, keep) in enumerate(zip(widths, kept, strict=True)):
        if keep:
            drawn.append(at)
        elif not full and width <= left:
            drawn.append(at)
            left -= width
        else:
            full = True
    return drawn


def shown_keys(screen: Screen) -> tuple[FooterItem, ...]:
    """The keys the footer shows for the screen, in order: one per action, as Textual's
    footer shows them (the command palette's key is `palette_key`)."""
    items: dict[str, FooterItem] = {}
    for _, binding, enabled, tooltip in screen.active_bindings.values():
        if binding.show and binding.action not in items:
            items[binding.action] = FooterItem(
                binding.key,
                screen.app.get_key_display(binding),
                binding.description,
                enabled,
                tooltip,
                kept=binding.id == KEPT,
            )
    return tuple(items.values())


def palette_key(screen: Screen) -> FooterItem | None:
    app = screen.app
    if not app.ENABLE_COMMAND_PALETTE:
        return None
    found = screen.active_bindings.get(app.COMMAND_PALETTE_BINDING)
    if found is None:
        return None
    _, binding, enabled, _ = found
    return FooterItem(
        binding.key,
        app.get_key_display(binding),
        binding.description,
        enabled,
        binding.tooltip or binding.description,
    )


class KeysFooter(Widget, can_focus=False):
    ALLOW_SELECT = False
    DEFAULT_CSS = """
    KeysFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .keys-footer--item { background: $footer-item-background; }
        & > .keys-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .keys-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .keys-footer--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        & > .keys-footer--edge { color: $foreground 20%; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keys-footer--item",
        "keys-footer--key",
        "keys-footer--description",
        "keys-footer--hover",
        "keys-footer--edge",
    }

    def __init__(self) -> None:
        super().__init__()
        self._keys: tuple[FooterItem, ...] = ()
        self._palette: FooterItem | None = None
        self._spans: list[tuple[int, int, FooterItem]] = []  # x from, x to, key
        self._hover: FooterItem | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def bindings_changed(self, screen: Screen) -> None:
        if not screen.app.app_focus or screen is not self.screen:
            return
        keys, palette = shown_keys(screen), palette_key(screen)
        if (keys, palette) != (self._keys, self._palette):
            self._keys, self._palette = keys, palette
            self._hover = None
            self.refresh()

    # --- drawing ------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def _item(self, item: FooterItem, key_pad: str, widget: Style) -> list[Segment]:
        """A key and its words, as Textual's footer draws one (`key_pad` around the key),
        over the footer's own style (`widget`, worked out once a line)."""
        base = widget + self._style("keys-footer--item")
        if item is self._hover:
            base += self._style("keys-footer--hover")
        dim = Style(dim=True) if not item.enabled else Style()
        key_style = base + self._style("keys-footer--key") + dim
        key = Segment(f"{key_pad}{item.display}{key_pad}", key_style)
        if not item.description:
            return [key]
        words = f"{item.description} " if key_pad else f" {item.description}"
        return [key, Segment(words, base + self._style("keys-footer--description") + dim)]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        right: list[Segment] = []
        if self._palette is not None:
            background = Color.from_rich_color(base.bgcolor)
            edge = background + self.get_component_styles("keys-footer--edge").color
            right = [
                Segment("▏", Style(color=edge.rich_color, bgcolor=base.bgcolor)),
                *self._item(self._palette, "", base),
                # Textual pads the key with its background only: no colour of its own.
                Segment(" ", Style(bgcolor=(base + self._style("keys-footer--item")).bgcolor)),
            ]
        room = max(width - sum(cell_len(s.text) for s in right), 0)
        segments: list[Segment] = []
        self._spans = []
        drawn = [self._item(item, " ", base) for item in self._keys]
        widths = [sum(cell_len(s.text) for s in one) for one in drawn]
        x = 0
        for at in fitting(widths, [item.kept for item in self._keys], room):
            self._spans.append((x, x + widths[at], self._keys[at]))
            segments += drawn[at]
            x += widths[at]
        left = Strip(segments).crop_extend(0, room, Style(bgcolor=base.bgcolor))
        if self._palette is not None:
            self._spans.append((room, width, self._palette))
        return Strip.join([left, Strip(right)]).crop(0, width)

    # --- the mouse ----------------------------------------------------------------------

    def _key_at(self, x: int) -> FooterItem | None:
        return next((item for start, end, item in self._spans if start <= x < end), None)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        item = self._key_at(event.x)
        if item is not self._hover:
            self._hover = item
            self.tooltip = item.tooltip if item is not None and item.tooltip else None
            self.refresh()

    def on_leave(self) -> None:
        if self._hover is not None:
            self._hover = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        item = self._key_at(event.x)
        if item is None:
            return
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()
