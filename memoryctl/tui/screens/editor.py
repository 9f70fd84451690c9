"""Edit a memory's text in place, in the app. The save goes through the core, which
replaces the text of the same file (same id, recorded as a replacement) and refuses if
the file changed on disk meanwhile; then the person chooses: reload the text from disk,
or see the difference first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Static, TextArea

from memoryctl.tui.screens.base import FilesChanged, WorkFailed
from memoryctl.tui.widgets.diff import text_diff
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.modals import Dialog, close_asking_first

if TYPE_CHECKING:
    from memoryctl.memory import Memory
    from memoryctl.storage.vault import Vault

CHANGED_ON_DISK = (
    "The file changed on disk since you opened it. ctrl+r reloads it; ctrl+g shows the difference."
)


class DiffScreen(Dialog[None]):
    """Your text against the file on disk."""

    DEFAULT_CSS = """
    DiffScreen { align: center middle; }
    DiffScreen > VerticalScroll {
        width: 95%; height: 90%; border: thick $warning; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q", "dismiss", "Close", id="memoryctl.diff.close", tooltip="Close the diff"
        ),
    ]

    def __init__(self, mine: str, disk: str) -> None:
        super().__init__()
        self.mine = mine
        self.disk = disk

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "On disk (−) against your text (+)"
            box.border_subtitle = "esc to close"
            if self.disk == self.mine:
                yield Static("Your text and the file on disk are the same.")
            else:
                yield Static(text_diff(self.disk, self.mine, "on disk", "yours"))


class EditorScreen(Screen["Memory | None"]):
    DEFAULT_CSS = """
    EditorScreen {
        TextArea { height: 1fr; }
        #editor-warning {
            display: none; color: $text-warning; background: $warning-muted; padding: 0 1;
        }
        &.-conflict #editor-warning { display: block; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s", "save", "Save", id="memoryctl.editor.save", tooltip="Save the note in place"
        ),
        Binding(
            "escape", "close", "Close", id="memoryctl.editor.close", tooltip="Close the editor"
        ),
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            id="memoryctl.editor.reload",
            tooltip="Throw away your text and load the file from disk",
        ),
        Binding(
            "ctrl+g",
            "diff",
            "Diff",
            id="memoryctl.editor.diff",
            tooltip="Compare your text with the file on disk",
        ),
    ]

    @dataclass
    class Opened(Message):
        text: str
        sha: str

    @dataclass
    class Saved(Message):
        memory: Memory

    @dataclass
    class Conflict(Message):
        disk_text: str

    def __init__(self, vault: Vault, memory: Memory) -> None:
        super().__init__()
        self.vault = vault
        self.memory = memory
        self.sha: str | None = None
        self.opened_text = ""
        self.disk_text: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(CHANGED_ON_DISK, id="editor-warning")
        yield TextArea(id="editor", language="markdown", soft_wrap=True, show_line_numbers=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.sub_title = f"editing {self.memory.path}"
        self.query_one(TextArea).loading = True
        self.read()

    @property
    def text(self) -> str:
        return self.query_one(TextArea).text

    @work(thread=True, exclusive=True, group="editor", exit_on_error=False, name="open the file")
    def read(self) -> None:
        from memoryctl.actions import read_for_edit

        text, sha = read_for_edit(self.vault, self.memory)
        self.post_message(self.Opened(text, sha))

    @on(Opened)
    def opened(self, message: Opened) -> None:
        editor = self.query_one(TextArea)
        editor.loading = False
        editor.load_text(message.text)
        self.sha = message.sha
        self.opened_text = message.text
        self.disk_text = None
        self.remove_class("-conflict")
        editor.focus()

    def action_save(self) -> None:
        if self.sha is None:
            return
        if self.has_class("-conflict"):
            self.notify(CHANGED_ON_DISK, severity="warning", timeout=8)
            return
        self.save(self.text, self.sha)

    @work(thread=True, exclusive=True, group="editor", exit_on_error=False, name="save")
    def save(self, text: str, sha: str) -> None:
        from memoryctl.actions import EditConflict, replace_in_place

        try:
            saved = replace_in_place(self.vault, self.memory, text, sha)
        except EditConflict as conflict:
            self.post_message(self.Conflict(conflict.disk_text))
            return
        self.post_message(self.Saved(saved))

    @on(Saved)
    def saved(self, message: Saved) -> None:
        self.notify(f"Replaced in place: {message.memory.path}", title=message.memory.title)
        self.dismiss(message.memory)

    @on(Conflict)
    def conflict(self, message: Conflict) -> None:
        self.disk_text = message.disk_text
        self.add_class("-conflict")
        self.notify(CHANGED_ON_DISK, title="Not saved", severity="warning", timeout=10)

    @on(FilesChanged)
    def files_changed(self, message: FilesChanged) -> None:
        """Someone else saved the file: say so now, before the person tries to save."""
        if self.memory.path in message.paths and self.sha is not None:
            self.check_disk(self.sha)

    @work(thread=True, exclusive=True, group="editor-check", exit_on_error=False)
    def check_disk(self, sha: str) -> None:
        from memoryctl.actions import read_for_edit

        try:
            text, now = read_for_edit(self.vault, self.memory)
        except Exception:
            return
        if now != sha:
            self.post_message(self.Conflict(text))

    @on(WorkFailed)
    def work_failed(self, message: WorkFailed) -> None:
        self.query_one(TextArea).loading = False
        self.notify(f"Could not {message.what}: {message.error}", severity="error", timeout=10)

    def action_reload(self) -> None:
        """Load the file from disk again; text typed and not saved is lost, so ask first."""
        from memoryctl.tui.widgets.modals import ConfirmScreen

        if not self.unsaved_text:
            self.read()
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self.read()

        question = "Throw away the text you typed and load the file from disk? It is not saved."
        self.app.push_screen(ConfirmScreen("Reload", question), answer)

    def action_diff(self) -> None:
        if self.disk_text is not None:
            self.app.push_screen(DiffScreen(self.text, self.disk_text))
        else:
            self.app.push_screen(DiffScreen(self.text, self.opened_text))

    @property
    def unsaved_text(self) -> bool:
        return self.sha is not None and self.text != self.opened_text

    def action_close(self) -> None:
        close_asking_first(self, self.unsaved_text, "the editor")
