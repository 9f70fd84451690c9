"""The corrections screen: reach with the matched text highlighted, detach, write new."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static, TextArea
from tui_support import (
    SIZE,
    THEMES,
    app,
    footer_keys,
    quiet,
    settled,
    show,
    toasts,
    until,
    vault,
    vault_path,
)

from memoryctl.reach import reach_of
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import MemoryApp
from memoryctl.tui.screens.corrections import CorrectionsScreen
from memoryctl.tui.screens.new_correction import NewCorrectionScreen
from memoryctl.tui.widgets.highlight import MATCH_STYLE
from memoryctl.tui.widgets.modals import ConfirmScreen

__all__ = ["app", "vault", "vault_path"]


async def open_corrections(pilot: Pilot) -> CorrectionsScreen:
    await show(pilot, "4")
    screen = pilot.app.screen
    assert isinstance(screen, CorrectionsScreen)
    await until(pilot, lambda: screen.shown is not None)
    await settled(pilot)
    return screen


async def test_reach_highlights_the_matched_text(app: MemoryApp, vault: Vault) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_corrections(pilot)
        assert screen.shown is not None
        _, reached = reach_of(vault, screen.shown.id)
        box = screen.query_one("#reach", OptionList)
        assert box.option_count == len(reached) > 0
        prompt = box.get_option_at_index(0).prompt
        _, needle = reached[0]
        marked = [prompt.plain[s.start : s.end] for s in prompt.spans if s.style == MATCH_STYLE]
        assert marked and all(m.casefold() == needle.casefold() for m in marked)


async def test_detach_a_false_match(app: MemoryApp, vault: Vault) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_corrections(pilot)
        correction = screen.shown
        assert correction is not None
        target = screen.reached[0][0]
        await pilot.press("tab")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settled(pilot)
        _, reached = reach_of(vault, correction.id)
        assert target.id not in [m.id for m, _ in reached]
        assert target.id in vault.index.get(correction.id).detached
        assert any(t.startswith("Detached") for t in toasts(app))
        assert target.id not in [m.id for m, _ in screen.reached]


async def test_a_detached_memory_is_listed_after_the_reach_and_a_reattaches_it(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_corrections(pilot)
        correction = screen.shown
        assert correction is not None
        target = screen.reached[0][0]
        count = len(screen.reached)
        await pilot.press("tab")
        assert "d" in footer_keys(screen) and "a" not in footer_keys(screen)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: [m.id for m in screen.detached] == [target.id])
        await settled(pilot)
        box = screen.query_one("#reach", OptionList)
        assert box.option_count == count  # the reach less one, and the detached one after it
        assert "detached: no now: line" in box.get_option_at_index(count - 1).prompt.plain
        await pilot.press("end")
        await settled(pilot)
        assert "a" in footer_keys(screen) and "d" not in footer_keys(screen)
        await pilot.press("a")
        await until(pilot, lambda: screen.detached == [])
        await settled(pilot)
        assert target.id in [m.id for m, _ in screen.reached]
        assert vault.index.get(correction.id).detached == ()
        _, reached = reach_of(vault, correction.id)
        assert target.id in [m.id for m, _ in reached]
        assert any(t.startswith("Reattached") for t in toasts(app))
        assert "a" not in footer_keys(screen)


async def test_reattach_with_nothing_detached_and_detach_on_a_detached_row_say_why(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_corrections(pilot)
        correction = screen.shown
        assert correction is not None
        await pilot.press("tab", "a")
        await settled(pilot)
        assert f"No memory is detached from “{correction.title}”: d detaches one." in toasts(app)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: len(screen.detached) == 1)
        await settled(pilot)
        await pilot.press("end", "d")
        await settled(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert "The memory under the cursor is detached already: a reattaches it." in toasts(app)


async def test_a_new_correction_shows_its_reach_before_it_is_saved(
    app: MemoryApp, vault: Vault
) -> None:
    count = vault.index.count()
    async with app.run_test(size=SIZE) as pilot:
        await open_corrections(pilot)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, NewCorrectionScreen))
        screen = app.screen
        screen.query_one(TextArea).text = "I live in Porto now."
        screen.query_one(Input).value = "Lisbon"
        await pilot.pause(0.4)
        await settled(pilot)
        reach = str(screen.query_one("#correction-reach-text", Static).content)
        assert "“Lisbon” reaches" in reach
        assert vault.index.count() == count  # nothing saved yet
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, CorrectionsScreen))
        await settled(pilot)
        assert vault.index.count() == count + 1
        assert any("Lisbon" in m.deprecates for m in vault.index.with_deprecates())


@pytest.mark.parametrize("theme", THEMES)
def test_corrections_screen_with_a_detached_memory_snapshot(
    app: MemoryApp, vault: Vault, theme: str, snap_compare
) -> None:
    from memoryctl.reach import detach

    detach(vault, "q0csfnqc07", "ed8xn3kjds")

    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        screen = await open_corrections(pilot)
        box = screen.query_one("#corrections", OptionList)
        ids = [box.get_option_at_index(n).id for n in range(box.option_count)]
        box.highlighted = ids.index("q0csfnqc07")
        await until(pilot, lambda: [m.id for m in screen.detached] == ["ed8xn3kjds"])
        await pilot.press("tab", "end")
        await settled(pilot)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
def test_corrections_screen_snapshot(app: MemoryApp, theme: str, snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        await open_corrections(pilot)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize(
    ("status", "reason", "again"),
    [("retired", "retired", "restored"), ("needs_review", "needs review", "confirmed")],
)
async def test_an_inactive_correction_says_it_reaches_nothing(
    vault_path, status: str, reason: str, again: str
) -> None:
    from test_bundle import edit_frontmatter, path_of

    from memoryctl.tui.app import make_app

    edit_frontmatter(path_of(vault_path, "q0csfnqc07"), status=status)
    opened = Vault(vault_path)
    try:
        async with make_app(opened, watch=False).run_test(size=SIZE) as pilot:
            screen = await open_corrections(pilot)
            box = screen.query_one("#corrections", OptionList)
            ids = [box.get_option_at_index(n).id for n in range(box.option_count)]
            box.highlighted = ids.index("q0csfnqc07")
            await until(pilot, lambda: screen.shown is not None and screen.shown.id == "q0csfnqc07")
            await settled(pilot)
            reach = screen.query_one("#reach", OptionList)
            assert reach.option_count == 0
            assert reach.border_title == f"Inactive ({reason}): reaches no memory"
            assert reach.border_subtitle == f"would reach 2 memories if {again}"
            prompt = box.get_option_at_index(ids.index("q0csfnqc07")).prompt
            assert f"inactive ({reason})" in prompt.plain
    finally:
        opened.close()


async def test_escape_in_the_new_correction_asks_before_dropping_the_text(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await open_corrections(pilot)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, NewCorrectionScreen))
        form = app.screen
        await pilot.press(*"Porto now")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is form)
        assert form.query_one(TextArea).text == "Porto now"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, CorrectionsScreen))
        # With nothing typed, escape closes at once.
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, NewCorrectionScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, CorrectionsScreen))
