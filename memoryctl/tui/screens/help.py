"""The keys, with what each does: the app's and those of the screen beneath where its
focus is; in front of a dialog, the dialog's. One row a key, the binding that acts. A key
that does nothing now (nothing to undo, no filter to clear) is listed apart, under "Off
now", with why, as pressing it says. A key the text box with the focus types is no key
there: it is named apart, not listed as doing what it does elsewhere.

Three columns: the keys, the action's name as the footer shows it, and what it does.
A long explanation wraps inside its own column, and the list scrolls when it is taller
than the terminal, so every key can be read at 80x24.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

GAP = 2


def help_rows(keys_of: list[tuple[Binding, str, str]]) -> list[tuple[str, str, str]]:
    """(keys, name, what) for each action, from each binding, how its key is shown and
    what to say of it. Keys bound to the same action with the same name share a row
    ("f1 / ?")."""
    rows: dict[tuple[str, str], tuple[list[str], str]] = {}
    for binding, shown, what in keys_of:
        keys, _ = rows.setdefault((binding.action, binding.description), ([], what))
        if shown not in keys:
            keys.append(shown)
    return [(" / ".join(keys), name, what) for (_, name), (keys, what) in rows.items()]


class HelpScreen(ModalScreen[None]):
    """The keys of the app and of the screen beneath, one row an action."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            height: auto;
            max-width: 95%;
            max-height: 95%;
            border: thick $primary;
            border-title-align: center;
            background: $surface;
            padding: 1 2;
        }
        .help-row { height: auto; }
        .help-keys { text-align: right; text-style: bold; color: $text-accent; }
        .help-what { width: 1fr; color: $text-muted; }
        .help-typed { margin: 1 0 0 0; color: $text-muted; }
        .help-heading { margin: 1 0 0 0; text-style: bold; color: $text-muted; }
        .-off .help-keys, .-off .help-name { color: $text-muted; text-style: none; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,f1,question_mark,q",
            "dismiss",
            "Close",
            id="memoryctl.help.close",
            tooltip="Close the help",
        ),
    ]

    def __init__(
        self,
        bindings: list[Binding],
        typed: list[Binding] | None = None,
        off: list[tuple[Binding, str]] | None = None,
    ) -> None:
        super().__init__()
        self.help_bindings = bindings
        self.typed_bindings = typed or []
        self.off_bindings = off or []

    @property
    def typed_note(self) -> str:
        """The keys left out because the text box with the focus types them, named."""
        keys: list[str] = []
        for binding in self.typed_bindings:
            shown = self.app.get_key_display(binding)
            if shown not in keys:
                keys.append(shown)
        if not keys:
            return ""
        these = "this key types" if len(keys) == 1 else "these keys type"
        return f"In the text box with the focus, {these}: {' '.join(keys)}"

    @property
    def rows(self) -> list[tuple[str, str, str]]:
        shown = self.app.get_key_display
        return help_rows([(b, shown(b), b.tooltip) for b in self.help_bindings])

    @property
    def off_rows(self) -> list[tuple[str, str, str]]:
        """The keys that do nothing now, each with why in place of what it does."""
        shown = self.app.get_key_display
        return help_rows([(b, shown(b), why or b.tooltip) for b, why in self.off_bindings])

    def compose(self) -> ComposeResult:
        rows, off_rows = self.rows, self.off_rows
        every = rows + off_rows
        keys_width = max((len(keys) for keys, _, _ in every), default=0)
        name_width = max((len(name) for _, name, _ in every), default=0) + GAP
        what_width = max((len(what) for _, _, what in every), default=0)

        def row(keys: str, name: str, what: str, classes: str = "help-row") -> Horizontal:
            shown_keys = Static(Content(keys), classes="help-keys")
            shown_keys.styles.width = keys_width + GAP
            shown_keys.styles.padding = (0, GAP, 0, 0)
            shown_name = Static(Content(name), classes="help-name")
            shown_name.styles.width = name_width
            what_static = Static(Content(what), classes="help-what")
            return Horizontal(shown_keys, shown_name, what_static, classes=classes)

        with VerticalScroll() as box:
            box.border_title = "Keys"
            box.border_subtitle = "esc to close"
            # As wide as the longest row, unless the terminal is narrower (max-width).
            box.styles.width = keys_width + GAP + name_width + what_width + 2 * 2 + 2
            for keys, name, what in rows:
                yield row(keys, name, what)
            if off_rows:
                yield Static("Off now (pressed, each says why)", classes="help-heading")
                for keys, name, why in off_rows:
                    yield row(keys, name, why, "help-row -off")
            if self.typed_note:
                yield Static(Content(self.typed_note), classes="help-typed")

    def on_mount(self) -> None:
        # The list takes the focus, so the arrows, page keys, home and end scroll it.
        self.query_one(VerticalScroll).focus()
