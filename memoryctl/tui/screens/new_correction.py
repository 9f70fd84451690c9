"""Write a correction and see, as you type its deprecated strings, every memory it will
reach; save it through the guard, which asks before a string reaches too much.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Header, Input, Label, Static, TextArea

from memoryctl.tui.screens.base import WorkFailed
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.highlight import highlighted
from memoryctl.tui.widgets.modals import ConfirmScreen, close_asking_first
from memoryctl.wording import counted

if TYPE_CHECKING:
    from memoryctl.memory import Memory
    from memoryctl.reach import NeedleReach
    from memoryctl.storage.vault import Vault

DEBOUNCE = 0.3


def needles_of(text: str) -> list[str]:
    """The deprecated strings typed, one per comma: "acme/api, old-host.example"."""
    return [part.strip() for part in text.split(",") if part.strip()]


def reach_content(reaches: list[NeedleReach], problems: list[str]) -> Content:
    lines: list[Content] = [Content.styled(p, "$text-error") for p in problems]
    for reach in reaches:
        reached = counted(reach.count, "memory", "memories")
        lines.append(Content.styled(f"“{reach.needle}” reaches {reached}", "bold"))
        lines += [
            Content.assemble("  ", (m.title, ""), "\n    ", highlighted(m.text, [reach.needle]))
            for m in reach.sample
        ]
        if reach.count > len(reach.sample):
            lines.append(Content.styled(f"  and {reach.count - len(reach.sample)} more", "dim"))
    return (
        Content("\n").join(lines) if lines else Content.styled("Type the outdated strings.", "dim")
    )


class NewCorrectionScreen(Screen["Memory | None"]):
    DEFAULT_CSS = """
    NewCorrectionScreen {
        Label { color: $text-muted; padding: 0 1; }
        #correction-text { height: 5; }
        #correction-reach { height: 1fr; border: tall $border-blurred; padding: 0 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s",
            "save",
            "Save",
            id="memoryctl.correction.save",
            tooltip="Save the correction (the guard asks if it reaches too much)",
        ),
        Binding(
            "escape", "close", "Cancel", id="memoryctl.correction.cancel", tooltip="Write nothing"
        ),
    ]

    @dataclass
    class Previewed(Message):
        needles: list[str]
        reaches: list[NeedleReach]
        problems: list[str]

    @dataclass
    class Saved(Message):
        memory: Memory

    @dataclass
    class TooBroad(Message):
        why: str

    def __init__(self, vault: Vault) -> None:
        super().__init__()
        self.vault = vault
        self._debounce: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label("What is true now")
        yield TextArea(id="correction-text", soft_wrap=True)
        yield Label("Outdated strings it replaces (deprecates), separated by commas")
        yield Input(placeholder="e.g. acme/api, old.example.com", id="correction-deprecates")
        with VerticalScroll(id="correction-reach"):
            yield Static(id="correction-reach-text")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.sub_title = "a new correction"
        self.query_one("#correction-reach").border_title = "Reach, live"
        self.query_one("#correction-reach-text", Static).update(reach_content([], []))

    @property
    def needles(self) -> list[str]:
        return needles_of(self.query_one("#correction-deprecates", Input).value)

    @on(Input.Changed, "#correction-deprecates")
    def deprecates_changed(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE, lambda: self.preview(self.needles))

    @work(
        thread=True,
        exclusive=True,
        group="reach-preview",
        exit_on_error=False,
        name="preview the reach",
    )
    def preview(self, needles: list[str]) -> None:
        from memoryctl.matching import check_needle
        from memoryctl.reach import preview_reach

        problems = [p for p in (check_needle(n) for n in needles) if p]
        good = [n for n in needles if not check_needle(n)]
        reaches = preview_reach(self.vault, good)
        self.post_message(self.Previewed(needles, reaches, problems))

    @on(Previewed)
    def previewed(self, message: Previewed) -> None:
        if message.needles != self.needles:
            return
        total = sum(r.count for r in message.reaches)
        self.query_one(
            "#correction-reach"
        ).border_title = f"Reach, live: {counted(total, 'memory', 'memories')}"
        self.query_one("#correction-reach-text", Static).update(
            reach_content(message.reaches, message.problems)
        )

    def action_save(self, force: bool = False) -> None:
        body = self.query_one("#correction-text", TextArea).text.strip()
        if not body or not self.needles:
            self.notify("Write what is true now, and the strings it replaces.", severity="warning")
            return
        self.save(body, self.needles, force)

    @work(
        thread=True,
        exclusive=True,
        group="correction-save",
        exit_on_error=False,
        name="save the correction",
    )
    def save(self, body: str, needles: list[str], force: bool) -> None:
        from memoryctl.actions import NewMemory
        from memoryctl.reach import GuardTripped, correct

        try:
            saved = correct(self.vault, NewMemory(body=body, deprecates=needles), force=force)
        except GuardTripped as tripped:
            self.post_message(self.TooBroad(str(tripped)))
            return
        self.post_message(self.Saved(saved))

    @on(TooBroad)
    def too_broad(self, message: TooBroad) -> None:
        def answer(yes: bool | None) -> None:
            if yes:
                self.action_save(force=True)

        self.app.push_screen(
            ConfirmScreen("This reaches a lot", f"{message.why}. Save anyway?"), answer
        )

    @on(Saved)
    def saved(self, message: Saved) -> None:
        self.notify(f"Saved the correction {message.memory.id}", title=message.memory.title)
        self.dismiss(message.memory)

    @on(WorkFailed)
    def work_failed(self, message: WorkFailed) -> None:
        self.notify(f"Could not {message.what}: {message.error}", severity="error", timeout=10)

    @property
    def unsaved_text(self) -> bool:
        typed = self.query_one("#correction-text", TextArea).text.strip()
        return bool(typed or self.query_one("#correction-deprecates", Input).value.strip())

    def action_close(self) -> None:
        close_asking_first(self, self.unsaved_text, "the new correction")
