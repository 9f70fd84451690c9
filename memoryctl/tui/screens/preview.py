"""What will the agent see if I say …? The bundle for a message and a profile, exactly
as `memoryctl preview` prints it (the same renderer), with its token counts, what was
held out and why, what each export target's tool would load of its file here (as
`preview --targets` says it), and an export to any format.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Header, Input, Select, Static, TextArea

from memoryctl.tui.screens.base import AppScreen, ScreenReady, WorkFailed, opened_index
from memoryctl.tui.widgets.export_dialog import ExportChoice, ExportScreen
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.held_out import HeldOut
from memoryctl.tui.widgets.token_meter import TokenMeter
from memoryctl.tui.workers import quiet_work

if TYPE_CHECKING:
    from memoryctl.bundle import Bundle
    from memoryctl.export import TargetLoad
    from memoryctl.storage.vault import Vault

DEBOUNCE = 0.3
SECTION_NAMES = {"pinned": "Pinned", "recalled": "Recalled", "conflicts": "Conflicts"}


def build(vault: Vault, profile: str | None, message: str | None) -> Bundle:
    from memoryctl.context import context_bundle

    opened_index(vault)
    return context_bundle(vault, profile=profile, message=message)


def sections_content(bundle: Bundle) -> Content:
    lines = [
        Content.assemble(
            (f"{SECTION_NAMES.get(key, key):<10}", "bold"),
            f"{tokens:>6,} tokens",
            (f"  {count} {'entry' if count == 1 else 'entries'}", "$text-muted"),
        )
        for key, tokens, count in (
            ("pinned", bundle.sections.get("pinned", 0), len(bundle.pinned)),
            ("recalled", bundle.sections.get("recalled", 0), len(bundle.recalled)),
            ("conflicts", bundle.sections.get("conflicts", 0), len(bundle.conflicts)),
        )
    ]
    lines.append(Content.styled(f"counted by {bundle.method}", "$text-muted"))
    lines += [Content.styled(f"⚠ {w}", "$text-error") for w in bundle.warnings]
    return Content("\n").join(lines)


def show_content(static: Static, content: Content) -> None:
    """Show `content` in `static`, laying the screen out again only when its height changes:
    a layout of the screen, and the paint of all it moved, is most of showing it."""
    shown = static.content
    if isinstance(shown, Content) and shown.is_same(content):
        return
    size = static.content_size
    taller = not size or content.get_height(static.styles, size.width) != size.height
    static.update(content, layout=taller)


def target_line(target: TargetLoad) -> Content:
    """One export target: how much of the file an export here would write its tool
    will load, and where it cuts. It speaks of the file, not of the bundle beside it."""
    name = Content.assemble((target.file, "bold"), (f"  {target.tool}", "$text-muted"))
    if target.error is not None:
        return Content.assemble(name, (f"\n  ⚠ {target.error}", "$text-error"))
    load = target.load
    if load is None or not load.is_cut:
        lines = load.total_lines if load is not None else target.lines
        said = Content.assemble(name, f"\n  loads the whole file, {lines:,} lines")
    else:
        first = load.cut_lines[0] if load.cut_lines else ""
        where = f"'{first[:30]}…'" if len(first) > 30 else f"'{first}'"
        said = Content.assemble(
            name,
            (
                f"\n  loads {load.kept_lines:,} of the file's {load.total_lines:,} lines",
                "$text-warning",
            ),
            (
                f"; cut at\n  {where}" if first else "; cuts only the file's own text",
                "$text-warning",
            ),
        )
    notes = [Content.styled(f"\n  {note}", "$text-muted") for note in target.notes]
    return Content.assemble(said, *notes)


def targets_content(targets: list[TargetLoad]) -> Content:
    return Content("\n").join(target_line(target) for target in targets)


class PreviewScreen(AppScreen):
    AUTO_FOCUS = "#preview-text"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012

    DEFAULT_CSS = """
    PreviewScreen {
        #preview-top { height: auto; }
        #preview-message { width: 1fr; }
        #preview-profile { width: 24; }
        #preview-main { height: 1fr; }
        #preview-text { width: 3fr; height: 1fr; }
        #preview-side {
            width: 2fr; height: 1fr; border: tall $border-blurred; padding: 0 1;
            scrollbar-size-vertical: 1;  /* its lines keep their width when it scrolls */
        }
        #preview-sections { text-wrap: nowrap; text-overflow: ellipsis; }
        #preview-side > Static, #preview-side > HeldOut { margin: 0 0 1 0; }
        .heading { text-style: bold; color: $text-primary; margin: 0; }
        &.-narrow #preview-main { layout: vertical; }
        &.-narrow #preview-text, &.-narrow #preview-side { width: 1fr; }
        &.-narrow #preview-side { height: 8; }
        &.-narrow #preview-message, &.-narrow #preview-message:focus {
            border: none; height: 1; padding: 0 1; background: $boost;
        }
        &.-narrow #preview-profile { height: 1; }
        &.-narrow #preview-profile > SelectCurrent { border: none; height: 1; padding: 0 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s",
            "export",
            "Export",
            id="memoryctl.preview.export",
            tooltip="Write this bundle to a file, in any format",
        ),
        Binding(
            "ctrl+l",
            "focus_message",
            "Message",
            id="memoryctl.preview.message",
            tooltip="Type the message the agent would get",
        ),
        Binding(
            "escape",
            "leave_message",
            "Done typing",
            id="memoryctl.preview.leave-message",
            tooltip="Leave the message box, so the number keys switch screens again",
        ),
    ]

    @dataclass
    class Built(Message):
        bundle: Bundle
        message: str | None
        profile: str

    @dataclass
    class Exported(Message):
        said: str

    @dataclass
    class Loads(Message):
        """What each export target's tool would load of this bundle, here."""

        bundle: Bundle
        targets: list[TargetLoad]

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault)
        self.bundle: Bundle | None = None
        self.targets: list[TargetLoad] = []
        self._debounce: Timer | None = None
        self._asked_profile: str | None = None  # the profile of the last bundle asked for

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="preview-top"):
            yield Input(
                placeholder="What will the agent see if I say…?",
                id="preview-message",
                select_on_focus=False,
            )
            names = sorted(self.vault.config.profiles)
            yield Select(
                [(name, name) for name in names],
                value="default" if "default" in names else names[0],
                allow_blank=False,
                id="preview-profile",
            )
        with Horizontal(id="preview-main"):
            yield TextArea(id="preview-text", read_only=True, soft_wrap=True)
            with VerticalScroll(id="preview-side"):
                yield TokenMeter(id="preview-meter")
                yield Static(id="preview-sections")
                yield Static("Held out", classes="heading")
                yield HeldOut(id="preview-held")
                yield Static("If exported here (ctrl+s)", classes="heading")
                yield Static(id="preview-targets")
        yield KeysFooter()

    def on_mount(self) -> None:
        if not self.query("#preview-text"):
            return  # the app quit before the screen's widgets were mounted (built ahead)
        self.loading_soon(self.query_one("#preview-text", TextArea))
        self.query_one("#preview-side").border_title = "Tokens and what was left out"
        self.reload()
        self.follow_profiles(self.query_one("#preview-profile", Select))

    @property
    def profile(self) -> str:
        value = self.query_one("#preview-profile", Select).value
        return value if isinstance(value, str) else "default"

    @property
    def message(self) -> str | None:
        return self.query_one("#preview-message", Input).value or None

    @property
    def text(self) -> str:
        """The bundle text as the screen shows it."""
        return self.query_one("#preview-text", TextArea).text

    def reload(self) -> None:
        self._asked_profile = self.profile
        self.build(self.profile, self.message)

    @work(
        thread=True, exclusive=True, group="preview", exit_on_error=False, name="build the bundle"
    )
    def build(self, profile: str, message: str | None) -> None:
        bundle = build(self.vault, profile, message)
        self.post_message(self.Built(bundle, message, profile))

    @on(Built)
    def built(self, message: Built) -> None:
        if (message.message, message.profile) != (self.message, self.profile):
            return  # the person typed on; a newer bundle is on its way
        if not self.app.is_running:
            return  # the app is closing (a screen built ahead may still be reading)
        if self.bundle is None:
            # What the first bundle made (the screen, the bundle builder's caches) lives on:
            # frozen, the collector stops walking it on each rebuild (`MemoryApp.settle`).
            self.call_after_refresh(self.app.settle)  # type: ignore[attr-defined]
        bundle = self.bundle = message.bundle
        area = self.query_one("#preview-text", TextArea)
        self.loaded(area)
        # Laying out a bundle's text and the side panel is most of showing a new bundle:
        # what did not change is left as it is (a message that recalls nothing new).
        if area.text != bundle.text:
            area.load_text(bundle.text)
        title = f"What {bundle.profile.name} gets"
        if area.border_title != title:
            area.border_title = title  # setting it paints the whole bundle again
        self.query_one(TokenMeter).show("Bundle", bundle.used, bundle.budget)
        show_content(self.query_one("#preview-sections", Static), sections_content(bundle))
        self.query_one(HeldOut).show(bundle.excluded)
        # Weighed once the bundle is painted: its thread would hold the GIL meanwhile.
        self.call_after_refresh(self.weigh_targets, bundle, Path.cwd())

    @quiet_work("preview-targets", "what each tool loads")
    def weigh_targets(self, bundle: Bundle, cwd: Path) -> None:
        from memoryctl.export import tool_loads

        self.post_message(self.Loads(bundle, tool_loads(bundle, cwd)))

    @on(Loads)
    def loads(self, message: Loads) -> None:
        if message.bundle is self.bundle:
            first = not self.targets
            self.targets = message.targets
            show_content(
                self.query_one("#preview-targets", Static), targets_content(message.targets)
            )
            if first:
                self.post_message(ScreenReady(self))  # all it shows is in

    @on(Input.Changed, "#preview-message")
    def message_changed(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE, self.reload)

    @on(Input.Submitted, "#preview-message")
    def message_submitted(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self.reload()
        self.query_one("#preview-text", TextArea).focus()

    @on(Select.Changed, "#preview-profile")
    def profile_changed(self) -> None:
        if self._asked_profile != self.profile:
            self.reload()  # not when the picker first shows the profile the screen built for

    def action_focus_message(self) -> None:
        self.query_one("#preview-message", Input).focus()

    def action_leave_message(self) -> None:
        self.query_one("#preview-text", TextArea).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_message":
            return self.focused is self.query_one("#preview-message", Input)
        return True

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        if action == "leave_message":
            return "You are not typing a message: a letter or ctrl+l starts one."
        return None

    def letters_box(self) -> Input | None:
        """Where a letter typed here goes (`MemoryApp.focus_box_for`): a letter typed
        while the bundle has the focus, or before the screen has given it the focus,
        starts the message. None until the screen's widgets are there."""
        if not self.is_mounted or self.focused not in (None, *self.query("#preview-text")):
            return None
        return self.query_one("#preview-message", Input)

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()  # esc is offered only while the message box has the focus

    # --- export -----------------------------------------------------------------------------

    def action_export(self) -> None:
        if self.bundle is None:
            return
        dialog = ExportScreen(self.bundle.profile.format, str(Path.cwd()))
        self.app.push_screen(dialog, self._export_to)

    def _export_to(self, choice: ExportChoice | None) -> None:
        if choice is not None and self.bundle is not None:
            self.export(self.bundle, choice, Path.cwd())

    @quiet_work("preview-export", "export")
    def export(self, bundle: Bundle, choice: ExportChoice, cwd: Path) -> None:
        from memoryctl.export import ExportError, Written, export

        try:
            result = export(bundle, choice.fmt, choice.out, cwd)
        except ExportError as error:
            self.post_message(WorkFailed("export", str(error)))
            return
        assert isinstance(result, Written)
        verb = "Wrote" if result.changed else "Unchanged:"
        self.post_message(self.Exported(f"{verb} {result.path} ({choice.fmt})"))

    @on(Exported)
    def exported(self, message: Exported) -> None:
        self.notify(message.said, title="Export")
