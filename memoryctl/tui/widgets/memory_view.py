"""One memory, readable: title, frontmatter fields, Markdown body and its `now:` lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Container, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static

from memoryctl.memory import Memory

OPEN_HINT = "Press enter to open the memory under the cursor."
MOST_RENDERED = 16_000  # characters of a body rendered as Markdown (see `rendered_head`)
OVERTAKEN_NOTICE = "~ A newer correction overtakes this memory: see the now: lines below."


def memory_fields(memory: Memory) -> list[tuple[str, str]]:
    """The frontmatter a person reads, as (name, value) pairs; empty values left out."""
    from memoryctl.mcp.agents import agent_of  # not at the top: the list paints without it

    source = memory.source_kind or ""
    if memory.source_ref:
        source = f"{source}: {memory.source_ref}" if source else memory.source_ref
    anchors = [a.path + (f"#{a.symbol}" if a.symbol else "") for a in memory.anchors]
    agent = agent_of(memory.source_kind, memory.source_ref)
    pairs = [
        ("id", memory.id if memory.has_id else f"{memory.id} (no id in the file)"),
        ("kind", memory.kind),
        ("status", memory.status),
        ("pinned", "yes" if memory.pinned else ""),
        ("namespace", memory.namespace),
        ("visibility", memory.visibility),
        ("created", memory.created),
        ("tags", ", ".join(memory.tags)),
        ("written by", f"agent {agent} (its inference)" if agent else ""),
        ("source", source),
        ("deprecates", ", ".join(memory.deprecates)),
        ("derived_from", ", ".join(memory.derived_from)),
        ("anchors", ", ".join(anchors)),
    ]
    pairs += [("problem", problem) for problem in memory.problems]
    return [(name, value) for name, value in pairs if value]


@dataclass(frozen=True)
class Shown:
    """A memory as the view shows it: the note, the corrections that overtake it (its
    `now:` lines) and, for a file that cannot be read, its raw text."""

    memory: Memory
    now: Sequence[Memory] = ()
    raw: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "now", tuple(self.now))  # so two Shown compare by value

    @property
    def classes(self) -> str:
        flags = (
            ("-broken", self.memory.broken is not None),
            ("-overtaken", bool(self.now)),
            ("-cut", bool(self.cut)),
        )
        return " ".join(name for name, on in flags if on)

    @property
    def fields(self) -> list[tuple[str, str]]:
        memory = self.memory
        if memory.broken is None:
            return memory_fields(memory)
        return [("path", memory.path), ("created", f"{memory.created} (file time)")]

    @property
    def error(self) -> str:
        broken = self.memory.broken
        return f"Cannot read this file: {broken}" if broken is not None else ""

    @property
    def body(self) -> str:
        """The Markdown the view renders: the note's body, or its head when it is long."""
        if self.memory.broken is not None:
            return ""
        return rendered_head(self.memory.body)

    @property
    def raw_head(self) -> str:
        """The raw text of a file that cannot be read, or its head when it is long."""
        return rendered_head(self.raw or "") if self.memory.broken is not None else ""

    @property
    def cut(self) -> str:
        """What the view says when it shows only the head of a long note; "" otherwise."""
        text = (self.raw or "") if self.memory.broken is not None else self.memory.body
        shown = len(rendered_head(text))
        if shown == len(text):
            return ""
        return (
            f"This note is {len(text):,} characters; the view shows the first {shown:,}. "
            "Open it in $EDITOR (E on its own screen) to read it whole."
        )


def rendered_head(body: str, most: int = MOST_RENDERED) -> str:
    """`body`, or its first `most` characters ended at a paragraph when one ends in the
    last quarter. Rendering Markdown takes the UI thread about 5 ms per 1,000
    characters, so a pasted log of 100,000 would freeze the app for half a second."""
    if len(body) <= most:
        return body
    head = body[:most]
    paragraph = head.rfind("\n\n")
    return head[:paragraph] if paragraph >= most * 3 // 4 else head


def field_cells(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The grid's cells, left to right: ("name", text) then ("value", text) per field."""
    return [
        (part, text) for name, value in fields for part, text in (("name", name), ("value", value))
    ]


def now_line(correction: Memory) -> Content:
    return Content.assemble(
        ("now: ", "bold $text-warning"),
        correction.text,
        (f"  ({correction.id})", "$text-muted"),
    )


class MemoryView(VerticalScroll, can_focus=True):
    """The open memory. A broken file shows its error and raw text, so it can be read."""

    DEFAULT_CSS = """
    MemoryView {
        border: tall $border-blurred;
        padding: 0 1;
        border-title-color: $text-muted;
        &:focus { border: tall $border; border-title-color: $text; }
        #memory-title { text-style: bold; color: $text-primary; }
        #memory-overtaken { color: $text-warning; }
        #memory-fields {
            layout: grid;
            grid-size: 2;
            grid-columns: 14 1fr;
            height: auto;
            margin: 1 0 0 0;
        }
        .field-name { color: $text-muted; }
        #memory-error {
            color: $text-error;
            background: $error-muted;
            padding: 0 1;
            margin: 1 0 0 0;
        }
        #memory-raw { margin: 1 0 0 0; color: $text-muted; }
        #memory-cut { color: $text-warning; margin: 0 0 1 0; }
        #memory-body { margin: 1 0 0 0; padding: 0; background: transparent; }
        #memory-now { height: auto; margin: 0 0 1 0; }
        .now-line {
            border-left: outer $warning;
            background: $warning-muted;
            padding: 0 1;
            margin: 0 0 1 0;
        }
        #memory-message { color: $text-muted; margin: 1 0 0 0; }
        &.-overtaken #memory-body { text-opacity: 70%; }

        /* Which parts show: a memory, a broken file, or a message instead of either. */
        #memory-overtaken, #memory-error, #memory-raw, #memory-cut, #memory-message {
            display: none;
        }
        &.-cut #memory-cut { display: block; }
        &.-overtaken #memory-overtaken { display: block; }
        &.-broken #memory-error, &.-broken #memory-raw { display: block; }
        &.-broken #memory-body { display: none; }
        &.-empty > * { display: none; }
        &.-empty > #memory-message { display: block; }
    }
    """

    def __init__(self, shown: Shown | None = None, *, id: str | None = None) -> None:
        """`shown` is composed with the view, so a screen opening a memory it already read
        is laid out and painted once, not once empty and again with the memory."""
        super().__init__(id=id, classes=shown.classes if shown else "-empty")
        self._composed = shown
        self.shown: Shown | None = shown

    def compose(self) -> ComposeResult:
        shown = self._composed
        self._composed = None
        yield Static(shown.memory.title if shown else "", id="memory-title", markup=False)
        yield Static(OVERTAKEN_NOTICE, id="memory-overtaken", markup=False)
        with Container(id="memory-fields"):
            for part, text in field_cells(shown.fields) if shown else []:
                yield Static(text, classes=f"field-{part}", markup=False)
        yield Static(shown.error if shown else "", id="memory-error", markup=False)
        yield Markdown(shown.body if shown else None, id="memory-body")
        yield Static(shown.cut if shown else "", id="memory-cut", markup=False)
        yield Static(shown.raw_head if shown else "", id="memory-raw", markup=False)
        with Vertical(id="memory-now"):
            for correction in shown.now if shown else []:
                yield Static(now_line(correction), classes="now-line")
        yield Static(OPEN_HINT, id="memory-message")
        if shown:
            self.border_title = shown.memory.path

    @property
    def message(self) -> str:
        return str(self.query_one("#memory-message", Static).content)

    def show_message(self, text: str) -> None:
        """Show a hint instead of a memory (nothing open yet, an empty vault, an error)."""
        self.query_one("#memory-message", Static).update(Content(text))
        self.border_title = None
        self.shown = None
        self.set_classes("-empty")

    async def _show_fields(self, fields: list[tuple[str, str]]) -> None:
        """The fields' cells are updated in place: mounting a new set for every memory
        cost a layout of the screen each (measured in bench/tui_bench.py)."""
        grid = self.query_one("#memory-fields", Container)
        cells = list(grid.query_children(Static))
        wanted = field_cells(fields)
        for cell, (part, text) in zip(cells, wanted, strict=False):
            cell.update(text)
            cell.set_classes(f"field-{part}")
        if len(cells) > len(wanted):
            await grid.remove_children(cells[len(wanted) :])
        elif len(wanted) > len(cells):
            await grid.mount_all(
                Static(text, classes=f"field-{part}", markup=False)
                for part, text in wanted[len(cells) :]
            )

    async def show(self, memory: Memory, now: Sequence[Memory], raw: str | None = None) -> None:
        """Show a memory, the corrections that overtake it, and for a broken file its text."""
        shown = Shown(memory, now, raw)
        if shown == self.shown:
            return  # already on screen: no layout, no flicker
        self.set_classes(shown.classes)
        self.border_title = memory.path
        self.query_one("#memory-title", Static).update(memory.title)
        self.query_one("#memory-error", Static).update(shown.error)
        self.query_one("#memory-raw", Static).update(shown.raw_head)
        await self._show_fields(shown.fields)
        await self.query_one("#memory-body", Markdown).update(shown.body)
        self.query_one("#memory-cut", Static).update(shown.cut)
        now_box = self.query_one("#memory-now", Vertical)
        if now or now_box.children:
            await now_box.remove_children()
            await now_box.mount_all(Static(now_line(c), classes="now-line") for c in now)
        self.scroll_home(animate=False)
        self.shown = shown
