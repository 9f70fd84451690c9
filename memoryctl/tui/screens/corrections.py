"""Corrections and their reach: which memories each one speaks for, with the matched text
highlighted; detach a false match, and reattach one detached before; write a new
correction and watch its reach as you type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Header, OptionList
from textual.widgets.option_list import Option

from memoryctl.reach import inactive_reason
from memoryctl.tui.screens.base import AppScreen, opened_index
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.highlight import highlighted
from memoryctl.tui.widgets.modals import ConfirmScreen
from memoryctl.wording import counted

if TYPE_CHECKING:
    from memoryctl.memory import Memory
    from memoryctl.storage.vault import Vault


def read_corrections(vault: Vault) -> list[Memory]:
    found = opened_index(vault).with_deprecates()
    return sorted(found, key=lambda m: m.order_key, reverse=True)


def reach_prompt(memory: Memory, needle: str) -> Content:
    return Content.assemble(
        (memory.title, "bold"),
        (f"  {memory.created[:10]} · names “{needle}”\n", "$text-muted"),
        highlighted(memory.text, [needle]),
    )


def detached_prompt(memory: Memory) -> Content:
    return Content.assemble(
        (memory.title, "dim"),
        (f"  {memory.created[:10]} · detached: no now: line\n", "$text-muted"),
        (memory.text, "dim"),
    )


class CorrectionsScreen(AppScreen):
    AUTO_FOCUS = "#corrections"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012

    DEFAULT_CSS = """
    CorrectionsScreen {
        #corrections-panes { height: 1fr; }
        #corrections { width: 2fr; }
        #reach { width: 3fr; }
        #corrections, #reach { height: 1fr; border: tall $border-blurred; }
        #corrections:focus, #reach:focus { border: tall $border; }
        #reach > .option-list--option { padding: 0 1 1 1; }
        &.-narrow #corrections-panes { layout: vertical; }
        &.-narrow #corrections, &.-narrow #reach { width: 1fr; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "d",
            "detach",
            "Detach",
            id="memoryctl.corrections.detach",
            tooltip="Stop the correction from reaching this memory (a false match)",
        ),
        Binding(
            "a",
            "reattach",
            "Reattach",
            id="memoryctl.corrections.reattach",
            tooltip="Let the correction reach this detached memory again",
        ),
        Binding(
            "n",
            "new",
            "New correction",
            id="memoryctl.corrections.new",
            tooltip="Write a new correction and see its reach before saving",
        ),
        Binding(
            "o",
            "open",
            "Open",
            id="memoryctl.corrections.open",
            tooltip="Open the memory under the cursor",
        ),
    ]

    @dataclass
    class Listed(Message):
        corrections: list[Memory]

    @dataclass
    class Reached(Message):
        correction: Memory
        reached: list[tuple[Memory, str]]
        inactive: str | None = None  # why it reaches nothing: retired, needs review
        dormant: int = 0  # what its strings name, which it would reach again
        detached: list[Memory] = field(default_factory=list)

    @dataclass
    class Detached(Message):
        correction: Memory
        memory: Memory
        undo: bool = False

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault)
        self.corrections: list[Memory] = []
        self.shown: Memory | None = None
        self.reached: list[tuple[Memory, str]] = []
        self.detached: list[Memory] = []  # the shown correction's, listed after its reach

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="corrections-panes"):
            yield OptionList(id="corrections")
            yield OptionList(id="reach")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#corrections").loading = True
        self.query_one("#corrections").border_title = "Corrections"
        self.query_one("#reach").border_title = "Reach"
        self.reload()

    def reload(self) -> None:
        self.list_corrections()

    @work(
        thread=True,
        exclusive=True,
        group="corrections",
        exit_on_error=False,
        name="list the corrections",
    )
    def list_corrections(self) -> None:
        found = read_corrections(self.vault)
        self.post_message(self.Listed(found))

    @on(Listed)
    def listed(self, message: Listed) -> None:
        box = self.query_one("#corrections", OptionList)
        box.loading = False
        keep = self.shown.id if self.shown else None
        self.corrections = message.corrections
        box.clear_options()
        box.add_options(
            Option(
                Content.assemble(
                    (m.title, "bold" if m.status == "active" else "dim"),
                    (f" · inactive ({inactive_reason(m)})" if inactive_reason(m) else "", "dim"),
                    ("\n" + ", ".join(f"“{d}”" for d in m.deprecates), "$text-muted"),
                ),
                id=m.id,
            )
            for m in message.corrections
        )
        box.border_title = counted(len(message.corrections), "correction")
        ids = [m.id for m in message.corrections]
        if ids:
            box.highlighted = ids.index(keep) if keep in ids else 0

    @on(OptionList.OptionHighlighted, "#corrections")
    def correction_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self.query_one("#reach", OptionList).loading = True
            self.read_reach(event.option.id)

    @work(thread=True, exclusive=True, group="reach", exit_on_error=False, name="read the reach")
    def read_reach(self, correction_id: str) -> None:
        from memoryctl.reach import reach_report

        report = reach_report(self.vault, correction_id)
        found = opened_index(self.vault).get_many(report.correction.detached)
        detached = [found[mid] for mid in report.correction.detached if mid in found]
        self.post_message(
            self.Reached(
                report.correction,
                list(report.reached),
                report.inactive,
                report.dormant,
                detached,
            )
        )

    @on(Reached)
    def reached_read(self, message: Reached) -> None:
        box = self.query_one("#reach", OptionList)
        box.loading = False
        highlighted = (
            box.highlighted if self.shown and self.shown.id == message.correction.id else 0
        )
        self.shown = message.correction
        self.reached = message.reached
        self.detached = message.detached
        box.clear_options()
        box.add_options(
            Option(reach_prompt(memory, needle), id=memory.id) for memory, needle in message.reached
        )
        box.add_options(Option(detached_prompt(memory), id=memory.id) for memory in self.detached)
        box.border_title = f"Reaches {counted(len(message.reached), 'memory', 'memories')}"
        detached = len(message.correction.detached)
        box.border_subtitle = f"{detached} detached" if detached else None
        if message.inactive:
            again = "restored" if message.inactive == "retired" else "confirmed"
            box.border_title = f"Inactive ({message.inactive}): reaches no memory"
            box.border_subtitle = (
                f"would reach {counted(message.dormant, 'memory', 'memories')} if {again}"
            )
        if box.option_count:
            box.highlighted = min(highlighted or 0, box.option_count - 1)
        self.refresh_bindings()

    # --- actions ---------------------------------------------------------------------------

    def _current_reached(self) -> Memory | None:
        box = self.query_one("#reach", OptionList)
        if box.highlighted is None or box.highlighted >= len(self.reached):
            return None
        return self.reached[box.highlighted][0]

    def _current_detached(self) -> Memory | None:
        box = self.query_one("#reach", OptionList)
        row = None if box.highlighted is None else box.highlighted - len(self.reached)
        if row is None or not 0 <= row < len(self.detached):
            return None
        return self.detached[row]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Detach is offered on a memory the correction reaches, reattach on one it was
        # detached from: the row under the cursor, as the correction's file has it now.
        if action == "detach":
            return self._current_reached() is not None
        if action == "reattach":
            return self._current_detached() is not None
        return True

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        if self.shown is None:
            return "There is no correction to steer: n writes one."
        if action == "detach":
            if not self.reached:
                return f"“{self.shown.title}” reaches no memory to detach."
            return "The memory under the cursor is detached already: a reattaches it."
        if not self.detached:
            return f"No memory is detached from “{self.shown.title}”: d detaches one."
        return "The memory under the cursor is reached already: d detaches it."

    @on(OptionList.OptionHighlighted, "#reach")
    def reach_highlighted(self) -> None:
        self.refresh_bindings()

    def action_detach(self) -> None:
        memory, correction = self._current_reached(), self.shown
        if memory is None or correction is None:
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self.detach(correction, memory)

        self.app.push_screen(
            ConfirmScreen(
                "Detach",
                f"Stop “{correction.title}” from reaching “{memory.title}”? "
                "Its now: line goes; the correction keeps the choice in its detached list.",
            ),
            answer,
        )

    @work(
        thread=True, exclusive=True, group="corrections-write", exit_on_error=False, name="detach"
    )
    def detach(self, correction: Memory, memory: Memory, undo: bool = False) -> None:
        from memoryctl.reach import detach

        detach(self.vault, correction.id, memory.id, undo=undo)
        self.post_message(self.Detached(correction, memory, undo))

    def action_reattach(self) -> None:
        memory, correction = self._current_detached(), self.shown
        if memory is not None and correction is not None:
            self.detach(correction, memory, undo=True)

    @on(Detached)
    def was_detached(self, message: Detached) -> None:
        said = "Reattached" if message.undo else "Detached"
        self.notify(f"{said} “{message.memory.title}”", title=message.correction.title)
        self.read_reach(message.correction.id)

    def action_new(self) -> None:
        from memoryctl.tui.screens.new_correction import NewCorrectionScreen

        self.app.push_screen(NewCorrectionScreen(self.vault), self._written)

    def _written(self, saved: Memory | None) -> None:
        if saved is not None:
            self.shown = saved
            self.reload()

    def action_open(self) -> None:
        focused = self.focused
        memory = self._current_reached() if focused is self.query_one("#reach") else self.shown
        if memory is not None:
            self.app.open_memory(memory.id)  # type: ignore[attr-defined]
