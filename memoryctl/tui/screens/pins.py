"""The pins, in the person's order, against the profile's token budget.

The token counts are the bundle's own (the one renderer), so the meter says exactly
what the pins take in the agent's context.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Header, OptionList, Select
from textual.widgets.option_list import Option

from memoryctl.tui.screens.base import AppScreen, kept_edits, opened_index
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.pick_memory import PickMemoryScreen
from memoryctl.tui.widgets.token_meter import TokenMeter
from memoryctl.wording import counted

if TYPE_CHECKING:
    from memoryctl.memory import Memory
    from memoryctl.storage.vault import Vault


@dataclass(frozen=True)
class PinRow:
    memory: Memory
    tokens: int | None  # None: held out of the bundle, for `held`
    held: str | None = None


@dataclass(frozen=True)
class PinsState:
    rows: list[PinRow]
    used: int  # what the pins take in the bundle's text, headings included
    budget: int
    profile: str


def read_pins(vault: Vault, profile: str | None) -> PinsState:
    from memoryctl.context import context_bundle

    index = opened_index(vault)
    bundle = context_bundle(vault, profile=profile)
    tokens = {e.memory.id: e.tokens for e in bundle.pinned}
    held = {x.id: x.reason for x in bundle.excluded}
    rows = [PinRow(m, tokens.get(m.id), held.get(m.id)) for m in index.pins()]
    return PinsState(rows, bundle.used, bundle.budget, bundle.profile.name)


def pin_prompt(number: int, row: PinRow) -> Content:
    tokens = (
        (f"{row.tokens:>5} tok", "$text-muted")
        if row.tokens is not None
        else (" held  ", "$text-warning")
    )
    parts: list[Content | tuple[str, str] | str] = [
        (f"{number:>2}. ", "$text-muted"),
        tokens,
        "  ",
        row.memory.title,
    ]
    if row.held:
        parts.append((f"  ({row.held})", "$text-warning"))
    return Content.assemble(*parts)


class PinsScreen(AppScreen):
    AUTO_FOCUS = "#pins"

    DEFAULT_CSS = """
    PinsScreen {
        #pins-top { height: auto; layout: horizontal; }
        #pins-top TokenMeter { width: 1fr; height: 3; padding: 1 1; }
        #pins-top Select { width: 24; }
        #pins { height: 1fr; border: tall $border-blurred; }
        #pins:focus { border: tall $border; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+up,K",
            "move(-1)",
            "Move up",
            id="memoryctl.pins.up",
            tooltip="Move the pin up: it comes earlier in context",
        ),
        Binding(
            "ctrl+down,J",
            "move(1)",
            "Move down",
            id="memoryctl.pins.down",
            tooltip="Move the pin down: it comes later in context",
        ),
        Binding("u,delete", "unpin", "Unpin", id="memoryctl.pins.unpin", tooltip="Unpin it"),
        Binding(
            "a", "add", "Add pin", id="memoryctl.pins.add", tooltip="Search for a memory to pin"
        ),
        Binding("o", "open", "Open", id="memoryctl.pins.open", tooltip="Open the pinned memory"),
    ]

    @dataclass
    class Read(Message):
        state: PinsState

    @dataclass
    class Done(Message):
        said: str

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault)
        self.state: PinsState | None = None
        self.profile: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="pins-top"):
            yield TokenMeter(id="pins-meter")
            names = sorted(self.vault.config.profiles)
            yield Select(
                [(name, name) for name in names],
                value="default" if "default" in names else names[0],
                allow_blank=False,
                id="pins-profile",
            )
        yield OptionList(id="pins")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#pins", OptionList).loading = True
        self.reload()

    def reload(self) -> None:
        self.read(self.profile)

    @work(thread=True, exclusive=True, group="pins", exit_on_error=False, name="read the pins")
    def read(self, profile: str | None) -> None:
        state = read_pins(self.vault, profile)
        self.post_message(self.Read(state))

    @on(Read)
    def read_done(self, message: Read) -> None:
        self.loading = False
        pins = self.query_one("#pins", OptionList)
        pins.loading = False
        keep = pins.highlighted
        self.state = message.state
        self.show_rows(message.state.rows, keep)
        meter = self.query_one(TokenMeter)
        meter.show("Pins", message.state.used, message.state.budget)
        pins.border_title = (
            f"{counted(len(message.state.rows), 'pin')}, in the order the agent reads them"
        )
        pins.border_subtitle = "over the budget: only the pins fit" if meter.over else None

    def show_rows(self, rows: list[PinRow], highlighted: int | None) -> None:
        pins = self.query_one("#pins", OptionList)
        pins.clear_options()
        pins.add_options(
            Option(pin_prompt(n, row), id=row.memory.id) for n, row in enumerate(rows, 1)
        )
        if rows:
            pins.highlighted = min(highlighted or 0, len(rows) - 1)

    @on(Select.Changed, "#pins-profile")
    def profile_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != (self.profile or "default"):
            self.profile = event.value
            self.reload()

    # --- actions ---------------------------------------------------------------------------

    @property
    def current(self) -> PinRow | None:
        index = self.query_one("#pins", OptionList).highlighted
        if self.state is None or index is None or index >= len(self.state.rows):
            return None
        return self.state.rows[index]

    def action_move(self, step: int) -> None:
        pins = self.query_one("#pins", OptionList)
        index = pins.highlighted
        if self.state is None or index is None:
            return
        target = index + step
        if not 0 <= target < len(self.state.rows):
            return
        rows = list(self.state.rows)
        rows[index], rows[target] = rows[target], rows[index]
        # The list moves at once; the files follow in a worker.
        self.state = PinsState(rows, self.state.used, self.state.budget, self.state.profile)
        self.show_rows(rows, target)
        self.reorder([row.memory.id for row in rows])

    @work(
        thread=True,
        exclusive=True,
        group="pins-write",
        exit_on_error=False,
        name="reorder the pins",
    )
    def reorder(self, ids: list[str]) -> None:
        from memoryctl.actions import reorder_pins

        reorder_pins(self.vault, ids)
        self.post_message(self.Done(kept_edits(self.vault).strip()))

    def action_unpin(self) -> None:
        row = self.current
        if row is not None:
            self.loading = True
            self.set_pin(row.memory.id, False, f"Unpinned “{row.memory.title}”")

    def action_add(self) -> None:
        index = self.vault.index if self.state is not None else None
        if index is not None:
            self.app.push_screen(PickMemoryScreen(index, "Pin a memory", pinned=False), self._add)

    def _add(self, memory_id: str | None) -> None:
        if memory_id:
            self.loading = True
            self.set_pin(memory_id, True, "Pinned")

    @work(
        thread=True, exclusive=True, group="pins-write", exit_on_error=False, name="change the pin"
    )
    def set_pin(self, memory_id: str, pinned: bool, said: str) -> None:
        from memoryctl.actions import set_pinned

        memory = set_pinned(self.vault, memory_id, pinned)
        said = said if not pinned else f"Pinned “{memory.title}”"
        self.post_message(self.Done(said + kept_edits(self.vault)))

    @on(Done)
    def done(self, message: Done) -> None:
        if message.said:
            self.notify(message.said)
        self.reload()

    def action_open(self) -> None:
        row = self.current
        if row is not None:
            self.app.open_memory(row.memory.id)  # type: ignore[attr-defined]

    @on(OptionList.OptionSelected, "#pins")
    def selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.app.open_memory(event.option.id)  # type: ignore[attr-defined]
