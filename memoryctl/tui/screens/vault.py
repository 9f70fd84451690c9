"""The vault screen: filter the memories, move through them, read one.

Every query runs in a thread worker that posts a typed message; the handlers here own
every change to the widgets. Opening the index (which syncs it with the files) can take
seconds on a big vault, so the screen appears at once and shows `loading` meanwhile
(when the first list takes longer than a moment).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Header, Input
from textual.worker import get_current_worker

from memoryctl.corrections import now_lines
from memoryctl.memory import Memory
from memoryctl.tui.list_filter import ListFilter, narrowed
from memoryctl.tui.screens.base import AppScreen, WorkFailed, describe, opened_index, stored_index
from memoryctl.tui.widgets import MemoryList, MemoryView, Row, RowPages
from memoryctl.tui.widgets.facet_bar import FacetBar
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.memory_list import PAGE_SIZE
from memoryctl.tui.widgets.memory_view import OPEN_HINT, Shown
from memoryctl.tui.workers import quiet_work

if TYPE_CHECKING:
    from memoryctl.storage.index import Index
    from memoryctl.storage.vault import Vault

# A keystroke after a pause filters at once; keys closer together than this (a paste,
# a fast typist) wait until they stop, so no query runs for a list nobody would see.
FILTER_DEBOUNCE = 0.03
START_MESSAGE = (
    "Welcome! This vault has no memories yet.\n\n"
    'Press n to write the first one, or add one with `memoryctl add "…"`.'
)


def count_label(count: int, total: int, wanted: ListFilter) -> str:
    noun = "memory" if total == 1 else "memories"
    facets = wanted.describe()
    if not wanted.text and not facets:
        return f"{total:,} {noun}"
    return f"{count:,} of {total:,} {noun}" + (f" · {facets}" if facets else "")


def not_git_warning(vault: Vault) -> str:
    if vault.git_refusal is not None:
        return f"git will not work in {vault.root}: {vault.git_refusal}. Nothing can be saved."
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


class VaultScreen(AppScreen):
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
            "f",
            "toggle_facets",
            "Filters",
            id="memoryctl.facets",
            tooltip="Show only a status, kind, namespace, tag or the pinned (f again hides them)",
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
        Binding(
            "n",
            "app.new_memory",
            "New memory",
            id="memoryctl.new-memory",
            tooltip="Write a new memory: its text, a title and its kind",
        ),
    ]

    # --- messages from workers ----------------------------------------------------------

    @dataclass
    class IndexOpened(Message):
        """The index is open: as last synced (`synced` False, shown at once), then synced."""

        index: Index
        is_git: bool | None  # None: not asked yet (git takes a moment; the list comes first)
        notices: list[str]
        synced: bool = True
        changed: bool = True  # the sync found files to read

    @dataclass
    class Filtered(Message):
        """The rows matching a filter are counted and their first page is read."""

        pages: RowPages
        first_page: list[Row]
        total: int
        keep_cursor: bool
        # Every memory the facets let through, newest first; None when only the newest
        # page was read (`Completed` brings the order).
        order: Sequence[int] | None

    @dataclass
    class Completed(Message):
        """Every row of a filter whose first page is shown, in order."""

        pages: RowPages
        rowids: Sequence[int]
        order: Sequence[int]  # as in `Filtered`

    @dataclass
    class MemoryLoaded(Message):
        path: str
        memory: Memory | None
        now: list[Memory]
        raw: str | None
        full: bool = False  # for a screen of its own, not the view on the right

    @dataclass
    class VaultChanged(Message):
        paths: list[str]

    @dataclass
    class FacetChoices(Message):
        namespaces: list[str]
        tags: list[str]

    # --- set-up ------------------------------------------------------------------------

    def __init__(self, vault: Vault, *, watch: bool = True) -> None:
        super().__init__(vault)
        self.watching = watch
        self.index: Index | None = None
        self.opened: Memory | None = None  # what the view shows
        self._requested: Memory | None = None  # what the person last asked to read
        self.wanted = ListFilter()  # the filter the list shows, or is about to
        self._order: tuple[ListFilter, Sequence[int]] | None = None  # for the same facets
        self._debounce: Timer | None = None
        self._total = 0  # memories in the vault, as the last filter counted them
        self._reveal: str | None = None  # the path of a memory to put the cursor on
        self._last_key = 0.0
        self._filter_typed = False  # the filter holds text (esc clears it)
        self._sync_after_paint = False
        self._stop_watching = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield FilterInput(placeholder="Filter memories… (/)", id="filter")
        with Container(id="panes"):
            yield MemoryList(id="memory-list")
            yield MemoryView(id="memory-view")
        yield KeysFooter()

    @property
    def memory_list(self) -> MemoryList:
        return self.query_one(MemoryList)

    @property
    def memory_view(self) -> MemoryView:
        return self.query_one(MemoryView)

    def on_mount(self) -> None:
        self.loading_soon(self.memory_list)
        self.memory_list.border_title = "Memories"
        self.open_index()

    def on_unmount(self) -> None:
        self._stop_watching.set()

    # --- workers: they read, and post what they read ----------------------------------------

    @work(thread=True, exclusive=True, group="index", exit_on_error=False, name="open the index")
    def open_index(self) -> None:
        # Syncing reads every file's size and time (about a second at 100,000
        # memories), so the list is painted from the index as it was, and synced after.
        stored = stored_index(self.vault)
        if stored is not None and self.vault.last_sync is None:
            opened = self.IndexOpened(stored, None, [], synced=False)
        else:
            index = opened_index(self.vault)
            notices = list(self.vault.notices)
            opened = self.IndexOpened(index, self.vault.is_git, notices)
        self.post_message(opened)

    @work(thread=True, exclusive=True, group="index", exit_on_error=False, name="sync the index")
    def sync_index(self) -> None:
        index = opened_index(self.vault)
        report = self.vault.last_sync
        changed = report is None or report.touched > 0
        notices = list(self.vault.notices)
        opened = self.IndexOpened(index, self.vault.is_git, notices, True, changed)
        self.post_message(opened)

    @quiet_work("filter", "filter the memories")
    def run_filter(
        self, index: Index, wanted: ListFilter, keep_cursor: bool, order: Sequence[int] | None
    ) -> None:
        # A newer keystroke cancels this worker, but its thread runs on: each step checks,
        # so a filter the person typed past stops holding the index and the GIL.
        worker = get_current_worker()
        total = index.count()
        if order is None and not wanted.text and not keep_cursor:
            # Ordering every memory takes a tenth of a second at 100,000: the newest page
            # is painted first, and the order is read after it (`complete_filter`).
            facets = wanted.facet_filters()
            newest = index.rowids_in_order(facets, limit=PAGE_SIZE)
            count = total if not wanted.facets() else index.count(facets)
            pages = RowPages(index, wanted, newest, count=count)
            first_page = pages.fetch(0) if count else []
            if not worker.is_cancelled:
                self.post_message(self.Filtered(pages, first_page, total, keep_cursor, None))
            return
        if order is None:
            order = index.rowids_in_order(wanted.facet_filters())
        pages = self._dense_text_pages(index, wanted, total)
        if pages is None:
            matches = index.text_matches(wanted.text) if wanted.text else None
            if worker.is_cancelled:
                return
            pages = RowPages(index, wanted, narrowed(order, matches))
        first_page = pages.fetch(0) if pages.count and not worker.is_cancelled else []
        if not worker.is_cancelled:
            self.post_message(self.Filtered(pages, first_page, total, keep_cursor, order))

    @staticmethod
    def _dense_text_pages(index: Index, wanted: ListFilter, total: int) -> RowPages | None:
        """For a text most memories match (one or two letters), the newest page of them
        and their count (`Index.dense_page`); the rest are ordered after the page is
        painted (`complete_filter`). None for any other filter."""
        found = None if wanted.facets() else index.dense_page(wanted.text, total, PAGE_SIZE)
        if found is None:
            return None
        rowids, count = found
        return RowPages(index, wanted, rowids, count=count)

    @quiet_work("filter", "filter the memories")
    def complete_filter(self, index: Index, pages: RowPages, order: Sequence[int] | None) -> None:
        worker = get_current_worker()
        if order is None:
            order = index.rowids_in_order(pages.wanted.facet_filters())
        if not pages.text:
            if not worker.is_cancelled:
                self.post_message(self.Completed(pages, order, order))
            return
        matches: set[int] = set()
        for some in index.text_matches_in_steps(pages.text):
            if worker.is_cancelled:
                return  # the person typed on: the index is free for the new filter
            matches |= some
        rowids = narrowed(order, matches)
        if not worker.is_cancelled:
            self.post_message(self.Completed(pages, rowids, order))

    @quiet_work("memory", "read the memory")
    def load_memory(self, index: Index, memory: Memory, full: bool = False) -> None:
        current = index.by_path(memory.path)
        if current is None and memory.has_id:
            current = index.get(memory.id)
        now = now_lines(index, [current])[current.id] if current else []
        raw = self._raw_text(current) if current and current.broken else None
        if not get_current_worker().is_cancelled:
            self.post_message(self.MemoryLoaded(memory.path, current, now, raw, full))

    @work(
        thread=True,
        exclusive=True,
        group="facets",
        exit_on_error=False,
        name="read the namespaces and tags",
    )
    def load_facet_choices(self, index: Index) -> None:
        namespaces, tags = index.namespaces_and_tags()
        self.post_message(self.FacetChoices(namespaces, tags))

    def _raw_text(self, memory: Memory) -> str:
        try:
            return self.vault.read_text(memory)
        except OSError as error:
            return f"(the file cannot be read: {describe(error)})"

    @work(thread=True, group="watch", exit_on_error=False, name="watch the vault's files")
    def watch_files(self) -> None:
        from memoryctl.storage.watch import watch_vault

        if self.check_changes():  # what the index took in when it opened
            self.post_message(self.VaultChanged([]))
        # Once it watches, the vault is read again: a file saved after the open read it,
        # and before the watch began, sends no event.
        watching = threading.Event()
        for _report, paths in watch_vault(self.vault, stop=self._stop_watching, watching=watching):
            self.check_changes()
            self.post_message(self.VaultChanged(paths))

    def check_changes(self) -> bool:
        """The live checks over what the index took in; True when they changed the queue."""
        from memoryctl.actions import utcnow
        from memoryctl.live_checks import check_changes

        try:
            report = check_changes(self.vault, now=utcnow())
        except Exception as error:
            self.post_message(WorkFailed("check what changed", describe(error)))
            return False
        return bool(report.proposed or report.withdrawn or report.reopened)

    # --- handlers: they own the widgets ------------------------------------------------------

    @on(IndexOpened)
    def index_opened(self, message: IndexOpened) -> None:
        first = self.index is None
        self.index = message.index
        if first:
            self.wanted = self.wanted.with_text(self.filter_text)
            self.run_filter(message.index, self.wanted, False, None)
        elif message.changed:
            self._order = None
            self.run_filter(message.index, self.wanted, True, None)
        if not message.synced:
            self._sync_after_paint = True
            return
        for notice in message.notices:
            self.notify(notice, title="Index")
        if message.is_git is False:
            self.notify(not_git_warning(self.vault), title="No git", severity="warning", timeout=8)
        if self.watching:
            self.watch_files()

    @on(Filtered)
    def filtered(self, message: Filtered) -> None:
        if message.pages.wanted != self.wanted:
            return  # the person typed on; a newer filter is on its way
        if message.order is not None:
            self._order = (message.pages.wanted, message.order)
        self._total = message.total
        if self._sync_after_paint:
            self._sync_after_paint = False
            self.call_after_refresh(self.sync_index)
        memory_list = self.memory_list
        if memory_list.pages is None:
            self.loaded(memory_list)
            self.refresh_bindings()  # the Footer learns the list's keys once it can take them
            self.call_after_refresh(self.app.settle)  # type: ignore[attr-defined]
        memory_list.border_subtitle = None
        memory_list.empty_text = (
            "No memories yet." if message.total == 0 else "No memories match the filter."
        )
        memory_list.border_title = count_label(
            message.pages.count, message.total, message.pages.wanted
        )
        memory_list.show(message.pages, message.first_page, keep_cursor=message.keep_cursor)
        if self._reveal is not None:
            # A memory just written is the newest: the first row, when the filter shows it.
            if message.first_page and message.first_page[0].memory.path == self._reveal:
                memory_list.cursor = 0
            self._reveal = None
        if message.pages.known < message.pages.count:
            self.call_after_refresh(self.complete_filter, self.index, message.pages, message.order)
        if message.total == 0:
            self.opened = self._requested = None
            self.memory_view.show_message(START_MESSAGE)
        elif self.memory_view.message == START_MESSAGE:
            self.memory_view.show_message(OPEN_HINT)

    def reveal(self, memory: Memory) -> None:
        """A memory just written: read it into the view, and put the cursor on it when the
        list (read again after the files changed) shows it."""
        self._reveal = memory.path
        self._requested = memory
        if self.index is not None:
            self.load_memory(self.index, memory)

    @on(Completed)
    def completed(self, message: Completed) -> None:
        if message.pages is not self.memory_list.pages:
            return
        self._order = (message.pages.wanted, message.order)
        self.memory_list.complete(message.pages, message.rowids)
        self.memory_list.border_title = count_label(
            message.pages.count, self._total, message.pages.wanted
        )

    @on(MemoryList.Opened)
    def memory_opened(self, message: MemoryList.Opened) -> None:
        pages = message.memory_list.pages
        if self.index is None or pages is None or pages.text != self.filter_text:
            return  # the row came from a list the filter is about to replace
        if self.opened is not None and self.opened.path == message.memory.path:
            # The memory is already on the right: a second enter gives it the whole screen.
            self.app.open_memory(self.opened.id, self.memory_view.shown)  # type: ignore[attr-defined]
            return
        self._requested = message.memory
        self.load_memory(self.index, message.memory)

    @on(MemoryLoaded)
    async def memory_loaded(self, message: MemoryLoaded) -> None:
        if message.full:
            if message.memory is not None:
                shown = Shown(message.memory, message.now, message.raw)
                self.app.open_memory(message.memory.id, shown)  # type: ignore[attr-defined]
            return
        self.opened = message.memory
        if message.memory is None:
            self.memory_view.show_message(f"{message.path} is no longer in the vault.")
            return
        await self.memory_view.show(message.memory, message.now, message.raw)

    @on(VaultChanged)
    def vault_changed(self, message: VaultChanged) -> None:
        if self.index is None:
            return
        self._order = None
        self.run_filter(self.index, self.wanted, True, None)
        if self._requested is not None:
            self.load_memory(self.index, self._requested)

    @on(FacetChoices)
    def facet_choices(self, message: FacetChoices) -> None:
        for bar in self.query(FacetBar):
            bar.set_choices(message.namespaces, message.tags)

    @on(FacetBar.Changed)
    def facets_changed(self, message: FacetBar.Changed) -> None:
        wanted = message.facets.with_text(self.filter_text)
        if self.index is not None and wanted != self.wanted:
            self.show_filter(wanted)

    @on(FacetBar.Closed)
    def facets_closed(self, message: FacetBar.Closed) -> None:
        if message.bar.has_class("-shown"):
            self._hide_facets(message.bar)

    def failed(self, what: str, why: str) -> None:
        if self._sync_after_paint:
            self._sync_after_paint = False
            self.sync_index()
        self.memory_list.loading = False
        self.memory_list.border_subtitle = None
        super().failed(what, why)
        if self.index is None:
            self.memory_view.show_message(f"Could not {what}: {why}")

    # --- filtering -------------------------------------------------------------------------

    @property
    def filter_text(self) -> str:
        return self.query_one("#filter", Input).value.strip()

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        if bool(event.value) != self._filter_typed:
            self._filter_typed = bool(event.value)
            self.refresh_bindings()  # esc clears it: the footer offers it only then
        now = time.monotonic()
        after_a_pause = now - self._last_key >= FILTER_DEBOUNCE
        self._last_key = now
        if self._debounce is None and after_a_pause:
            self.apply_filter()
            return
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(FILTER_DEBOUNCE, self.apply_filter)

    def apply_filter(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if self.index is not None and self.filter_text != self.wanted.text:
            self.show_filter(self.wanted.with_text(self.filter_text))

    def show_filter(self, wanted: ListFilter) -> None:
        """Ask for the rows of this filter; the facets' order is read again only if they changed."""
        assert self.index is not None
        cached = self._order
        order = cached[1] if cached is not None and cached[0].same_facets(wanted) else None
        self.wanted = wanted
        self.memory_list.border_subtitle = "filtering…"
        self.run_filter(self.index, wanted, False, order)

    @on(Input.Submitted, "#filter")
    def filter_submitted(self) -> None:
        self.action_focus_list()

    # --- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `/` is a priority binding, so the keys that follow it in the same read reach
        # the filter; while the filter has focus, `/` is a character to type.
        if action == "focus_filter":
            return not isinstance(self.focused, Input)
        if action == "clear_filter":  # nothing to clear and nowhere to go back from
            return self._filter_typed or self.focused is self.query_one("#filter", Input)
        return True

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        if action == "clear_filter":
            return "No filter is typed: there is nothing to clear (/ starts one)."
        return None

    # Focus moves at once (`Widget.focus` waits a turn) for the same reason.
    def action_focus_filter(self) -> None:
        self.set_focus(self.query_one("#filter", Input))

    def action_focus_list(self) -> None:
        self.apply_filter()
        self.set_focus(self.memory_list)

    def action_open_full(self) -> None:
        """The memory under the cursor on a screen of its own, composed with the note (read
        here first unless the view on the right shows it), so it is painted once."""
        memory = self.memory_list.current
        if memory is None or self.index is None:
            return
        shown = self.memory_view.shown
        if shown is not None and shown.memory.path == memory.path:
            self.app.open_memory(memory.id, shown)  # type: ignore[attr-defined]
        else:
            self.load_memory(self.index, memory, full=True)

    async def action_toggle_facets(self) -> None:
        bars = self.query(FacetBar)
        if not bars:
            # Mounted on first use: its five Selects would slow the first paint of the list.
            await self.mount(FacetBar(id="facets"), after="#filter")
        bar = self.query_one(FacetBar)
        if bar.has_class("-shown"):
            self._hide_facets(bar)
            return
        bar.add_class("-shown")
        self.set_focus(bar.query_one("Select"))
        if self.index is not None:
            self.load_facet_choices(self.index)

    def _hide_facets(self, bar: FacetBar) -> None:
        bar.remove_class("-shown")
        self.set_focus(self.memory_list)

    def action_clear_filter(self) -> None:
        self.query_one("#filter", Input).value = ""
        self.action_focus_list()
