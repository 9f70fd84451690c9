"""Keys inside dialogs and editors: f1 shows the keys that work where the person is, a
key a dialog cannot take says so, and no key shown does something else there."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import Static, TextArea
from tui_support import (
    SIZE,
    THEMES,
    app,
    help_text,
    open_editor,
    quiet,
    settled,
    toasts,
    until,
    vault,
    vault_path,
)

from memoryctl.tui.app import HelpScreen, MemoryApp
from memoryctl.tui.screens.new_correction import NewCorrectionScreen
from memoryctl.tui.screens.new_memory import NewMemoryScreen
from memoryctl.tui.screens.pins import PinsScreen
from memoryctl.tui.screens.vault import VaultScreen
from memoryctl.tui.widgets.modals import ConfirmScreen

__all__ = ["app", "vault", "vault_path"]

DINNER = "scarjk0h83"
NUMBERED = ("Vault", "Pins", "Review", "Corrections", "Preview", "Agents")


async def new_memory_typed(pilot: Pilot, text: str) -> NewMemoryScreen:
    """The new-memory form (n), with `text` typed into it."""
    await settled(pilot)
    await pilot.press("n")
    await until(pilot, lambda: isinstance(pilot.app.screen, NewMemoryScreen))
    await pilot.pause()
    await pilot.press(*text)
    screen = pilot.app.screen
    assert isinstance(screen, NewMemoryScreen)
    return screen


async def unsaved_question(pilot: Pilot) -> ConfirmScreen:
    """The question esc asks of a new memory holding text: a dialog with no text box."""
    await new_memory_typed(pilot, "Likes mangoes")
    await pilot.press("escape")
    await until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
    screen = pilot.app.screen
    assert isinstance(screen, ConfirmScreen)
    return screen


async def help_of(pilot: Pilot, key: str = "f1") -> HelpScreen:
    await pilot.press(key)
    await until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, HelpScreen)
    return screen


def rows_named(help_screen: HelpScreen) -> set[str]:
    return {name for _, name, _ in help_screen.rows}


async def test_f1_in_a_dialog_lists_the_dialogs_own_keys_and_esc_goes_back_to_it(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        question = await unsaved_question(pilot)
        for key in ("f1", "question_mark"):
            shown = await help_of(pilot, key)
            assert {"Yes", "No", "Help", "Quit"} <= rows_named(shown)
            assert "y" in help_text(shown) and "n / esc" in help_text(shown)
            # The keys the dialog holds back are not its keys: no screen, import or sync.
            assert not rows_named(shown) & {*NUMBERED, "Import", "Sync", "New memory"}
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is question)


async def test_a_number_key_in_a_dialog_says_to_close_it_first_and_leaves_it_open(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        question = await unsaved_question(pilot)
        await pilot.press("2")
        await until(pilot, lambda: bool(toasts(app)))
        assert toasts(app)[-1] == "Close the dialog first (esc), then press 2 for Pins."
        await pilot.press("f5")
        await pilot.pause()
        assert toasts(app)[-1] == "Close the dialog first (esc), then press f5 for Sync."
        assert app.screen is question


async def test_the_palette_over_a_dialog_offers_the_dialogs_actions_not_the_screens(
    app: MemoryApp,
) -> None:
    from memoryctl.tui.keys import bound_actions

    async with app.run_test(size=SIZE) as pilot:
        question = await unsaved_question(pilot)
        offered = {binding.description for binding, _ in bound_actions(app, question)}
        assert {"Yes", "No", "Help", "Quit"} <= offered
        assert not offered & {*NUMBERED, "Import", "Sync"}


async def test_in_a_dialogs_text_box_a_number_and_question_mark_type_and_help_says_so(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        app.clear_notifications()
        form = await new_memory_typed(pilot, "Room 2? ")
        assert form.query_one("#new-memory-text", TextArea).text == "Room 2? "
        assert app.screen is form
        assert not toasts(app)  # typed, so nothing to say about 2 or ?
        shown = await help_of(pilot)
        assert {"Save", "Cancel", "Help", "Quit"} <= rows_named(shown)
        assert not rows_named(shown) & set(NUMBERED)
        assert "f1 / ?" not in help_text(shown)  # ? types here: f1 alone shows the help
        assert shown.typed_note == "In the text box with the focus, this key types: ?"


async def test_f1_in_the_editor_lists_no_number_key_and_names_the_keys_it_types(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot, DINNER)
        await pilot.press("3")
        assert app.screen is editor  # typed, not a screen switch
        shown = await help_of(pilot)
        assert {"Save", "Close", "Reload", "Diff", "Help", "Quit", "Import", "Sync"} <= (
            rows_named(shown)
        )
        assert not rows_named(shown) & set(NUMBERED)
        note = "In the text box with the focus, these keys type: ? 1 2 3 4 5 6"
        assert str(shown.query_one(".help-typed", Static).content) == note


async def test_ctrl_q_while_memoryctl_asks_whether_to_quit_quits(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await new_memory_typed(pilot, "Likes mangoes")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_q_in_another_dialog_asks_to_quit_rather_than_doing_nothing(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        question = await unsaved_question(pilot)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: app.screen is not question)
        assert isinstance(app.screen, ConfirmScreen)
        assert "Quit memoryctl" in app.screen.text
        await pilot.press("n")
        await until(pilot, lambda: app.screen is question)
        await pilot.press("ctrl+q", "y")
        await pilot.pause()
        assert not app.is_running


async def test_a_number_key_never_closes_a_screen_holding_text_not_saved(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("4")
        await settled(pilot)
        await pilot.press("n")  # a new correction
        await until(pilot, lambda: isinstance(app.screen, NewCorrectionScreen))
        await pilot.pause()
        writing = app.screen
        await pilot.press(*"Deploys go through staging")
        # Out of the text boxes, the number keys switch screens again.
        writing.query_one("#correction-reach").focus()
        await pilot.press("2")
        await settled(pilot)
        assert isinstance(app.screen, PinsScreen)
        await pilot.press("4")
        await settled(pilot)
        assert app.screen is writing
        assert writing.query_one("#correction-text", TextArea).text == (
            "Deploys go through staging"
        )
        assert "not saved" in toasts(app)[-1]
        await pilot.press("1")
        await settled(pilot)
        assert isinstance(app.screen, VaultScreen)


@pytest.mark.parametrize("theme", THEMES)
def test_help_of_the_editor_at_80x24(app: MemoryApp, theme: str, snap_compare) -> None:
    async def open_the_help(pilot: Pilot) -> None:
        pilot.app.theme = theme
        await open_editor(pilot, DINNER)
        quiet(pilot.app)  # while the editor is in front: the help is drawn over its toasts
        await pilot.pause()
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settled(pilot)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_the_help)
