"""The pins screen: the pins in order against the budget; reorder, unpin and add."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList
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

from memoryctl.context import context_bundle
from memoryctl.storage import gitrepo
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import MemoryApp
from memoryctl.tui.screens.pins import PinsScreen
from memoryctl.tui.widgets.pick_memory import PickMemoryScreen
from memoryctl.tui.widgets.token_meter import TokenMeter

__all__ = ["app", "vault", "vault_path"]


def pin_titles(screen: PinsScreen) -> list[str]:
    box = screen.query_one("#pins", OptionList)
    return [
        str(box.get_option_at_index(n).prompt).split("  ", 2)[-1] for n in range(box.option_count)
    ]


async def pins_screen(pilot: Pilot, app: MemoryApp) -> PinsScreen:
    """The pins screen, shown and loaded."""
    await show(pilot, "2")
    screen = app.screen
    assert isinstance(screen, PinsScreen)
    await until(pilot, lambda: screen.state is not None)
    await settled(pilot)
    return screen


async def test_pins_show_in_order_with_the_bundles_token_counts(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await pins_screen(pilot, app)
        assert [row.memory.id for row in screen.state.rows] == [m.id for m in vault.index.pins()]
        bundle = context_bundle(vault)
        meter = screen.query_one(TokenMeter)
        assert (meter.used, meter.budget) == (bundle.sections["pinned"], bundle.budget)
        assert [r.tokens for r in screen.state.rows] == [e.tokens for e in bundle.pinned]
        assert not meter.has_class("-over")


def reorders(vault: Vault) -> int:
    """How many commits reordered the pins."""
    log = gitrepo._git(vault.root, "log", "--format=%s").stdout.splitlines()
    return log.count("Reorder pins")


async def test_moving_a_pin_down_reorders_the_pins_on_disk(app: MemoryApp, vault: Vault) -> None:
    before = [m.id for m in vault.index.pins()]
    async with app.run_test(size=SIZE) as pilot:
        screen = await pins_screen(pilot, app)
        await pilot.press("J")
        # The list moves at once, before the files are written.
        assert [r.memory.id for r in screen.state.rows][:2] == [before[1], before[0]]
        await until(pilot, lambda: [m.id for m in vault.index.pins()][:2] == [before[1], before[0]])
        await pilot.press("ctrl+up")
        await until(pilot, lambda: [m.id for m in vault.index.pins()] == before)
        await settled(pilot)
        first = vault.index.pins()[0]
        assert "pin_order: 1" in (vault.root / first.path).read_text()


async def test_a_burst_of_moves_to_the_top_is_one_commit(app: MemoryApp, vault: Vault) -> None:
    before = [m.id for m in vault.index.pins()]
    commits = reorders(vault)
    async with app.run_test(size=SIZE) as pilot:
        screen = await pins_screen(pilot, app)
        await pilot.press("end")
        await pilot.press(*"K" * (len(before) - 1))
        assert screen.state.rows[0].memory.id == before[-1]
        await until(pilot, lambda: vault.index.pins()[0].id == before[-1], timeout=10)
        await settled(pilot)
        assert reorders(vault) == commits + 1
        assert [m.id for m in vault.index.pins()] == [before[-1], *before[:-1]]
        assert screen.pins_list.highlighted_id == before[-1]  # the cursor stayed on it


async def test_moves_are_written_when_the_person_leaves_the_screen(
    app: MemoryApp, vault: Vault
) -> None:
    before = [m.id for m in vault.index.pins()]
    async with app.run_test(size=SIZE) as pilot:
        await pins_screen(pilot, app)
        await pilot.press("J", "1")  # away at once, before the burst has settled
        await settled(pilot)
        assert [m.id for m in vault.index.pins()][:2] == [before[1], before[0]]


async def test_the_cursor_stops_at_the_last_pin_and_u_unpins_that_one(
    app: MemoryApp, vault: Vault
) -> None:
    last = vault.index.pins()[-1]
    async with app.run_test(size=SIZE) as pilot:
        screen = await pins_screen(pilot, app)
        await pilot.press("end", "down", "down")
        assert screen.pins_list.highlighted_id == last.id  # no wrap to the first
        await pilot.press("u")
        await settled(pilot)
        assert last.id not in [m.id for m in vault.index.pins()]
        assert len(vault.index.pins()) == len(screen.state.rows)


async def test_with_no_pins_the_pins_take_no_tokens(app: MemoryApp, vault: Vault) -> None:
    from memoryctl.actions import set_pinned

    for memory in vault.index.pins():
        set_pinned(vault, memory.id, False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await pins_screen(pilot, app)
        assert screen.query_one(TokenMeter).used == 0
        assert set(footer_keys(screen)) >= {"a"} and "u" not in footer_keys(screen)


async def test_unpin_and_pin_again_by_searching(app: MemoryApp, vault: Vault) -> None:
    first = vault.index.pins()[0]
    async with app.run_test(size=SIZE) as pilot:
        screen = await pins_screen(pilot, app)
        await pilot.press("u")
        await settled(pilot)
        assert first.id not in [m.id for m in vault.index.pins()]
        assert any("Unpinned" in t for t in toasts(app))
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PickMemoryScreen))
        word = first.title.split()[0].lower()
        await pilot.press(*word)
        picker = app.screen
        options = picker.query_one(OptionList)
        # The search runs after a pause in typing: wait for the one for the whole word,
        # whose first hit is the memory (a search for its first letters may list others).
        await until(
            pilot,
            lambda: (
                picker.query_one(Input).value == word
                and options.option_count > 0
                and options.get_option_at_index(0).id == first.id
            ),
        )
        await settled(pilot)
        await pilot.press("enter")
        await settled(pilot)
        assert first.id in [m.id for m in vault.index.pins()]
        assert isinstance(app.screen, PinsScreen)
        assert screen.pins_list.highlighted_id == first.id  # the cursor is on the new pin


async def test_moving_the_first_pin_up_or_the_last_down_says_why_it_stays(
    app: MemoryApp, vault: Vault
) -> None:
    before = [m.id for m in vault.index.pins()]
    async with app.run_test(size=SIZE) as pilot:
        screen = await pins_screen(pilot, app)
        first = screen.state.rows[0].memory.title
        await pilot.press("ctrl+up")
        await settled(pilot)
        assert f"“{first}” is already first: the agent reads it first." in toasts(app)
        await pilot.press("end", "J")
        await settled(pilot)
        last = screen.state.rows[-1].memory.title
        assert f"“{last}” is already last: the agent reads it last." in toasts(app)
    assert [m.id for m in vault.index.pins()] == before


async def test_with_no_pins_the_pin_keys_say_there_is_none(app: MemoryApp, vault: Vault) -> None:
    from memoryctl.actions import set_pinned

    for memory in vault.index.pins():
        set_pinned(vault, memory.id, False)
    async with app.run_test(size=SIZE) as pilot:
        await pins_screen(pilot, app)
        for key in ("u", "ctrl+up", "o"):
            app.clear_notifications()
            await pilot.press(key)
            await settled(pilot)
            assert toasts(app) == ["No memory is pinned: a searches for one to pin."]
        assert isinstance(app.screen, PinsScreen)


async def test_enter_pressed_right_after_typing_pins_the_first_match_of_what_was_typed(
    app: MemoryApp, vault: Vault
) -> None:
    newest = vault.index.list(pinned=False, limit=1)[0]
    match = vault.index.list(text="mango", pinned=False, limit=1)[0]
    assert match.id != newest.id  # the list before the search shows another first
    async with app.run_test(size=SIZE) as pilot:
        await pins_screen(pilot, app)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PickMemoryScreen))
        await settled(pilot)  # the list shows every memory, the newest first
        await pilot.press(*"mango", "enter")  # faster than the search
        await settled(pilot)
        pinned = [m.id for m in vault.index.pins()]
        assert match.id in pinned
        assert newest.id not in pinned


async def test_enter_on_a_search_that_matches_nothing_says_so(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pins_screen(pilot, app)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PickMemoryScreen))
        await pilot.press(*"zzqx", "enter")
        await settled(pilot)
        assert isinstance(app.screen, PickMemoryScreen)  # still there, to type again
        assert "No memory matches “zzqx”." in toasts(app)


async def test_reordering_a_pin_the_person_edited_commits_only_the_order_and_says_so(
    app: MemoryApp, vault: Vault
) -> None:
    import subprocess

    first = vault.index.pins()[0]
    path = vault.root / first.path
    path.write_text(path.read_text() + "\nMy own line, not committed.\n")
    async with app.run_test(size=SIZE) as pilot:
        await pins_screen(pilot, app)
        await pilot.press("J")
        await settled(pilot)
        await until(pilot, lambda: any("stay uncommitted" in t for t in toasts(app)))
    assert [t for t in toasts(app) if first.path in t]
    committed = subprocess.run(
        ["git", "show", f"HEAD:{first.path}"], cwd=vault.root, capture_output=True, text=True
    ).stdout
    assert "pin_order: 2" in committed and "My own line" not in committed
    assert "My own line, not committed." in path.read_text()


async def test_meter_warns_when_the_pins_alone_pass_the_budget(vault_path, vault: Vault) -> None:
    config = vault_path / "memoryctl.toml"
    config.write_text(config.read_text() + "\n[profiles.tiny]\nbudget = 100\n")
    from memoryctl.tui.app import make_app

    tight = Vault(vault_path)
    try:
        app = make_app(tight, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await show(pilot, "2")
            screen = app.screen
            await pilot.click("#pins-profile")
            await pilot.pause()
            select = screen.query_one("#pins-profile")
            select.value = "tiny"
            await settled(pilot)
            meter = screen.query_one(TokenMeter)
            assert meter.budget == 100
            assert meter.has_class("-over")
            assert "over the budget" in meter.render().plain
    finally:
        tight.close()


@pytest.mark.parametrize("theme", THEMES)
def test_pins_screen_snapshot(app: MemoryApp, theme: str, snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        await show(pilot, "2")
        screen = pilot.app.screen
        assert isinstance(screen, PinsScreen)
        await until(pilot, lambda: screen.state is not None)
        await settled(pilot)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
