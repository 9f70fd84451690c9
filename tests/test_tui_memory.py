"""The memory screen: a note with its lineage, anchors and history; pin, edit in place."""

from __future__ import annotations

import subprocess

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static, TabbedContent, TextArea
from tui_support import (
    SIZE,
    THEMES,
    app,
    footer_keys,
    open_editor,
    open_memory,
    quiet,
    settled,
    toasts,
    until,
    vault,
    vault_path,
)

from memoryctl.storage.vault import Vault
from memoryctl.tui.app import MemoryApp
from memoryctl.tui.screens.editor import EditorScreen
from memoryctl.tui.screens.memory import MemoryScreen
from memoryctl.tui.widgets import MemoryView
from memoryctl.tui.widgets.modals import AskScreen, ConfirmScreen

__all__ = ["app", "vault", "vault_path"]

DINNER = "scarjk0h83"


async def test_enter_twice_opens_the_memory_on_its_own_screen(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("enter")
        await settled(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MemoryScreen))
        await settled(pilot)
        await pilot.press("escape")
        assert not isinstance(app.screen, MemoryScreen)


async def test_the_memory_screen_shown_again_shows_the_new_memory(
    app: MemoryApp, vault: Vault
) -> None:
    derived = next(m for m in vault.index.list() if m.derived_from)
    source = vault.index.get(derived.derived_from[0])
    assert source is not None
    async with app.run_test(size=SIZE) as pilot:
        first = await open_memory(pilot, DINNER)
        await pilot.press("escape")
        await settled(pilot)
        again = await open_memory(pilot, source.id)
        assert again is first  # the app keeps one Memory screen
        view = again.query_one(MemoryView)
        assert view.shown is not None and view.shown.memory.id == source.id
        assert again.sub_title == source.title
        lineage = again.query_one("#lineage", OptionList)
        ids = [lineage.get_option_at_index(n).id for n in range(lineage.option_count)]
        assert derived.id in ids
        # A memory opened from it gets a screen of its own; escape comes back to this one.
        lineage.focus()
        lineage.highlighted = ids.index(derived.id)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not again)
        await settled(pilot)
        top = app.screen
        assert isinstance(top, MemoryScreen) and top.memory_id == derived.id
        await pilot.press("escape")
        await settled(pilot)
        assert app.screen is again and again.memory_id == source.id


async def test_brackets_walk_the_memory_tabs_and_the_focus_goes_with_them(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot, DINNER)
        tabs = screen.query_one(TabbedContent)
        assert footer_keys(screen)["right_square_bracket"] == "Next tab"
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: tabs.active == "tab-lineage")
        await until(pilot, lambda: app.focused is screen.query_one("#lineage"))
        await pilot.press("left_square_bracket", "left_square_bracket")
        await until(pilot, lambda: tabs.active == "tab-history")
        await pilot.press("ctrl+pagedown")
        await until(pilot, lambda: tabs.active == "tab-note")


async def test_lineage_history_and_anchors_are_shown(app: MemoryApp, vault: Vault) -> None:
    derived = next(m for m in vault.index.list() if m.derived_from)
    source = derived.derived_from[0]
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot, source)
        lineage = screen.query_one("#lineage", OptionList)
        ids = [lineage.get_option_at_index(n).id for n in range(lineage.option_count)]
        assert derived.id in ids
        commits = screen.query_one("#commits", OptionList)
        assert commits.option_count >= 1
        anchored = next(m for m in vault.index.list() if m.anchors)
        screen = await open_memory(pilot, anchored.id)
        text = str(screen.query_one("#anchors", Static).content)
        assert anchored.anchors[0].path in text


async def test_pin_from_the_memory_screen(app: MemoryApp, vault: Vault) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(pilot, DINNER)
        await pilot.press("p")
        await settled(pilot)
        assert DINNER in [m.id for m in vault.index.pins()]
        assert "Pinned" in toasts(app)


async def test_a_toast_shows_a_title_with_square_brackets_as_written(
    app: MemoryApp, vault: Vault
) -> None:
    """Toasts carry the person's words (titles, paths, a refusal naming `[vault] ignore`):
    square brackets in them are text, never markup that eats them or stops the app."""
    from textual.widgets._toast import Toast

    from memoryctl.actions import NewMemory, add_memory

    title = "Sketch [draft] of the parser [/x] rules"
    add_memory(vault, NewMemory("Parser rules.", title=title, pinned=True))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settled(pilot)
        await pilot.press("2")
        await settled(pilot)
        await pilot.press("end", "u")
        await settled(pilot)
        shown = [str(toast.render()) for toast in app.screen.query(Toast)]
        assert any(f"“{title}”" in text for text in shown), shown


async def test_edit_in_place_replaces_the_text_of_the_same_file(
    app: MemoryApp, vault: Vault
) -> None:
    before = vault.index.get(DINNER)
    assert before is not None
    count = vault.index.count()
    async with app.run_test(size=SIZE) as pilot:
        editor = (await open_editor(pilot, DINNER)).query_one(TextArea)
        editor.text = "Dinner with Sam moved to Saturday 2026-11-21 at 20:00.\n"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MemoryScreen))
        await settled(pilot)
    after = vault.index.get(DINNER)
    assert after is not None and after.path == before.path
    assert after.body.startswith("Dinner with Sam moved to Saturday")
    assert vault.index.count() == count
    text = (vault.root / before.path).read_text()
    assert f"id: {DINNER}" in text and "moved to Saturday" in text


async def test_saving_over_a_file_changed_on_disk_is_refused(app: MemoryApp, vault: Vault) -> None:
    memory = vault.index.get(DINNER)
    assert memory is not None
    path = vault.root / memory.path
    async with app.run_test(size=SIZE) as pilot:
        editor_screen = await open_editor(pilot, DINNER)
        path.write_text(path.read_text().replace("Taberna do Largo", "Casa Guedes"))
        editor_screen.query_one(TextArea).text = "My version.\n"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: editor_screen.has_class("-conflict"))
        assert isinstance(app.screen, EditorScreen)
        assert "Casa Guedes" in path.read_text() and "My version" not in path.read_text()
        await pilot.press("ctrl+g")
        await pilot.pause()
        diff = str(app.screen.query_one(Static).content)
        assert "Casa Guedes" in diff and "My version." in diff
        await pilot.press("escape")
        await pilot.press("ctrl+r")  # your text is not saved: it asks first
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settled(pilot)
        assert "Casa Guedes" in editor_screen.query_one(TextArea).text
        assert not editor_screen.has_class("-conflict")


async def test_reload_asks_before_throwing_away_typed_text_and_a_diff_of_nothing_says_so(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        editor_screen = await open_editor(pilot, DINNER)
        await pilot.press("ctrl+g")  # nothing typed yet
        await pilot.pause()
        shown = str(app.screen.query_one(Static).content)
        assert shown == "Your text and the file on disk are the same."
        await pilot.press("escape")
        editor_screen.query_one(TextArea).text = "My version.\n"
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")  # keep typing
        await settled(pilot)
        assert app.screen is editor_screen
        assert editor_screen.query_one(TextArea).text == "My version.\n"


async def retire_with_keys(pilot: Pilot, screen: MemoryScreen, reason: str) -> None:
    await pilot.press("r")
    await until(pilot, lambda: isinstance(pilot.app.screen, AskScreen))
    await pilot.press(*reason, "enter")
    await until(pilot, lambda: pilot.app.screen is screen)
    await settled(pilot)


async def test_the_keys_follow_the_memory_as_it_is_retired_and_restored(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot, DINNER)
        assert set(footer_keys(screen)) >= {"p", "e", "E", "r"}
        assert footer_keys(screen)["p"] == "Pin"
        await retire_with_keys(pilot, screen, "over")
        assert screen.memory is not None and screen.memory.status == "retired"
        # A retired memory can only be restored: the footer says so at once.
        assert footer_keys(screen) == {"escape": "Back", "R": "Restore"} | app_keys(screen)
        await pilot.press("p")  # not offered: it pins nothing and says why
        await settled(pilot)
        assert DINNER not in [m.id for m in vault.index.pins()]
        named = f"{DINNER} ({screen.memory.title})"  # as the core names it, id first
        assert f"{named} is retired; only a current one is pinned." in toasts(app)
        await pilot.press("r")
        await settled(pilot)
        assert not isinstance(app.screen, AskScreen)  # no reason asked for
        assert f"{named} is already retired." in toasts(app)
        await pilot.press("R")
        await settled(pilot)
        assert screen.memory is not None and screen.memory.status == "active"
        assert "R" not in footer_keys(screen)
        assert set(footer_keys(screen)) >= {"p", "e", "E", "r"}
        await pilot.press("p")
        await settled(pilot)
        assert footer_keys(screen)["p"] == "Unpin"
        assert DINNER in [m.id for m in vault.index.pins()]


async def test_a_memory_held_for_review_offers_confirm_and_not_pin(
    app: MemoryApp, vault: Vault
) -> None:
    from memoryctl.actions import utcnow
    from memoryctl.decisions import act

    act(vault, "needs_review", DINNER, now=utcnow(), reason="is it still on?")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot, DINNER)
        keys = footer_keys(screen)
        assert "c" in keys and "p" not in keys and "R" not in keys
        await pilot.press("c")
        await settled(pilot)
        assert screen.memory is not None and screen.memory.status == "active"
        assert screen.memory.checked is not None
        # Confirmed, it can be pinned; confirming it again only dates the check anew.
        assert footer_keys(screen)["p"] == "Pin" and footer_keys(screen)["c"] == "Confirm"


async def test_the_keys_are_those_each_decisions_guard_allows(app: MemoryApp, vault: Vault) -> None:
    from memoryctl.actions import utcnow
    from memoryctl.decisions import act
    from memoryctl.review_actions import CONFIRM, REPLACE, RESTORE, RETIRE

    act(vault, "retire", DINNER, now=utcnow(), reason="over")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_memory(pilot, DINNER)
        memory = screen.memory
        assert memory is not None
        keys = footer_keys(screen)
        for key, action in (("r", RETIRE), ("R", RESTORE), ("c", CONFIRM), ("e", REPLACE)):
            assert (key in keys) == action.allows(memory), key


def app_keys(screen: MemoryScreen) -> dict[str, str]:
    """The keys shown whatever the memory: the app's own, and the tabs'."""
    kept = ("ctrl+q", "f1", *"123456", "left_square_bracket", "right_square_bracket")
    return {k: v for k, v in footer_keys(screen).items() if k in kept}


@pytest.mark.parametrize("theme", THEMES)
def test_memory_screen_snapshot(app: MemoryApp, theme: str, snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        await open_memory(pilot, DINNER)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_proposing_a_review_twice_from_the_memory_screen_files_it_once(
    app: MemoryApp, vault: Vault
) -> None:
    from memoryctl.review import queue
    from memoryctl.tui.widgets.modals import AskScreen

    async def propose(reason: str) -> None:
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*reason)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MemoryScreen))
        await settled(pilot)

    async with app.run_test(size=SIZE) as pilot:
        await open_memory(pilot, DINNER)
        await propose("moved")
        await propose("moved")

    [item] = queue(vault).items
    p = item.proposal
    assert (p.action, p.targets, p.origin, p.reason) == ("needs_review", (DINNER,), "user", "moved")
    assert any(f"Already proposed as {p.id} (pending)" in t for t in toasts(app))
    # The same proposal, and the same commit, as `memoryctl propose review` makes.
    log = subprocess.run(
        ["git", "log", "-1", "--format=%B"], cwd=vault.root, capture_output=True, text=True
    ).stdout
    assert log.startswith(f"Propose: hold for review {item.targets[0].memory.title}\n")
    assert f"proposal: {p.id}\naction: needs_review\n" in log


async def test_ctrl_q_with_unsaved_text_in_the_editor_asks_first(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot, DINNER)
        editor.query_one(TextArea).insert("Bring flowers. ")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is editor)
        assert "Bring flowers." in editor.query_one(TextArea).text
        assert app.return_code is None  # still running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: app.return_code is not None)
