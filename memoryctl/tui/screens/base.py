"""What every screen shares: the vault, the one lock that opens its index, the
message that tells a screen the files changed, and the one handler for a piece of
work that failed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Select
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from memoryctl.storage.index import Index
    from memoryctl.storage.vault import Vault

# `Vault.index` opens (and syncs) the index on first use; two screens' workers asking at
# once must not both open it.
_OPENING = threading.Lock()


def opened_index(vault: Vault) -> Index:
    """The vault's index, opened once whichever thread asks first. Blocks: call it in a worker."""
    with _OPENING:
        return vault.index


def stored_index(vault: Vault) -> Index | None:
    """The vault's index as it was last synced, to show while `opened_index` syncs it;
    None when it was just built or rebuilt, so it has nothing to show yet. Blocks."""
    with _OPENING:
        index = vault.stored_index()
    return None if index.built_fresh or index.notices else index


def kept_edits(vault: Vault) -> str:
    """A toast's words for the person's own edits that memoryctl's last commit left out."""
    commit = vault.last_commit
    if commit is None or not commit.left_uncommitted:
        return ""
    files = ", ".join(commit.left_uncommitted)
    return f" Your own edits in {files} stay uncommitted, for you to commit."


def file_stamp(path: Path) -> tuple[int, int] | None:
    """A file's size and modification time, or None when it is not there."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def describe(error: BaseException) -> str:
    from memoryctl.errors import describe as describe_error

    return describe_error(error)[0]


@dataclass
class FilesChanged(Message, bubble=False):
    """Memory files changed on disk (an editor, `git pull`, or memoryctl itself)."""

    paths: list[str]


@dataclass
class ScreenReady(Message):
    """A screen has read and shown its first content: one built ahead is laid out now."""

    screen: Screen


@dataclass
class WorkFailed(Message):
    what: str
    error: str


# Content read sooner than this is painted at once: a loading indicator shown and taken
# away in between costs more than the wait (the first visit to Preview, or to Agents).
LOADING_AFTER = 0.2


def why_it_is_off(node: object, action: str) -> str | None:
    """Why the action a binding names is turned off on `node` now, in the words of its
    screen or widget (`AppScreen.why_not`, and a widget's own `why_not`); None when it is
    on, or when there is nothing to say."""
    from textual.actions import parse
    from textual.dom import DOMNode

    destination, name, parameters = parse(action)
    why_not = getattr(node, "why_not", None)
    if destination or not isinstance(node, DOMNode) or why_not is None:
        return None
    if node.check_action(name, parameters):
        return None
    return why_not(name, parameters)


class AppScreen(Screen[None]):
    """A screen of the app: one user task over the vault."""

    def __init__(self, vault: Vault) -> None:
        super().__init__()
        self.vault = vault
        self.screen_resumed: list[Callable[[], None]] = []
        self._loading_soon: dict[Widget, Timer] = {}

    def loading_soon(self, widget: Widget) -> None:
        """Show `widget` as loading unless `loaded(widget)` comes first (LOADING_AFTER)."""

        def show() -> None:
            if self._loading_soon.pop(widget, None) is not None:
                widget.loading = True

        self._loading_soon[widget] = self.set_timer(LOADING_AFTER, show)

    def loaded(self, widget: Widget) -> None:
        timer = self._loading_soon.pop(widget, None)
        if timer is not None:
            timer.stop()
        widget.loading = False

    def reload(self) -> None:
        """Read again what the screen shows (the files changed)."""

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        """Why one of the screen's keys, turned off by `check_action` (and so left out of
        the footer), does nothing now: the app says so when it is pressed, rather than
        nothing. None says nothing."""
        return None

    @on(FilesChanged)
    def files_changed(self, message: FilesChanged) -> None:
        self.reload()

    def follow_file(self, path: Path, changed: Callable[[], None], every: float = 1.0) -> None:
        """Call `changed` when the file (a settings file, not a memory, which the vault's
        watcher does not see) is written, created or removed, while the screen is shown
        and when it is shown again."""
        seen = [file_stamp(path)]

        def look() -> None:
            now = file_stamp(path)
            if now != seen[0]:
                seen[0] = now
                changed()

        self.set_interval(every, look)
        self.screen_resumed.append(look)

    def follow_profiles(self, picker: Select[str]) -> None:
        """Keep the profile picker (and the profiles the bundle is built with) as
        memoryctl.toml says, when a person adds or removes one there."""
        from memoryctl.storage.config import CONFIG_NAME

        def changed() -> None:
            import dataclasses

            from memoryctl.storage.config import load_config

            try:
                profiles = load_config(self.vault.root).profiles
            except Exception as error:
                self.failed("read the profiles", describe(error))
                return
            self.vault.config = dataclasses.replace(self.vault.config, profiles=profiles)
            names = sorted(profiles)
            keep = picker.value if picker.value in names else "default"
            picker.set_options([(name, name) for name in names])
            picker.value = keep
            self.reload()

        self.follow_file(self.vault.root / CONFIG_NAME, changed)

    def on_screen_resume(self) -> None:
        for look in self.screen_resumed:
            look()

    @on(Worker.StateChanged)
    def worker_ended(self, event: Worker.StateChanged) -> None:
        """Every worker of a screen that raises ends here: what it could not do is its
        name (`@work(name=...)`), and why is the error as the core words it."""
        worker = event.worker
        if event.state is WorkerState.ERROR and worker.error is not None:
            self.failed(worker.name or "finish the work", describe(worker.error))

    @on(WorkFailed)
    def work_failed(self, message: WorkFailed) -> None:
        self.failed(message.what, message.error)

    def failed(self, what: str, why: str) -> None:
        """Say what could not be done, and why. A screen that shows more (a list that
        stays empty, a message in a pane) extends this."""
        self.loading = False
        for widget in list(self._loading_soon):
            self.loaded(widget)  # nothing is coming
        self.notify(f"Could not {what}: {why}", severity="error", timeout=10)
