"""Choose an export format and where to write it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Label, Select

from memoryctl.storage.config import FORMATS
from memoryctl.tui.widgets.modals import Dialog

# Where a format goes when the person names no file (export.DEFAULT_PATHS covers the
# agent files; the rest get a plain name here so the dialog always writes a file).
SUGGESTED = {
    "markdown": "memory.md",
    "json": "memory.json",
    "agents-md": "AGENTS.md",
    "claude-md": "CLAUDE.md",
    "gemini-md": "GEMINI.md",
    "cursor-rules": ".cursor/rules/memoryctl.mdc",
}


@dataclass(frozen=True)
class ExportChoice:
    fmt: str
    out: str


class ExportScreen(Dialog[ExportChoice | None]):
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > Vertical {
        width: 64; max-width: 95%; height: auto; border: thick $primary;
        background: $surface; padding: 1 2;
    }
    ExportScreen Label { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s",
            "write",
            "Write",
            id="memoryctl.export.write",
            tooltip="Write the bundle in this format to this file",
        ),
        Binding(
            "escape", "cancel", "Cancel", id="memoryctl.export.cancel", tooltip="Export nothing"
        ),
    ]

    def __init__(self, fmt: str, folder: str) -> None:
        super().__init__()
        self.fmt = fmt if fmt in FORMATS else "markdown"
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Export the bundle"
            box.border_subtitle = "ctrl+s or enter writes · esc cancels"
            yield Label("Format")
            yield Select([(f, f) for f in FORMATS], value=self.fmt, allow_blank=False, id="fmt")
            yield Label(f"File, inside {self.folder}")
            yield Input(SUGGESTED[self.fmt], id="out")

    def on_mount(self) -> None:
        # The file takes the focus, so enter writes at once; on the format, enter opens it.
        self.query_one("#out", Input).focus()

    @on(Select.Changed, "#fmt")
    def format_changed(self, event: Select.Changed) -> None:
        out = self.query_one("#out", Input)
        if out.value in SUGGESTED.values() and isinstance(event.value, str):
            out.value = SUGGESTED[event.value]

    @on(Input.Submitted, "#out")
    def action_write(self) -> None:
        fmt = self.query_one("#fmt", Select).value
        out = self.query_one("#out", Input).value.strip()
        if not out:
            self.notify("Name the file to write, or press escape.", severity="warning")
            return
        if isinstance(fmt, str):
            self.dismiss(ExportChoice(fmt, out))

    def action_cancel(self) -> None:
        self.dismiss(None)
