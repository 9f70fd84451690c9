"""Find a memory by typing, and pick it: the index answers, twenty rows at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from memoryctl.tui.widgets.modals import Dialog

if TYPE_CHECKING:
    from memoryctl.memory import Memory
    from memoryctl.storage.index import Index

HITS = 20
DEBOUNCE = 0.1


class PickMemoryScreen(Dialog[str | None]):
    """Returns the id of the memory picked, or None."""

    DEFAULT_CSS = """
    PickMemoryScreen { align: center middle; }
    PickMemoryScreen > Vertical {
        width: 80; max-width: 95%; height: 20; max-height: 90%;
        border: thick $primary; background: $surface;
    }
    PickMemoryScreen OptionList { height: 1fr; border: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="memoryctl.pick.cancel", tooltip="Pick nothing"),
        Binding(
            "down",
            "to_list",
            "To the list",
            show=False,
            id="memoryctl.pick.to-list",
            tooltip="Move from the search to the list",
        ),
    ]

    @dataclass
    class Found(Message):
        query: str
        memories: list[Memory]

    def __init__(self, index: Index, title: str, *, pinned: bool | None = None) -> None:
        super().__init__()
        self.index = index
        self.title_text = title
        self.pinned = pinned
        self._debounce: Timer | None = None
        self._shown: str | None = None  # the search whose hits the list shows
        self._pick_when_found = False  # enter came before the hits of what was typed

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "type to search · enter picks · esc cancels"
            yield Input(placeholder="Search titles and text…", id="pick-query")
            yield OptionList(id="pick-hits")

    def on_mount(self) -> None:
        self.search("")

    @on(Input.Changed, "#pick-query")
    def changed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE, lambda: self.search(event.value))

    @work(thread=True, exclusive=True, group="pick", exit_on_error=False)
    def search(self, query: str) -> None:
        try:
            found = self.index.list(text=query.strip() or None, pinned=self.pinned, limit=HITS)
        except Exception:
            found = []
        self.post_message(self.Found(query, found))

    @on(Found)
    def found(self, message: Found) -> None:
        if message.query != self.query_one("#pick-query", Input).value:
            return  # an earlier search: the one for what is typed now is on its way
        self._shown = message.query
        hits = self.query_one("#pick-hits", OptionList)
        hits.clear_options()
        hits.add_options(
            Option(f"{m.created[:10]} {m.kind:<10} {m.title}", id=m.id) for m in message.memories
        )
        if message.memories:
            hits.highlighted = 0
        if self._pick_when_found:
            self._pick_when_found = False
            self.pick_highlighted()

    @on(Input.Submitted, "#pick-query")
    def submitted(self, event: Input.Submitted) -> None:
        """Enter picks the first hit of what is typed, even when it came before the hits
        did: the list may still show those of the letters typed before."""
        if event.value != self._shown:
            self._pick_when_found = True
            if self._debounce is not None:
                self._debounce.stop()
            self.search(event.value)
            return
        self.pick_highlighted()

    def pick_highlighted(self) -> None:
        hits = self.query_one("#pick-hits", OptionList)
        if hits.highlighted is not None:
            self.dismiss(hits.get_option_at_index(hits.highlighted).id)
            return
        typed = self.query_one("#pick-query", Input).value.strip()
        said = f"No memory matches “{typed}”." if typed else "There is no memory to pick."
        self.notify(said, severity="warning")

    @on(OptionList.OptionSelected, "#pick-hits")
    def selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_to_list(self) -> None:
        self.query_one("#pick-hits", OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
