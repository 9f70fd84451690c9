"""Small dialogs every screen uses: a yes/no confirmation and a one-line question."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static

from memoryctl.tui.keys import help_keys

Answer = TypeVar("Answer")

DIALOG_CSS = """
    align: center middle;
    & > Vertical {
        width: 72;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        border-title-align: center;
        border-subtitle-align: center;
        background: $surface;
        padding: 1 2;
    }
    .dialog-text { width: 1fr; height: auto; max-height: 16; }
    .dialog-hint { color: $text-muted; margin: 1 0 0 0; }
"""


class Dialog(ModalScreen[Answer]):
    """A dialog in front of a screen. As Textual has it, a dialog takes every key but the
    app's priority ones (ctrl+q, ctrl+p; the number keys, priority keys, are off in a
    dialog): the screens' number keys, import and sync wait until it is closed. f1 (and
    ? where nothing is typed) shows the dialog's own keys."""

    BINDINGS: ClassVar[list[BindingType]] = help_keys()


class ConfirmScreen(Dialog[bool]):
    """Ask before something that is hard to take back: y confirms, n or escape does not."""

    DEFAULT_CSS = "ConfirmScreen {" + DIALOG_CSS + "}"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="memoryctl.confirm.yes", tooltip="Go ahead"),
        Binding(
            "n,escape",
            "answer(False)",
            "No",
            id="memoryctl.confirm.no",
            tooltip="Leave it as it is",
        ),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "y yes · n no"
            yield Static(self.text, classes="dialog-text", markup=False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class AskScreen(Dialog[str | None]):
    """One line of text (a reason, a note); enter gives it, escape gives None."""

    DEFAULT_CSS = "AskScreen {" + DIALOG_CSS + "}"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="memoryctl.ask.cancel", tooltip="Do nothing"),
    ]

    def __init__(self, title: str, text: str, *, placeholder: str = "", required: bool = True):
        super().__init__()
        self.title_text = title
        self.text = text
        self.placeholder = placeholder
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "enter to go ahead · esc to cancel"
            yield Static(self.text, classes="dialog-text", markup=False)
            yield Input(placeholder=self.placeholder, id="answer")

    @on(Input.Submitted, "#answer")
    def submitted(self, event: Input.Submitted) -> None:
        answer = event.value.strip()
        if self.required and not answer:
            self.notify("Write something first, or press escape.", severity="warning")
            return
        self.dismiss(answer)

    def action_cancel(self) -> None:
        self.dismiss(None)


def close_asking_first(screen: Screen[Any], unsaved: bool, what: str) -> None:
    """Close a screen that holds typed text; when that text is not saved, ask first."""
    if not unsaved:
        screen.dismiss(None)
        return

    def answer(leave: bool | None) -> None:
        if leave:
            screen.dismiss(None)

    question = f"Close {what} and lose the text you typed? It is not saved."
    screen.app.push_screen(ConfirmScreen("Unsaved text", question), answer)
