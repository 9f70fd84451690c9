"""The memoryctl terminal UI. `make_app` builds it, for the CLI and for the tests alike."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.timer import Timer

from memoryctl.tui.keys import (
    box_for_letter,
    help_keys,
    keys_now,
    own_bindings,
    registered_bindings,
)
from memoryctl.tui.screen_modes import SCREENS
from memoryctl.tui.screens.base import FilesChanged, ScreenReady
from memoryctl.tui.screens.help import HelpScreen
from memoryctl.tui.screens.palette import ActionCommands, MemoryCommands
from memoryctl.tui.screens.vault import VaultScreen
from memoryctl.tui.state import save_theme, saved_theme, state_path
from memoryctl.tui.sync import (
    SyncDone,
    SyncFailed,
    SyncStateRead,
    conflict_toast,
    header_text,
    notice_toasts,
    summary,
)

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from memoryctl.importing import ImportReport
    from memoryctl.memory import Memory
    from memoryctl.storage.vault import Vault
    from memoryctl.sync import SyncState
    from memoryctl.tui.screens.memory import MemoryScreen
    from memoryctl.tui.widgets.memory_view import Shown

# The screens, in the order of their number keys: (mode, key, name, what it is for).
MEMORY_SCREEN = "memory"  # the one Memory screen the app keeps (see `open_memory`)
# Numbered screens built while the person reads the first list, so that their first visit
# costs what a second one does (`MemoryApp.build_ahead`); and how long the app must have
# had no key, click or scroll before it builds one.
AHEAD = ("preview",)
IDLE_BEFORE_AHEAD = 1.0
PERSON_ACTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)


class MemoryApp(App[None]):
    TITLE = "memoryctl"
    COMMANDS = App.COMMANDS | {ActionCommands, MemoryCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+q", "quit", "Quit", priority=True, id="memoryctl.quit", tooltip="Quit memoryctl"
        ),
        *help_keys(),
        # Priority: a number key switches screens as the app reads it, so each key typed
        # after it reaches the new screen, in the order typed (a text box with the focus
        # types the digit instead).
        *(
            Binding(
                key,
                f"show_screen('{mode}')",
                name,
                priority=True,
                id=f"memoryctl.screen.{mode}",
                tooltip=what,
            )
            for mode, key, name, what in SCREENS
        ),
        Binding(
            "ctrl+o",
            "import_memories",
            "Import",
            show=False,
            id="memoryctl.import",
            tooltip="Import memories from Claude Code, AGENTS.md, Cursor rules, mem0, Letta…",
        ),
        Binding(
            "f5",
            "sync",
            "Sync",
            show=False,  # in the palette and the help, not on every screen's footer
            id="memoryctl.sync",
            tooltip="Fetch, merge and push the vault through its git remote",
        ),
    ]

    def __init__(self, vault: Vault, *, watch: bool = True, start: str = "vault") -> None:
        super().__init__()
        self.vault = vault
        self.watching = watch
        self.start = start
        self.sub_title = str(vault.root)
        self._memory_screen: MemoryScreen | None = None
        self._asking_to_quit: Screen | None = None  # the question ctrl+q asks (`action_quit`)
        self.state_file = state_path()
        self._theme_remembered: str | None = None
        self._warmed = False
        self._last_input = time.monotonic()
        self._building_ahead: Timer | None = None
        self._built_ahead: list[Screen] = []
        # The screen in front as each key arrived (`on_key`).
        self._sent_to: weakref.WeakKeyDictionary[events.Key, Screen] = weakref.WeakKeyDictionary()
        from memoryctl.tui.screens.agents import AgentsScreen
        from memoryctl.tui.screens.corrections import CorrectionsScreen
        from memoryctl.tui.screens.pins import PinsScreen
        from memoryctl.tui.screens.preview import PreviewScreen
        from memoryctl.tui.screens.review import ReviewScreen

        self.add_mode("vault", self._styled(lambda: VaultScreen(vault, watch=watch)))
        self.add_mode("pins", self._styled(lambda: PinsScreen(vault)))
        self.add_mode("review", self._styled(lambda: ReviewScreen(vault)))
        self.add_mode("corrections", self._styled(lambda: CorrectionsScreen(vault)))
        self.add_mode("preview", self._styled(lambda: PreviewScreen(vault)))
        self.add_mode("agents", self._styled(lambda: AgentsScreen(vault)))

    def _styled(self, make: Callable[[], Screen]) -> Callable[[], Screen]:
        """A numbered screen, made on its first visit, styled by the stylesheet as it is.

        Textual counts a new screen as styled before the app's last theme change, so on its
        first visit it parsed every stylesheet of the app again and restyled every widget:
        a third of the first visit to a screen. The stylesheet is already current (a theme
        change refreshes it at once), and the new screen's widgets take their styles from it
        as they mount, so the new screen counts as up to date."""

        def made() -> Screen:
            screen = make()
            screen._css_update_count = self._css_update_count
            return screen

        return made

    def on_mount(self) -> None:
        self._theme_remembered, problem = saved_theme(self.state_file)
        if problem:
            self.notify(f"Starting with the default theme: {problem}", severity="warning")
        if self._theme_remembered in self.available_themes:
            self.theme = self._theme_remembered
        self.switch_mode("vault")  # it watches the files, whichever screen is in front
        if self.start != "vault":
            self.switch_mode(self.start)
        self.read_sync_state()

    def watch_theme(self, theme: str) -> None:
        """A theme chosen (from the palette) is the one the next run starts with."""
        if self.is_mounted and theme != self._theme_remembered:
            self._theme_remembered = theme
            self.remember_theme(theme)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast, its words shown as written: they carry titles, paths and the core's
        refusals (`[vault] ignore`), whose square brackets markup would eat, or stop the
        app on (`[/x]`). No toast of memoryctl's is markup, whatever a widget passes."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    @work(thread=True, group="state", exit_on_error=False)
    def remember_theme(self, theme: str) -> None:
        problem = save_theme(self.state_file, theme)
        if problem:
            self.call_from_thread(
                self.notify, f"Could not remember the theme: {problem}", severity="warning"
            )

    def settle(self) -> None:
        """The objects alive now (widgets, styles, modules) live as long as the app: frozen,
        the garbage collector stops walking them on every full collection. Unfrozen, each
        took 20-50 ms at 100,000 memories, a visible stall (bench/tui_bench.py). Called once
        the first list is painted, once the kept Memory screen is built, and once Preview's
        first bundle is painted."""
        gc.freeze()
        if not self._warmed:
            self._warmed = True
            self.find_keyring()
            self._last_input = time.monotonic()  # the person starts reading the list
            self._building_ahead = self.set_interval(IDLE_BEFORE_AHEAD / 4, self.build_ahead)

    @work(thread=True, group="warm-up", exit_on_error=False, name="find the keyring")
    def find_keyring(self) -> None:
        """keyring looks for its backend once a process: it imports and asks each one it
        knows, most of the Agents screen's first visit. Done while the first list is read,
        the Agents screen opens at once."""
        from memoryctl.mcp.agents import keyring_problem

        keyring_problem()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, PERSON_ACTS) and not event.is_forwarded:
            self._last_input = time.monotonic()
            if isinstance(event, events.Key):
                self._sent_to[event] = self.screen
                self.focus_box_for(event)
        await super().on_event(event)

    def focus_box_for(self, key: events.Key) -> None:
        """A letter that no key in front takes, typed where the screen in front sends
        letters to its text box (Preview's message): the box takes the focus at once, as
        the app reads the letter, so this letter and every one after it go to the box
        alone, in the order they were typed."""
        box = box_for_letter(self.screen, key)
        if box is not None:
            self.screen.set_focus(box)

    def on_key(self, event: events.Key) -> None:
        """A key that went to a screen which another replaced while the key passed its
        widgets (a memory opened or closed just before it) comes back unused from a screen
        no longer shown. A letter is sent on to the screen in front, so it is typed there,
        not lost."""
        sent_to = self._sent_to.pop(event, None)
        screen = self.screen
        if sent_to is screen:
            self.say_why_not(screen, event.key)
            return
        if sent_to is None or not event.is_printable:
            return
        if event.key in screen.active_bindings:
            return  # the screen in front has a key for it, and that key has done its work
        key = events.Key(event.key, event.character)
        self.focus_box_for(key)
        (screen.focused or screen).post_message(key)

    def say_why_not(self, screen: Screen, key: str) -> None:
        """A key of the screen in front that does nothing now (nothing to undo, no pin to
        move) says why, in the screen's words, instead of doing nothing silently: the
        words the help shows beside it."""
        active = screen.active_bindings.get(key)
        if active is not None and active.enabled:
            return
        if screen.is_modal:
            self.say_close_first(key)
            return
        why = keys_now(self, screen).why_off(key)
        if why:
            self.notify(why, severity="warning")

    def say_close_first(self, key: str) -> None:
        """One of the app's keys pressed in a dialog, which takes it (a number key, import,
        sync): the dialog is to be answered or closed first."""
        for binding in registered_bindings(own_bindings(self)):
            if binding.key == key:
                shown = self.get_key_display(binding)
                self.notify(
                    f"Close the dialog first (esc), then press {shown} for {binding.description}.",
                    severity="warning",
                )
                return

    def build_ahead(self) -> None:
        """Build the next screen of AHEAD off-screen, once the app has been idle a moment
        and the index is synced: composed, styled, its content read and laid out, so that
        its first visit only shows it, as a second visit does. One screen at a time, and
        none while the person types.

        Textual has no public way to start a screen that is not shown: this starts its
        mode as a first visit does (Textual's private `App._init_mode`), and lays the
        screen out once its content is in (`ScreenReady`, Textual's private
        `Screen._refresh_layout`). `test_preview_is_built_ahead_while_the_list_is_read`
        fails when that stops working."""
        if not self.is_running or self.return_code is not None:
            return  # closing, or asked to: its screens are being closed
        if time.monotonic() - self._last_input < IDLE_BEFORE_AHEAD or self.vault.last_sync is None:
            return
        if any(not screen.is_mounted for screen in self._built_ahead):
            return
        waiting = [mode for mode in AHEAD if mode not in self._screen_stacks]
        if not waiting:
            if self._building_ahead is not None:
                self._building_ahead.stop()
            return
        self._init_mode(waiting[0])
        self._built_ahead.append(self._screen_stacks[waiting[0]][0])

    @on(ScreenReady)
    def lay_out_ahead(self, message: ScreenReady) -> None:
        screen = message.screen
        if not self.is_running:
            return  # closing: the screens in front are gone
        if screen in self._built_ahead and screen is not self.screen and screen.is_attached:
            screen._refresh_layout(self.size)
            screen._compositor.render_full_update()  # its widgets keep the lines they drew

    def on_unmount(self) -> None:
        gc.unfreeze()  # whatever runs after the app (a test suite) collects them again

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The number keys are off in a dialog, which takes them (`say_close_first`). A
        # text box with the focus types them: Textual leaves a key out of the bindings
        # above the widget that takes it, priority ones too.
        if action == "show_screen":
            return not self.screen.is_modal
        return True

    def action_show_screen(self, mode: str) -> None:
        """Go to one of the numbered screens, back at its base (a memory opened there
        closes); where a screen opened there holds text not saved (the editor, a new
        correction), to that screen, as it was left. (On a screen's first visit, Textual
        reads no further key until the screen is mounted: a letter typed after the
        number key finds its widgets.)"""
        if isinstance(self.screen, ModalScreen):
            return
        self.switch_mode(mode)
        if any(getattr(screen, "unsaved_text", False) for screen in self.screen_stack[1:]):
            self.notify(
                "The text you typed here is not saved: save it (ctrl+s) or close it (esc).",
                severity="warning",
            )
            return
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def open_memory(self, memory_id: str, shown: Shown | None = None) -> None:
        """Open a memory on a screen of its own, above the screen in front; `shown` is the
        note as the screen in front already read it, painted before the rest is read."""
        self.call_later(self._open_memory, memory_id, shown)

    async def _open_memory(self, memory_id: str, shown: Shown | None) -> None:
        from memoryctl.tui.screens.memory import MemoryScreen

        # One Memory screen is kept and shown again: building its widgets costs more than
        # the rest of opening a memory. A memory opened from it gets a screen of its own.
        kept = self._memory_screen
        if kept is None:
            kept = self._memory_screen = MemoryScreen(self.vault, memory_id, shown)
            self.install_screen(kept, MEMORY_SCREEN)
            kept.call_after_refresh(self.settle)
        elif any(kept in stack for stack in self._screen_stacks.values()):
            await self.push_screen(MemoryScreen(self.vault, memory_id, shown))
            return
        else:
            await kept.present(memory_id, shown)
        await self.push_screen(kept)

    def action_new_memory(self) -> None:
        """Write a new memory in a small form; the vault list shows it once it is saved."""
        from memoryctl.tui.screens.new_memory import NewMemoryScreen

        if not isinstance(self.screen, ModalScreen):
            self.push_screen(NewMemoryScreen(self.vault), self._memory_added)

    def _memory_added(self, memory: Memory | None) -> None:
        if memory is None:
            return
        self.notify(f"Added {memory.id}", title=memory.title)
        for screen in self._files_written([memory.path]):
            screen.reveal(memory)  # the vault screen opens the new memory

    def _files_written(self, paths: list[str]) -> list[VaultScreen]:
        """Send the message the file watcher sends, so every screen reads the vault again;
        returns the vault screens told."""
        told = [s for s in self.get_screen_stack("vault") if isinstance(s, VaultScreen)]
        for screen in told:
            screen.post_message(VaultScreen.VaultChanged(paths))
        return told

    @on(VaultScreen.VaultChanged)
    def tell_every_screen(self, message: VaultScreen.VaultChanged) -> None:
        """The vault screen's watcher saw files change: every other open screen reads again."""
        for mode, *_ in SCREENS:
            try:
                stack = self.get_screen_stack(mode)
            except KeyError:
                continue
            for screen in stack:
                if not isinstance(screen, VaultScreen):
                    screen.post_message(FilesChanged(message.paths))

    def action_import_memories(self) -> None:
        """Import another tool's memories: check first, then one commit."""
        from memoryctl.tui.screens.import_memories import ImportScreen

        if not isinstance(self.screen, ModalScreen):
            self.push_screen(ImportScreen(self.vault), self._imported)

    def _imported(self, report: ImportReport | None) -> None:
        if report is None:
            return
        from memoryctl.tui.screens.import_memories import report_text

        self.notify(report_text(report).split("\n", 1)[0], title=f"Imported from {report.source}")
        self._files_written([made.path for made in report.made])

    async def action_quit(self) -> None:
        """Quit; when a screen holds text not saved (the editor, a new memory or
        correction), ask first, as closing that screen would."""
        from memoryctl.tui.widgets.modals import ConfirmScreen

        if self._asking_to_quit is not None and self.screen is self._asking_to_quit:
            self.exit()  # ctrl+q again, while it asks: quit
            return
        holding = [
            screen
            for stack in self._screen_stacks.values()
            for screen in stack
            if getattr(screen, "unsaved_text", False)
        ]
        if not holding:
            self.exit()
            return

        def answer(yes: bool | None) -> None:
            self._asking_to_quit = None
            if yes:
                self.exit()

        self._asking_to_quit = ConfirmScreen(
            "Quit", "Quit memoryctl and lose the text you typed? It is not saved."
        )
        self.push_screen(self._asking_to_quit, answer)

    # --- sync ------------------------------------------------------------------------------

    @work(thread=True, group="sync", exclusive=True, exit_on_error=False)
    def read_sync_state(self) -> None:
        from memoryctl.sync import state

        self.post_message(SyncStateRead(state(self.vault)))

    def action_sync(self) -> None:
        """Fetch, merge and push; every screen reads the vault again afterwards."""
        self.notify("Syncing…", timeout=2)
        self.run_sync()

    @work(thread=True, group="sync", exclusive=True, exit_on_error=False)
    def run_sync(self) -> None:
        from memoryctl.actions import utcnow
        from memoryctl.sync import state, sync
        from memoryctl.tui.screens.base import describe, opened_index

        opened_index(self.vault)
        try:
            report = sync(self.vault, now=utcnow())
        except Exception as error:  # every failure is one line in a toast
            self.post_message(SyncFailed(describe(error), state(self.vault)))
            return
        self.post_message(SyncDone(report, state(self.vault)))

    def _show_sync_state(self, sync_state: SyncState) -> None:
        from memoryctl.actions import utcnow

        self.sub_title = header_text(str(self.vault.root), sync_state, utcnow())

    @on(SyncStateRead)
    def sync_state_read(self, message: SyncStateRead) -> None:
        if message.state.remote is not None:  # a vault with no remote keeps its header
            self._show_sync_state(message.state)

    @on(SyncDone)
    def sync_done(self, message: SyncDone) -> None:
        report = message.report
        self._show_sync_state(message.state)
        for text in notice_toasts(report):
            self.notify(text, timeout=8)
        conflicts = conflict_toast(report)
        if conflicts:
            self.notify(conflicts, severity="warning", timeout=10)
        self.notify(summary(report), title="Sync")
        changed = [*report.changed, *(c.path for c in report.conflicts)]
        for screen in self.get_screen_stack("vault"):
            if isinstance(screen, VaultScreen):
                screen.post_message(VaultScreen.VaultChanged(changed))

    @on(SyncFailed)
    def sync_failed(self, message: SyncFailed) -> None:
        self._show_sync_state(message.state)
        self.notify(f"Sync stopped: {message.error}", severity="error", timeout=10)

    def action_help(self) -> None:
        """The keys that act where the focus is (a dialog's own, in front of a dialog),
        as the footer offers them; apart from them those that do nothing now, each with
        why, and those the text box with the focus types."""
        if isinstance(self.screen, HelpScreen):
            return
        keys = keys_now(self, self.screen)
        self.push_screen(HelpScreen(keys.acting, keys.typed, keys.off))


def make_app(vault: Vault, *, watch: bool = True, start: str = "vault") -> MemoryApp:
    """The app, opening on the screen `start` names (one of SCREENS)."""
    return MemoryApp(vault, watch=watch, start=start)


def run_app(vault: Vault, start: str = "vault") -> None:
    try:
        make_app(vault, start=start).run()
    finally:
        vault.close()
