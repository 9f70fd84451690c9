"""Across the app: screens by number, the command palette, help, external edits on every
screen, and a headless core that never imports the TUI."""

from __future__ import annotations

import subprocess
import sys

from textual.command import CommandPalette
from textual.widgets import OptionList
from tui_support import SIZE, app, help_text, settled, show, until, vault, vault_path

from memoryctl.storage.vault import Vault
from memoryctl.tui.app import HelpScreen, MemoryApp, make_app
from memoryctl.tui.screens.corrections import CorrectionsScreen
from memoryctl.tui.screens.memory import MemoryScreen
from memoryctl.tui.screens.pins import PinsScreen
from memoryctl.tui.screens.preview import PreviewScreen
from memoryctl.tui.screens.review import ReviewScreen
from memoryctl.tui.screens.vault import VaultScreen
from memoryctl.tui.widgets import MemoryList

__all__ = ["app", "vault", "vault_path"]


def test_the_headless_core_does_not_import_textual() -> None:
    code = (
        "import sys, memoryctl.storage, memoryctl.storage.vault, memoryctl.context, "
        "memoryctl.review; print('textual' in sys.modules, 'rich' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


async def test_number_keys_switch_screens(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        for key, kind in (
            ("2", PinsScreen),
            ("3", ReviewScreen),
            ("4", CorrectionsScreen),
            ("5", PreviewScreen),
            ("1", VaultScreen),
        ):
            await show(pilot, key)
            assert isinstance(app.screen, kind), key


async def test_help_lists_the_screens_and_the_screens_keys(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "2")
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        shown = help_text(app.screen)
        assert "Order the pins against the token budget" in shown
        assert "Move the pin up" in shown


async def test_palette_jumps_to_a_memory_by_title(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"mangoes")
        palette = app.screen

        def hit() -> bool:
            options = palette.query_one(OptionList)
            return any(
                "Likes mangoes" in str(options.get_option_at_index(n).prompt)
                for n in range(options.option_count)
            )

        await until(pilot, hit)
        options = palette.query_one(OptionList)
        for n in range(options.option_count):
            if "Open: Likes mangoes" in str(options.get_option_at_index(n).prompt):
                options.highlighted = n
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MemoryScreen))
        await settled(pilot)
        assert app.screen.memory is not None and app.screen.memory.title == "Likes mangoes"


async def test_palette_offers_the_actions_of_the_screen_in_front(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "2")
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"unpin")
        palette = app.screen

        def offered() -> bool:
            options = palette.query_one(OptionList)
            return any(
                "Unpin" in str(options.get_option_at_index(n).prompt)
                for n in range(options.option_count)
            )

        await until(pilot, offered)


async def test_an_edit_in_another_editor_reaches_the_pins_screen(vault: Vault) -> None:
    app = make_app(vault, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await until(pilot, lambda: any(w.group == "watch" and w.is_running for w in app.workers))
        await show(pilot, "2")
        screen = app.screen
        assert isinstance(screen, PinsScreen)
        pin = vault.index.pins()[0]
        path = vault.root / pin.path
        path.write_text(path.read_text().replace(f"title: {pin.title}", "title: Renamed elsewhere"))
        await until(
            pilot,
            lambda: (
                screen.state is not None
                and screen.state.rows[0].memory.title == "Renamed elsewhere"
            ),
            timeout=2.5,
        )


async def test_the_list_is_read_again_when_another_process_rebuilds_the_index(vault: Vault) -> None:
    # `reindex --full` changes no file, so only the index's generation tells the TUI.
    app = make_app(vault, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await until(pilot, lambda: any(w.group == "watch" and w.is_running for w in app.workers))
        memory_list = app.screen.query_one(MemoryList)
        await until(pilot, lambda: memory_list.pages is not None)
        shown = memory_list.pages
        rebuilt = subprocess.run(
            [sys.executable, "-m", "memoryctl", "--vault", str(vault.root), "reindex", "--full"],
            capture_output=True,
            text=True,
        )
        assert rebuilt.returncode == 0, rebuilt.stderr
        await until(pilot, lambda: memory_list.pages is not shown, timeout=15)
        assert memory_list.pages is not None and memory_list.pages.count == shown.count
