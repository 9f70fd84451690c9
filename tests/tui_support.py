"""What the TUI screen tests share: the sample vault with fixed file times, and waits
that watch the app's workers instead of sleeping."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static

from memoryctl.actions import init_vault
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import MemoryApp, make_app
from memoryctl.tui.screens.editor import EditorScreen
from memoryctl.tui.screens.help import HelpScreen
from memoryctl.tui.screens.memory import MemoryScreen

SAMPLE_VAULT = Path(__file__).resolve().parents[1] / "sample_vault"
SIZE = (100, 32)
THEMES = ("textual-dark", "textual-light")  # every screen is snapshotted in both
FIXED_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z, as in test_tui_shell


@pytest.fixture
def vault_path(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, path)
    init_vault(path, every_file=True)
    for file in path.rglob("*"):
        if ".git" not in file.relative_to(path).parts:
            os.utime(file, (FIXED_MTIME, FIXED_MTIME))
    return path


@pytest.fixture
def vault(vault_path: Path) -> Iterator[Vault]:
    opened = Vault(vault_path)
    yield opened
    opened.close()


@pytest.fixture
def app(vault: Vault) -> MemoryApp:
    return make_app(vault, watch=False)


async def until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the app"
        await pilot.pause(0.02)


async def settled(pilot: Pilot, timeout: float = 10.0) -> None:
    """Every worker has finished (the file watcher runs until the end, so it is left out)."""
    await pilot.pause()
    await until(
        pilot,
        lambda: all(w.is_finished for w in pilot.app.workers if w.group != "watch"),
        timeout,
    )
    await pilot.pause()


async def open_memory(pilot: Pilot, memory_id: str) -> MemoryScreen:
    """The memory on its own screen, its details read."""
    await settled(pilot)
    pilot.app.open_memory(memory_id)
    await until(pilot, lambda: isinstance(pilot.app.screen, MemoryScreen))
    await settled(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, MemoryScreen)
    await until(pilot, lambda: screen.details is not None)
    await settled(pilot)
    return screen


async def open_editor(pilot: Pilot, memory_id: str) -> EditorScreen:
    """The memory's screen, then its text in the editor (e), read and ready to type in."""
    await open_memory(pilot, memory_id)
    await pilot.press("e")
    await until(pilot, lambda: isinstance(pilot.app.screen, EditorScreen))
    await settled(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, EditorScreen)
    return screen


async def show(pilot: Pilot, key: str) -> None:
    """Switch screens with a number key and wait until the screen has read the vault."""
    await settled(pilot)
    await pilot.press(key)
    await settled(pilot)


def quiet(app: MemoryApp) -> None:
    """What differs from run to run (the temporary path, toasts) is set aside for snapshots."""
    app.sub_title = "~/sample_vault"
    app.clear_notifications()


def toasts(app: MemoryApp) -> list[str]:
    return [n.message for n in app._notifications]


def footer_keys(screen: Screen[object]) -> dict[str, str]:
    """The keys the footer shows now, with their words: what the person can press."""
    return {
        key: binding.description
        for key, (_, binding, enabled, _) in screen.active_bindings.items()
        if binding.show and enabled
    }


def help_text(screen: Screen[object]) -> str:
    """What the help screen shows, one row a line: the keys, the name, what it does."""
    rows = screen.query(".help-row")
    return "\n".join("  ".join(str(cell.content) for cell in row.query(Static)) for row in rows)


async def said(pilot: Pilot, key: str) -> list[str]:
    """The toasts a key pressed says (those shown before it are cleared first)."""
    pilot.app.clear_notifications()
    await pilot.press(key)
    await until(pilot, lambda: bool(toasts(pilot.app)))
    return toasts(pilot.app)


async def help_rows_now(
    pilot: Pilot,
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """The help's rows (keys, name, what) for where the focus is: those that act, and
    those under "Off now" with why; the help is closed again."""
    await pilot.press("f1")
    await until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
    help_screen = pilot.app.screen
    assert isinstance(help_screen, HelpScreen)
    rows, off = help_screen.rows, help_screen.off_rows
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(pilot.app.screen, HelpScreen))
    return rows, off
