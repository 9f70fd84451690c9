"""The pins, in the person's order, against the profile's token budget.

The token counts are the bundle's own (the one renderer), so the meter says exactly
what the pins take in the agent's context.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Header, Select
from textual.widgets.option_list import Option

from memoryctl.tui.screens.base import AppScreen, kept_edits, opened_index
from memoryctl.tui.widgets.choice_list import ChoiceList
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.pick_memory import PickMemoryScreen
from memoryctl.tui.widgets.token_meter import TokenMeter
from memoryctl.wording import counted

# A burst of moves (K K K) is one change: written when no move came for this long.
REORDER_SETTLE = 0.8

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
    # The pinned section alone: with no pins, the pins take nothing.
    return PinsState(rows, bundle.sections.get("pinned", 0), bundle.budget, bundle.profile.name)


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
        order: list[str] | None = None  # the order it wrote, for a reorder

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault)
        self.state: PinsState | None = None
        self.profile: str | None = None
        self.reveal: str | None = None  # the pin the cursor goes to once it is read
        self.moved: list[str] | None = None  # an order not yet written: a burst of moves
        self.writing: list[str] | None = None  # the order being written
        self._settle: Timer | None = None
        self._writing = threading.Lock()  # one write at a time, in the order they were asked

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
        yield ChoiceList(id="pins")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.pins_list.loading = True
        self.reload()
        self.follow_profiles(self.query_one("#pins-profile", Select))

    def reload(self) -> None:
        self.read(self.profile)

    @work(thread=True, exclusive=True, group="pins", exit_on_error=False, name="read the pins")
    def read(self, profile: str | None) -> None:
        state = read_pins(self.vault, profile)
        self.post_message(self.Read(state))

    @property
    def pins_list(self) -> ChoiceList:
        return self.query_one("#pins", ChoiceList)

    @on(Read)
    def read_done(self, message: Read) -> None:
        self.loading = False
        pins = self.pins_list
        pins.loading = False
        keep = self.reveal or pins.highlighted_id
        self.reveal = None
        state = message.state
        order = self.moved or self.writing
        if order is not None:  # the person's moves are not written yet: they hold
            place = {mid: n for n, mid in enumerate(order)}
            ordered = sorted(state.rows, key=lambda r: place.get(r.memory.id, len(place)))
            state = PinsState(ordered, state.used, state.budget, state.profile)
        self.state = state
        self.show_rows(state.rows, keep)
        meter = self.query_one(TokenMeter)
        meter.show("Pins", state.used, state.budget)
        pins.border_title = f"{counted(len(state.rows), 'pin')}, in the order the agent reads them"
        pins.border_subtitle = "over the budget: only the pins fit" if meter.over else None
        self.refresh_bindings()

    def show_rows(self, rows: list[PinRow], keep: str | None) -> None:
        pins = self.pins_list
        at = pins.highlighted
        pins.clear_options()
        pins.add_options(
            Option(pin_prompt(n, row), id=row.memory.id) for n, row in enumerate(rows, 1)
        )
        if rows and not pins.highlight_id(keep):
            pins.highlighted = min(at or 0, len(rows) - 1)  # its pin is gone: the one after

    @on(Select.Changed, "#pins-profile")
    def profile_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != (self.profile or "default"):
            self.profile = event.value
            self.reload()

    # --- actions ---------------------------------------------------------------------------

    @property
    def current(self) -> PinRow | None:
        """The pin under the cursor, by its id."""
        chosen = self.pins_list.highlighted_id
        if self.state is None or chosen is None:
            return None
        return next((row for row in self.state.rows if row.memory.id == chosen), None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("move", "unpin", "open"):
            return bool(self.state and self.state.rows)
        return True

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        if self.state is None:
            return "The pins are still being read."
        return "No memory is pinned: a searches for one to pin."

    def action_move(self, step: int) -> None:
        row = self.current
        if self.state is None or row is None:
            return
        rows = list(self.state.rows)
        index = rows.index(row)
        target = index + step
        if not 0 <= target < len(rows):
            where = (
                "first: the agent reads it first" if step < 0 else "last: the agent reads it last"
            )
            self.notify(f"“{row.memory.title}” is already {where}.", severity="warning")
            return
        rows[index], rows[target] = rows[target], rows[index]
        # The list moves at once; the files follow when the moves stop, in one commit.
        self.state = PinsState(rows, self.state.used, self.state.budget, self.state.profile)
        self.moved = [r.memory.id for r in rows]
        self.show_rows(rows, row.memory.id)
        if self._settle is not None:
            self._settle.stop()
        self._settle = self.set_timer(REORDER_SETTLE, self.write_order)

    def write_order(self) -> None:
        """Write the order the moves left, if any are waiting."""
        if self._settle is not None:
            self._settle.stop()
            self._settle = None
        if self.moved is not None:
            self.writing, self.moved = self.moved, None
            self.reorder(self.writing)

    def on_screen_suspend(self) -> None:
        self.write_order()  # the person left the screen: the burst is over

    def on_unmount(self) -> None:
        if self.moved is not None:  # the app is closing: written now, before it ends
            from memoryctl.actions import reorder_pins

            reorder_pins(self.vault, self.moved)
            self.moved = None

    @work(thread=True, group="pins-write", exit_on_error=False, name="reorder the pins")
    def reorder(self, ids: list[str]) -> None:
        from memoryctl.actions import reorder_pins

        try:
            with self._writing:
                reorder_pins(self.vault, ids)
        finally:
            self.post_message(self.Done(kept_edits(self.vault).strip(), ids))

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
            self.reveal = memory_id  # the cursor goes to the new pin
            self.set_pin(memory_id, True, "Pinned")

    def set_pin(self, memory_id: str, pinned: bool, said: str) -> None:
        """Pin or unpin, after writing the order of any moves made just before."""
        order, self.moved = self.moved, None
        if self._settle is not None:
            self._settle.stop()
        self.write_pin(memory_id, pinned, said, order)

    @work(thread=True, group="pins-write", exit_on_error=False, name="change the pin")
    def write_pin(self, memory_id: str, pinned: bool, said: str, order: list[str] | None) -> None:
        from memoryctl.actions import reorder_pins, set_pinned

        with self._writing:
            if order is not None:
                reorder_pins(self.vault, order)
            memory = set_pinned(self.vault, memory_id, pinned)
        said = said if not pinned else f"Pinned “{memory.title}”"
        self.post_message(self.Done(said + kept_edits(self.vault)))

    @on(Done)
    def done(self, message: Done) -> None:
        if message.order is not None and message.order == self.writing:
            self.writing = None
        if message.said:
            self.notify(message.said)
        self.reload()

    def action_open(self) -> None:
        row = self.current
        if row is not None:
            self.app.open_memory(row.memory.id)  # type: ignore[attr-defined]

    @on(ChoiceList.OptionSelected, "#pins")
    def selected(self, event: ChoiceList.OptionSelected) -> None:
        if event.option.id:
            self.app.open_memory(event.option.id)  # type: ignore[attr-defined]
