"""The memoryctl terminal UI. `make_app` builds it, for the CLI and for the tests alike."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Static

from memoryctl.screens.vault import VaultScreen

if TYPE_CHECKING:
    from memoryctl.storage.vault import Vault

BINDING_PREFIX = "memoryctl."


def registered_bindings(nodes: Iterable[DOMNode]) -> list[Binding]:
    """memoryctl's own bindings on these nodes, once each: the registry help is drawn from."""
    found: dict[str, Binding] = {}
    for node in nodes:
        for binding in node.BINDINGS:
            if isinstance(binding, Binding) and (binding.id or "").startswith(BINDING_PREFIX):
                found.setdefault(binding.id or "", binding)
    return list(found.values())


class HelpScreen(ModalScreen[None]):
    """The keys, with what each does, from the bindings of the app and the screen beneath."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > Static {
            width: auto;
            max-width: 95%;
            height: auto;
            max-height: 95%;
            border: thick $primary;
            border-title-align: center;
            background: $surface;
            padding: 1 2;
        }
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

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.help_bindings = bindings

    def compose(self) -> ComposeResult:
        # Keys bound to the same action with the same words share one line ("f1 / ?").
        rows: dict[tuple[str, str], tuple[list[str], str]] = {}
        for binding in self.help_bindings:
            keys, _ = rows.setdefault((binding.action, binding.description), ([], binding.tooltip))
            keys.append(self.app.get_key_display(binding))
        width = max((len(" / ".join(keys)) for keys, _ in rows.values()), default=0)
        lines = [
            Content.assemble(
                (f"{' / '.join(keys):>{width}}", "bold $text-accent"),
                f"  {description:<14}",
                (tooltip, "$text-muted"),
            )
            for (_, description), (keys, tooltip) in rows.items()
        ]
        keys_help = Static(Content("\n").join(lines))
        keys_help.border_title = "Keys"
        keys_help.border_subtitle = "esc to close"
        yield keys_help


class MemoryApp(App[None]):
    TITLE = "memoryctl"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+q", "quit", "Quit", priority=True, id="memoryctl.quit", tooltip="Quit memoryctl"
        ),
        Binding(
            "f1", "help", "Help", id="memoryctl.help", tooltip="Show the keys and what they do"
        ),
        Binding(
            "question_mark",
            "help",
            "Help",
            show=False,
            id="memoryctl.help-alt",
            tooltip="Show the keys and what they do",
        ),
    ]

    def __init__(self, vault: Vault, *, watch: bool = True) -> None:
        super().__init__()
        self.vault = vault
        self.watching = watch
        self.sub_title = str(vault.root)

    def on_mount(self) -> None:
        self.push_screen(VaultScreen(self.vault, watch=self.watching))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        screen = self.screen
        nodes = [self, screen, *screen.query("*")]
        self.push_screen(HelpScreen(registered_bindings(nodes)))


def make_app(vault: Vault, *, watch: bool = True) -> MemoryApp:
    return MemoryApp(vault, watch=watch)


def run_app(vault: Vault) -> None:
    try:
        make_app(vault).run()
    finally:
        vault.close()
