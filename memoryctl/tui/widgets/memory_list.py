"""The list of memories: a virtualized view over the index, fetched a page at a time.

The widget never holds every row. It knows the number of matches, keeps a few pages
of rows in a small LRU, and asks a thread worker for the page under the viewport when
it is missing. One page is fetched at a time, so holding `pagedown` through 100,000
rows queues no stale queries behind the index's lock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from memoryctl.corrections import ReachSource, overtaken
from memoryctl.memory import KINDS, Memory, marks
from memoryctl.tui.list_filter import ListFilter
from memoryctl.tui.workers import QUIET

PAGE_SIZE = 100
KEEP_PAGES = 8
KIND_WIDTH = max(len(kind) for kind in KINDS)


def fit(text: str, width: int) -> str:
    """The text cut to `width` cells, with an ellipsis when something was cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(width - 1, 0)) + "…" if width > 0 else ""


class RowSource(ReachSource, Protocol):
    """What the list needs from an index (small, so tests can pass a fake)."""

    def by_rowids(self, rowids: Sequence[int]) -> Sequence[Memory]: ...


@dataclass(frozen=True)
class Row:
    memory: Memory
    overtaken: bool  # it shows a `now:` line: the same rule as `memoryctl list`

    @property
    def marks(self) -> str:
        return marks(self.memory, self.overtaken)


class RowPages:
    """The rows that match one filter: their rowids in order, and the pages read so far.

    `fetch` blocks on the index and is called from a worker; `store` and `row` are
    called on the UI thread only.
    """

    def __init__(
        self,
        source: RowSource,
        wanted: ListFilter,
        rowids: Sequence[int],
        page_size: int = PAGE_SIZE,
        count: int | None = None,
    ) -> None:
        """`count` is for rows whose first rowids are known before the rest (a filter
        most memories match): `complete` brings the others."""
        self.source = source
        self.wanted = wanted
        self.rowids = rowids
        self.page_size = page_size
        self.count = len(rowids) if count is None else count
        self._pages: OrderedDict[int, list[Row]] = OrderedDict()
        self.failed: dict[int, str] = {}

    @property
    def text(self) -> str:
        return self.wanted.text

    @property
    def known(self) -> int:
        """How many rows can be read now; the rest show as pending until `complete`."""
        return len(self.rowids)

    def complete(self, rowids: Sequence[int]) -> None:
        """Every rowid, in order. Pages read from the first ones stay if they still hold."""
        if list(rowids[: self.known]) != list(self.rowids):
            self._pages.clear()
        self.rowids = rowids
        self.count = len(rowids)

    def fetch(self, page: int) -> list[Row]:
        start = page * self.page_size
        memories = self.source.by_rowids(self.rowids[start : start + self.page_size])
        shown = overtaken(self.source, memories)
        return [Row(m, m.id in shown) for m in memories]

    def store(self, page: int, rows: list[Row]) -> None:
        self._pages[page] = rows
        self._pages.move_to_end(page)
        while len(self._pages) > KEEP_PAGES:
            self._pages.popitem(last=False)

    def row(self, number: int) -> Row | None:
        page, slot = divmod(number, self.page_size)
        rows = self._pages.get(page)
        if rows is None:
            return None
        self._pages.move_to_end(page)
        return rows[slot] if slot < len(rows) else None

    def missing(self, first: int, last: int) -> list[int]:
        """Pages holding rows first..last (inclusive) that are neither cached nor failed."""
        last = min(last, self.known - 1)
        if last < first:
            return []
        pages = range(first // self.page_size, last // self.page_size + 1)
        return [p for p in pages if p not in self._pages and p not in self.failed]


@dataclass(frozen=True)
class LineStyles:
    """The styles of a row's parts, as the list's CSS says them now."""

    base: Style
    cursor: Style
    pending: Style
    date: Style
    kind: Style
    marks: dict[str, Style]


class MemoryList(ScrollView, can_focus=True):
    """Memories, newest first, one per line: marks, created date, kind and title."""

    DEFAULT_CSS = """
    MemoryList {
        background: $surface;
        border: tall $border-blurred;
        overflow-x: hidden;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
        &:focus {
            border: tall $border;
            background-tint: $foreground 5%;
            & > .memory-list--cursor {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
        }
        & > .memory-list--cursor {
            color: $block-cursor-blurred-foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .memory-list--date { color: $text-muted; }
        & > .memory-list--kind { color: $text-secondary; }
        & > .memory-list--pending { color: $text-muted; text-style: italic; }
        & > .memory-list--mark-error { color: $text-error; text-style: bold; }
        & > .memory-list--mark-pinned { color: $text-accent; text-style: bold; }
        & > .memory-list--mark-overtaken { color: $text-warning; text-style: bold; }
        & > .memory-list--mark-review { color: $text-warning; }
        & > .memory-list--mark-retired { color: $text-muted; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "memory-list--cursor",
        "memory-list--date",
        "memory-list--kind",
        "memory-list--pending",
        "memory-list--mark-error",
        "memory-list--mark-pinned",
        "memory-list--mark-overtaken",
        "memory-list--mark-review",
        "memory-list--mark-retired",
    }

    MARK_CLASSES: ClassVar[dict[str, str]] = {
        "!": "memory-list--mark-error",
        "*": "memory-list--mark-pinned",
        "~": "memory-list--mark-overtaken",
        "?": "memory-list--mark-review",
        "x": "memory-list--mark-retired",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open",
            "Open",
            id="memoryctl.list.open",
            tooltip="Open the memory under the cursor",
        ),
        Binding(
            "up",
            "cursor_up",
            "Up",
            show=False,
            id="memoryctl.list.up",
            tooltip="Move the cursor up",
        ),
        Binding(
            "down",
            "cursor_down",
            "Down",
            show=False,
            id="memoryctl.list.down",
            tooltip="Move the cursor down",
        ),
        Binding(
            "pageup",
            "page_up",
            "Page up",
            show=False,
            id="memoryctl.list.page-up",
            tooltip="Move the cursor up a page",
        ),
        Binding(
            "pagedown",
            "page_down",
            "Page down",
            show=False,
            id="memoryctl.list.page-down",
            tooltip="Move the cursor down a page",
        ),
        Binding(
            "home",
            "first",
            "First",
            show=False,
            id="memoryctl.list.first",
            tooltip="Move the cursor to the newest memory",
        ),
        Binding(
            "end",
            "last",
            "Last",
            show=False,
            id="memoryctl.list.last",
            tooltip="Move the cursor to the oldest memory",
        ),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)
    empty_text: reactive[str] = reactive("")

    @dataclass
    class Opened(Message):
        """The person asked to read this memory."""

        memory_list: MemoryList
        memory: Memory

        @property
        def control(self) -> MemoryList:
            return self.memory_list

    @dataclass
    class PageLoaded(Message):
        pages: RowPages
        page: int
        rows: list[Row]
        error: str | None = None

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.pages: RowPages | None = None
        self._fetching = False
        self._request_scheduled = False
        self._styles: LineStyles | None = None

    # --- what the list shows ---------------------------------------------------------

    def show(self, pages: RowPages, first_page: list[Row], *, keep_cursor: bool = False) -> None:
        """Show the rows of a new filter (or of the same filter after the vault changed)."""
        pages.store(0, first_page)
        self.pages = pages
        self.virtual_size = Size(0, pages.count)
        if keep_cursor:
            self.cursor = min(self.cursor, max(pages.count - 1, 0))
        else:
            self.scroll_to(y=0, animate=False)
            self.cursor = 0
        self.refresh()

    def complete(self, pages: RowPages, rowids: Sequence[int]) -> None:
        """The rest of the rowids of the rows shown, which were counted after the first page."""
        pages.complete(rowids)
        if pages is self.pages:
            self.virtual_size = Size(0, pages.count)
            self.cursor = self.cursor  # validated again: the count can have changed
            self.refresh()

    @property
    def current(self) -> Memory | None:
        row = self.pages.row(self.cursor) if self.pages else None
        return row.memory if row else None

    def validate_cursor(self, cursor: int) -> int:
        count = self.pages.count if self.pages else 0
        return max(0, min(cursor, count - 1))

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_line(old)
        self.refresh_line(new)
        self._scroll_to_cursor()

    def watch_empty_text(self) -> None:
        self.refresh()

    def _scroll_to_cursor(self) -> None:
        top = round(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    # --- rendering -------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # The styles are worked out once a paint, not once a row: `rich_style` walks every
        # ancestor's styles, which was most of drawing a row.
        self._styles = None
        return super().render_lines(crop)

    def notify_style_update(self) -> None:
        self._styles = None
        super().notify_style_update()

    @property
    def line_styles(self) -> LineStyles:
        if self._styles is None:
            base = self.rich_style
            get = self.get_component_rich_style
            self._styles = LineStyles(
                base=base,
                cursor=base + get("memory-list--cursor"),
                pending=base + get("memory-list--pending"),
                date=base + get("memory-list--date"),
                kind=base + get("memory-list--kind"),
                marks={mark: base + get(name) for mark, name in self.MARK_CLASSES.items()},
            )
        return self._styles

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        styles = self.line_styles
        base = styles.base
        number = round(self.scroll_offset.y) + y
        pages = self.pages
        if pages is None:
            return Strip.blank(width, base)
        if pages.count == 0:
            if y == 0 and self.empty_text:
                line = Strip([Segment(f" {self.empty_text}", styles.pending)])
                return line.crop_extend(0, width, base)
            return Strip.blank(width, base)
        if number >= pages.count:
            return Strip.blank(width, base)
        row = pages.row(number)
        if row is None and number >= pages.known:
            return self._pending_line(pages, number, width)  # `complete` will ask for it
        if row is None and not pages.missing(number, number):
            return Strip.blank(width, base)  # the index shrank since it was counted
        if row is None:
            if not self._request_scheduled:
                self._request_scheduled = True
                self.call_later(self._request_pages)
            return self._pending_line(pages, number, width)
        return self._row_line(row, number == self.cursor, width)

    def _row_line(self, row: Row, is_cursor: bool, width: int) -> Strip:
        styles = self.line_styles
        base = styles.base
        memory = row.memory
        lead = f"{row.marks} {memory.created[:10]} {memory.kind:<{KIND_WIDTH}} "
        title = fit(memory.title, width - cell_len(lead))
        if is_cursor:
            return Strip([Segment(lead + title, styles.cursor)]).crop_extend(
                0, width, styles.cursor
            )
        segments = [Segment(mark, styles.marks.get(mark, base)) for mark in row.marks]
        segments += [
            Segment(" ", base),
            Segment(memory.created[:10], styles.date),
            Segment(" ", base),
            Segment(f"{memory.kind:<{KIND_WIDTH}}", styles.kind),
            Segment(" ", base),
            Segment(title, base),
        ]
        return Strip(segments).crop_extend(0, width, base)

    def _pending_line(self, pages: RowPages, number: int, width: int) -> Strip:
        styles = self.line_styles
        style = styles.cursor if number == self.cursor else styles.pending
        error = pages.failed.get(number // pages.page_size)
        text = f"     could not read the index: {error}" if error else "     …"
        return Strip([Segment(text, style)]).crop_extend(0, width, style)

    # --- fetching pages --------------------------------------------------------------

    def _request_pages(self) -> None:
        self._request_scheduled = False
        if self._fetching or self.pages is None:
            return
        top = round(self.scroll_offset.y)
        height = max(self.scrollable_content_region.height, 1)
        wanted = self.pages.missing(top, top + height - 1)
        if wanted:
            self._fetching = True
            self._fetch_page(self.pages, wanted[0])

    @work(thread=True, group="memory-list-pages", exit_on_error=False, description=QUIET)
    def _fetch_page(self, pages: RowPages, page: int) -> None:
        try:
            rows = pages.fetch(page)
        except Exception as error:
            from memoryctl.errors import describe

            self.post_message(self.PageLoaded(pages, page, [], describe(error)[0]))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.PageLoaded(pages, page, rows))

    @on(PageLoaded)
    def _page_loaded(self, message: PageLoaded) -> None:
        message.stop()
        self._fetching = False
        if message.pages is not self.pages:
            self._request_pages()
            return
        if message.error is not None:
            message.pages.failed[message.page] = message.error
        else:
            message.pages.store(message.page, message.rows)
        self.refresh()
        self._request_pages()

    # --- keys and mouse --------------------------------------------------------------

    def _page_height(self) -> int:
        return max(self.scrollable_content_region.height - 1, 1)

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_page_up(self) -> None:
        self.cursor -= self._page_height()

    def action_page_down(self) -> None:
        self.cursor += self._page_height()

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self.pages.count - 1 if self.pages else 0

    def action_open(self) -> None:
        memory = self.current
        if memory is not None:
            self.post_message(self.Opened(self, memory))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.pages is None:
            return
        number = round(self.scroll_offset.y) + offset.y
        if number < self.pages.count:
            self.cursor = number
            self.action_open()
