"""The vault screen: filter the memories, move through them, read one.

Every query runs in a thread worker that posts a typed message; the handlers here own
every change to the widgets. Opening the index (which syncs it with the files) can take
seconds on a big vault, so the screen appears at once and shows `loading` meanwhile.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input
from textual.worker import get_current_worker

from memoryctl.corrections import now_lines
from memoryctl.memory import Memory
from memoryctl.screens.base import opened_index
from memoryctl.widgets import MemoryList, MemoryView, Row, RowPages
from memoryctl.widgets.memory_view import OPEN_HINT

if TYPE_CHECKING:
    from memoryctl.storage.index import Index
    from memoryctl.storage.vault import Vault

FILTER_DEBOUNCE = 0.1
START_MESSAGE = 'No memories yet. Add one with `memoryctl add "…"`.'


def describe(error: BaseException) -> str:
    from memoryctl.errors import describe as describe_error

    return describe_error(error)[0]


def count_label(count: int, total: int, text: str) -> str:
    noun = "memory" if total == 1 else "memories"
    return f"{count:,} of {total:,} {noun}" if text else f"{total:,} {noun}"


def not_git_warning(vault: Vault) -> str:
    return (
        f"{vault.root} is not a git repository, so changes will have no history. "
        "Run `memoryctl init` there to start one."
    )


class FilterInput(Input):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "down",
            "screen.focus_list",
            "To the list",
            show=False,
            id="memoryctl.filter.to-list",
            tooltip="Move from the filter to the list",
        ),
    ]


class VaultScreen(Screen[None]):
    AUTO_FOCUS = "MemoryList"
    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012 (Textual declares it without ClassVar)
        (0, "-narrow"),
        (100, "-wide"),
    ]

    DEFAULT_CSS = """
    VaultScreen {
        #panes { layout: horizontal; height: 1fr; }
        /* The list gets more room: titles are what a person scans. */
        MemoryList { width: 3fr; height: 1fr; }
        MemoryView { width: 2fr; height: 1fr; }
        &.-narrow #panes { layout: vertical; }
        &.-narrow MemoryList, &.-narrow MemoryView { width: 1fr; }
        /* Below 100 columns every row counts: the filter is one line. */
        &.-narrow #filter, &.-narrow #filter:focus {
            border: none;
            height: 1;
            padding: 0 1;
            background: $boost;
        }
        &.-narrow #filter:focus { background-tint: $foreground 10%; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "slash",
            "focus_filter",
            "Filter",
            priority=True,
            id="memoryctl.filter",
            tooltip="Filter the memories as you type",
        ),
        Binding(
            "o",
            "open_full",
            "Full view",
            id="memoryctl.open-full",
            tooltip="Open the memory under the cursor on its own screen (or enter twice)",
        ),
        Binding(
            "escape",
            "clear_filter",
            "Clear filter",
            id="memoryctl.clear-filter",
            tooltip="Clear the filter and go back to the list",
        ),
    ]

    # --- messages from workers ----------------------------------------------------------

    @dataclass
    class IndexOpened(Message):
        index: Index
        is_git: bool
        notices: list[str]

    @dataclass
    class Filtered(Message):
        """The rows matching a filter are counted and their first page is read."""

        pages: RowPages
        first_page: list[Row]
        total: int
        keep_cursor: bool

    @dataclass
    class MemoryLoaded(Message):
        path: str
        memory: Memory | None
        now: list[Memory]
        raw: str | None

    @dataclass
    class VaultChanged(Message):
        paths: list[str]

    @dataclass
    class WorkFailed(Message):
        what: str
        error: str

    # --- set-up ------------------------------------------------------------------------

    def __init__(self, vault: Vault, *, watch: bool = True) -> None:
        super().__init__()
        self.vault = vault
        self.watching = watch
        self.index: Index | None = None
        self.opened: Memory | None = None  # what the view shows
        self._requested: Memory | None = None  # what the person last asked to read
        self._filter_text = ""
        self._debounce: Timer | None = None
        self._stop_watching = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield FilterInput(placeholder="Filter memories… (/)", id="filter")
        with Container(id="panes"):
            yield MemoryList(id="memory-list")
            yield MemoryView(id="memory-view")
        yield Footer()

    @property
    def memory_list(self) -> MemoryList:
        return self.query_one(MemoryList)

    @property
    def memory_view(self) -> MemoryView:
        return self.query_one(MemoryView)

    def on_mount(self) -> None:
        self.memory_list.loading = True
        self.memory_list.border_title = "Memories"
        self.open_index()

    def on_unmount(self) -> None:
        self._stop_watching.set()

    # --- workers: they read, and post what they read ----------------------------------------

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def open_index(self) -> None:
        try:
            index = opened_index(self.vault)
            opened = self.IndexOpened(index, self.vault.is_git, list(self.vault.notices))
        except Exception as error:
            self.post_message(self.WorkFailed("open the index", describe(error)))
            return
        self.post_message(opened)

    @work(thread=True, exclusive=True, group="filter", exit_on_error=False)
    def run_filter(self, index: Index, text: str, keep_cursor: bool) -> None:
        try:
            total = index.count()
            count = index.count(text=text) if text else total
            pages = RowPages(index, text, count)
            first_page = pages.fetch(0) if count else []
        except Exception as error:
            self.post_message(self.WorkFailed("filter the memories", describe(error)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.Filtered(pages, first_page, total, keep_cursor))

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False)
    def load_memory(self, index: Index, memory: Memory) -> None:
        try:
            current = index.by_path(memory.path)
            if current is None and memory.has_id:
                current = index.get(memory.id)
            now = now_lines(index, [current])[current.id] if current else []
            raw = self._raw_text(current) if current and current.broken else None
        except Exception as error:
            self.post_message(self.WorkFailed("read the memory", describe(error)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.MemoryLoaded(memory.path, current, now, raw))

    def _raw_text(self, memory: Memory) -> str:
        try:
            return self.vault.read_text(memory)
        except OSError as error:
            return f"(the file cannot be read: {describe(error)})"

    @work(thread=True, group="watch", exit_on_error=False)
    def watch_files(self) -> None:
        from memoryctl.storage.watch import watch_vault

        try:
            for _report, paths in watch_vault(self.vault, stop=self._stop_watching):
                self.post_message(self.VaultChanged(paths))
        except Exception as error:
            self.post_message(self.WorkFailed("watch the vault's files", describe(error)))

    # --- handlers: they own the widgets ------------------------------------------------------

    @on(IndexOpened)
    def index_opened(self, message: IndexOpened) -> None:
        self.index = message.index
        for notice in message.notices:
            self.notify(notice, title="Index")
        if not message.is_git:
            self.notify(not_git_warning(self.vault), title="No git", severity="warning", timeout=8)
        self._filter_text = self.filter_text
        self.run_filter(message.index, self._filter_text, False)
        if self.watching:
            self.watch_files()

    @on(Filtered)
    def filtered(self, message: Filtered) -> None:
        if message.pages.text != self._filter_text:
            return  # the person typed on; a newer filter is on its way
        memory_list = self.memory_list
        if memory_list.loading:
            memory_list.loading = False
            self.refresh_bindings()  # the Footer learns the list's keys once it can take them
        memory_list.border_subtitle = None
        memory_list.empty_text = (
            "No memories yet." if message.total == 0 else "No memories match the filter."
        )
        memory_list.border_title = count_label(
            message.pages.count, message.total, message.pages.text
        )
        memory_list.show(message.pages, message.first_page, keep_cursor=message.keep_cursor)
        if message.total == 0:
            self.opened = self._requested = None
            self.memory_view.show_message(START_MESSAGE)
        elif self.memory_view.message == START_MESSAGE:
            self.memory_view.show_message(OPEN_HINT)

    @on(MemoryList.Opened)
    def memory_opened(self, message: MemoryList.Opened) -> None:
        pages = message.memory_list.pages
        if self.index is None or pages is None or pages.text != self.filter_text:
            return  # the row came from a list the filter is about to replace
        if self.opened is not None and self.opened.path == message.memory.path:
            # The memory is already on the right: a second enter gives it the whole screen.
            self.app.open_memory(self.opened.id)  # type: ignore[attr-defined]
            return
        self._requested = message.memory
        self.load_memory(self.index, message.memory)

    @on(MemoryLoaded)
    async def memory_loaded(self, message: MemoryLoaded) -> None:
        self.opened = message.memory
        if message.memory is None:
            self.memory_view.show_message(f"{message.path} is no longer in the vault.")
            return
        await self.memory_view.show(message.memory, message.now, message.raw)

    @on(VaultChanged)
    def vault_changed(self, message: VaultChanged) -> None:
        if self.index is None:
            return
        self.run_filter(self.index, self._filter_text, True)
        if self._requested is not None:
            self.load_memory(self.index, self._requested)

    @on(WorkFailed)
    def work_failed(self, message: WorkFailed) -> None:
        self.memory_list.loading = False
        self.memory_list.border_subtitle = None
        self.notify(f"Could not {message.what}: {message.error}", severity="error", timeout=10)
        if self.index is None:
            self.memory_view.show_message(f"Could not {message.what}: {message.error}")

    # --- filtering -------------------------------------------------------------------------

    @property
    def filter_text(self) -> str:
        return self.query_one("#filter", Input).value.strip()

    @on(Input.Changed, "#filter")
    def filter_changed(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(FILTER_DEBOUNCE, self.apply_filter)

    def apply_filter(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if self.index is not None and self.filter_text != self._filter_text:
            self._filter_text = self.filter_text
            self.memory_list.border_subtitle = "filtering…"
            self.run_filter(self.index, self._filter_text, False)

    @on(Input.Submitted, "#filter")
    def filter_submitted(self) -> None:
        self.action_focus_list()

    # --- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `/` is a priority binding, so the keys that follow it in the same read reach
        # the filter; while the filter has focus, `/` is a character to type.
        if action == "focus_filter":
            return not isinstance(self.focused, Input)
        return True

    # Focus moves at once (`Widget.focus` waits a turn) for the same reason.
    def action_focus_filter(self) -> None:
        self.set_focus(self.query_one("#filter", Input))

    def action_focus_list(self) -> None:
        self.apply_filter()
        self.set_focus(self.memory_list)

    def action_open_full(self) -> None:
        memory = self.memory_list.current
        if memory is not None:
            self.app.open_memory(memory.id)  # type: ignore[attr-defined]

    def action_clear_filter(self) -> None:
        self.query_one("#filter", Input).value = ""
        self.action_focus_list()
