"""Write a new memory from the app: its text, an optional title, its kind. It is saved
as `memoryctl add` saves it (memoryctl.actions.add_memory), in a thread worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, TextArea

from memoryctl.memory import KINDS
from memoryctl.tui.screens.base import WorkFailed
from memoryctl.tui.widgets.modals import DIALOG_CSS, Dialog, close_asking_first

if TYPE_CHECKING:
    from memoryctl.memory import Memory
    from memoryctl.storage.vault import Vault

# A correction needs the strings it replaces and shows its reach: the Corrections
# screen writes those.
FORM_KINDS = tuple(kind for kind in KINDS if kind != "correction")
DEFAULT_KIND = "fact"


class NewMemoryScreen(Dialog["Memory | None"]):
    """A small form; it gives back the saved memory, or None when the person cancels."""

    DEFAULT_CSS = (
        "NewMemoryScreen {"
        + DIALOG_CSS
        + """
        Label { color: $text-muted; margin: 1 0 0 0; }
        #new-memory-text { height: 6; }
        #new-memory-buttons { height: auto; margin: 1 0 0 0; align-horizontal: right; }
        #new-memory-buttons Button { margin: 0 0 0 2; }
        /* The whole form fits an 80x24 terminal. */
        &.-short {
            & > Vertical { padding: 0 2; }
            #new-memory-text { height: 4; }
        }
    }"""
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s",
            "save",
            "Save",
            id="memoryctl.new-memory.save",
            tooltip="Save the new memory",
        ),
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="memoryctl.new-memory.cancel",
            tooltip="Write nothing",
        ),
    ]

    @dataclass
    class Saved(Message):
        memory: Memory

    def __init__(self, vault: Vault) -> None:
        super().__init__()
        self.vault = vault

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "A new memory"
            box.border_subtitle = "ctrl+s save · esc cancel"
            yield Label("What should your agents remember? One thing, in a sentence or two.")
            yield TextArea(id="new-memory-text", soft_wrap=True)
            yield Label("Title (optional: the first line is used)")
            yield Input(placeholder="e.g. Likes mangoes", id="new-memory-title", compact=True)
            yield Label("Kind")
            yield Select(
                [(kind, kind) for kind in FORM_KINDS],
                value=DEFAULT_KIND,
                allow_blank=False,
                id="new-memory-kind",
                compact=True,
            )
            with Horizontal(id="new-memory-buttons"):
                yield Button("Cancel", id="new-memory-cancel", compact=True)
                yield Button("Save", variant="primary", id="new-memory-save", compact=True)

    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012

    def on_mount(self) -> None:
        self.query_one("#new-memory-text", TextArea).focus()

    def action_save(self) -> None:
        body = self.query_one("#new-memory-text", TextArea).text.strip()
        if not body:
            self.notify("Write the memory first, or press escape.", severity="warning")
            return
        title = self.query_one("#new-memory-title", Input).value.strip() or None
        kind = self.query_one("#new-memory-kind", Select).value
        self.save(body, title, str(kind) if isinstance(kind, str) else DEFAULT_KIND)

    @property
    def unsaved_text(self) -> bool:
        typed = self.query_one("#new-memory-text", TextArea).text.strip()
        return bool(typed or self.query_one("#new-memory-title", Input).value.strip())

    def action_cancel(self) -> None:
        close_asking_first(self, self.unsaved_text, "the new memory")

    @on(Button.Pressed, "#new-memory-save")
    def save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#new-memory-cancel")
    def cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Input.Submitted, "#new-memory-title")
    def title_submitted(self) -> None:
        self.action_save()

    @work(
        thread=True, exclusive=True, group="new-memory", exit_on_error=False, name="save the memory"
    )
    def save(self, body: str, title: str | None, kind: str) -> None:
        from memoryctl.actions import NewMemory, add_memory

        saved = add_memory(self.vault, NewMemory(body=body, title=title, kind=kind))
        self.post_message(self.Saved(saved))

    @on(Saved)
    def saved(self, message: Saved) -> None:
        self.dismiss(message.memory)

    @on(WorkFailed)
    def work_failed(self, message: WorkFailed) -> None:
        self.notify(f"Could not {message.what}: {message.error}", severity="error", timeout=10)
