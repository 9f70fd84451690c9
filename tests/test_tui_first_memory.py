"""An empty vault welcomes the person and offers to write the first memory, in a small
form that saves as `memoryctl add` does; the list then shows it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, TextArea
from tui_support import SIZE, help_text, settled, toasts, until, vault, vault_path

from memoryctl.actions import init_vault
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import HelpScreen, MemoryApp, make_app
from memoryctl.tui.screens.new_memory import NewMemoryScreen
from memoryctl.tui.screens.vault import START_MESSAGE, VaultScreen
from memoryctl.tui.widgets import MemoryList, MemoryView

__all__ = ["vault", "vault_path"]


@pytest.fixture
def empty_vault(tmp_path: Path) -> Iterator[Vault]:
    path = tmp_path / "empty"
    init_vault(path)
    opened = Vault(path)
    yield opened
    opened.close()


@pytest.fixture
def app(empty_vault: Vault) -> MemoryApp:
    return make_app(empty_vault, watch=False)


async def start_screen(pilot: Pilot) -> VaultScreen:
    await settled(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, VaultScreen)
    await until(pilot, lambda: screen.query_one(MemoryView).message == START_MESSAGE)
    return screen


async def open_form(pilot: Pilot) -> NewMemoryScreen:
    await pilot.press("n")
    await until(pilot, lambda: isinstance(pilot.app.screen, NewMemoryScreen))
    await pilot.pause()
    form = pilot.app.screen
    assert isinstance(form, NewMemoryScreen)
    return form


async def test_an_empty_vault_offers_to_write_the_first_memory(
    app: MemoryApp, empty_vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_screen(pilot)
        assert "Press n to write the first one" in START_MESSAGE
        form = await open_form(pilot)
        await pilot.press(*"Dana takes her coffee black, no sugar.")
        form.query_one("#new-memory-title", Input).value = "Coffee, black"
        form.query_one("#new-memory-kind", Select).value = "preference"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        memory_list = screen.query_one(MemoryList)
        await until(pilot, lambda: memory_list.border_title == "1 memory")
        await settled(pilot)
        assert memory_list.current is not None and memory_list.current.title == "Coffee, black"
        assert screen.query_one(MemoryView).message != START_MESSAGE
        assert any(t.startswith("Added ") for t in toasts(app))

    [saved] = empty_vault.index.list()
    assert (saved.title, saved.kind, saved.body) == (
        "Coffee, black",
        "preference",
        "Dana takes her coffee black, no sugar.\n",
    )
    text = (empty_vault.root / saved.path).read_text(encoding="utf-8")
    assert "kind: preference" in text and saved.id in text


async def test_the_save_button_saves_and_the_title_defaults_to_the_text(
    app: MemoryApp, empty_vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_screen(pilot)
        form = await open_form(pilot)
        form.query_one("#new-memory-text", TextArea).text = "The boiler is serviced in March."
        await pilot.click("#new-memory-save")
        await until(pilot, lambda: app.screen is screen)
        await settled(pilot)
    [saved] = empty_vault.index.list()
    assert saved.kind == "fact" and saved.title.startswith("The boiler is serviced")


async def test_an_empty_form_saves_nothing_and_escape_cancels(
    app: MemoryApp, empty_vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_screen(pilot)
        form = await open_form(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is form
        assert any("Write the memory first" in t for t in toasts(app))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await settled(pilot)
    assert empty_vault.index.count() == 0


async def test_the_whole_form_fits_an_80_by_24_terminal(app: MemoryApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await start_screen(pilot)
        form = await open_form(pilot)
        await pilot.pause()
        for part in ("#new-memory-text", "#new-memory-title", "#new-memory-kind"):
            assert form.query_one(part).region.bottom <= 24, part
        save = form.query_one("#new-memory-save").region
        assert save.height and save.bottom <= 24


async def test_new_memory_is_in_the_help_of_the_vault_screen(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await start_screen(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert "Write a new memory" in help_text(app.screen)


async def test_a_new_memory_opens_in_the_view_under_the_cursor(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        screen = app.screen
        assert isinstance(screen, VaultScreen)
        memory_list = screen.query_one(MemoryList)
        await pilot.press("down", "down", "down")
        form = await open_form(pilot)
        form.query_one("#new-memory-text", TextArea).text = "The spare key is under the blue pot."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        await settled(pilot)
        view = screen.query_one(MemoryView)
        await until(pilot, lambda: view.shown is not None)
        assert view.shown is not None and view.shown.memory.title.startswith("The spare key")
        assert memory_list.cursor == 0
        assert memory_list.current is not None
        assert memory_list.current.id == view.shown.memory.id
