"""The vault list's filters besides the text: status, kind, namespace, tag and pinned."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select
from tui_support import (
    SIZE,
    THEMES,
    footer_keys,
    help_rows_now,
    quiet,
    said,
    settled,
    until,
    vault,
    vault_path,
)

from memoryctl.storage.index import ListFilters
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import make_app
from memoryctl.tui.list_filter import ListFilter
from memoryctl.tui.screens.vault import VaultScreen
from memoryctl.tui.widgets import MemoryList
from memoryctl.tui.widgets.facet_bar import FacetBar

__all__ = ["vault", "vault_path"]

RETIRED_NOTE = """\
---
id: retired001
title: The old office wifi password
kind: fact
status: retired
created: 2026-02-01T09:00:00Z
---

The office wifi password was hunter2.
"""


async def list_shows(pilot: Pilot) -> tuple[VaultScreen, MemoryList]:
    """Wait until the list shows what the filter and the facets ask for."""
    screen = pilot.app.screen
    assert isinstance(screen, VaultScreen)
    memory_list = screen.query_one(MemoryList)
    await settled(pilot)
    await until(
        pilot,
        lambda: (
            memory_list.pages is not None
            and memory_list.pages.wanted == screen.wanted
            and not memory_list.border_subtitle
        ),
    )
    return screen, memory_list


def titles(memory_list: MemoryList) -> list[str]:
    assert memory_list.pages is not None
    rows = (memory_list.pages.row(n) for n in range(memory_list.pages.count))
    return [row.memory.title for row in rows if row is not None]


async def choose(pilot: Pilot, facet: str, value: str) -> MemoryList:
    """Open the filters with `f` and choose a value for one of them."""
    await list_shows(pilot)
    await pilot.press("f")
    bar = pilot.app.screen.query_one(FacetBar)
    select = bar.query_one(f"#facet-{facet}", Select)
    await until(pilot, lambda: any(v == value for _, v in select._options))
    select.value = value
    return (await list_shows(pilot))[1]


async def test_choosing_a_kind_with_the_keys_lists_only_that_kind(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await list_shows(pilot)
        # f opens the filters on the status; tab moves to the kind, whose second choice
        # (after "any kind" and "fact") is "preference".
        await pilot.press("f", "tab", "enter", "down", "down", "enter")
        screen, memory_list = await list_shows(pilot)
        assert screen.wanted.kind == "preference"
        assert memory_list.pages is not None
        assert memory_list.pages.count == vault.index.count(ListFilters(kind="preference")) == 9
        assert {row.memory.kind for row in map(memory_list.pages.row, range(9)) if row} == {
            "preference"
        }
        assert memory_list.border_title == "9 of 45 memories · kind preference"


async def test_status_filter_finds_the_retired_memory(vault_path: Path) -> None:
    (vault_path / "memories" / "wifi.md").write_text(RETIRED_NOTE, encoding="utf-8")
    vault = Vault(vault_path)
    try:
        app = make_app(vault, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            memory_list = await choose(pilot, "status", "retired")
            assert titles(memory_list) == ["The old office wifi password"]
            assert memory_list.border_title == "1 of 46 memories · status retired"
            assert memory_list.render_line(0).text.startswith("   x 2026-02-01 fact")
    finally:
        vault.close()


async def test_namespace_filter_lists_only_that_namespace(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        memory_list = await choose(pilot, "namespace", "personal")
        expected = [m.title for m in vault.index.list(namespace="personal")]
        assert expected and titles(memory_list) == expected
        assert len(expected) < 45


async def test_tag_filter_offers_the_vaults_tags_and_lists_their_memories(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        memory_list = await choose(pilot, "tag", "release")
        expected = [m.title for m in vault.index.list(tag="release")]
        assert len(expected) >= 2 and titles(memory_list) == expected


async def test_pinned_filter_lists_the_pins_and_not_pinned_the_rest(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        memory_list = await choose(pilot, "pinned", "yes")
        assert len(titles(memory_list)) == 6
        assert all(memory_list.render_line(y).text[1] == "*" for y in range(6))
        assert memory_list.border_title == "6 of 45 memories · pinned"
        select = pilot.app.screen.query_one("#facet-pinned", Select)
        select.value = "no"
        _, memory_list = await list_shows(pilot)
        assert len(titles(memory_list)) == 39
        assert memory_list.border_title == "39 of 45 memories · not pinned"


async def test_text_and_facets_narrow_together_and_stay_when_the_bar_hides(
    vault: Vault,
) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, "kind", "fact")
        await pilot.press("escape")  # the bar hides; the kind stays chosen
        screen, memory_list = await list_shows(pilot)
        assert not screen.query_one(FacetBar).has_class("-shown")
        assert screen.focused is memory_list
        await pilot.press("slash", *"ufo", "enter")
        screen, memory_list = await list_shows(pilot)
        expected = [m.title for m in vault.index.list(kind="fact", text="ufo")]
        assert expected and titles(memory_list) == expected
        assert memory_list.border_title == f"{len(expected)} of 45 memories · kind fact"
        await pilot.press("f")
        select = screen.query_one("#facet-kind", Select)
        select.clear()
        _, memory_list = await list_shows(pilot)
        assert titles(memory_list) == [m.title for m in vault.index.list(text="ufo")]


async def test_a_file_added_while_the_app_was_closed_appears_after_the_stored_list(
    vault_path: Path,
) -> None:
    built = Vault(vault_path)
    assert built.index.count() == 45
    built.close()
    (vault_path / "memories" / "wifi.md").write_text(RETIRED_NOTE, encoding="utf-8")
    seen: list[object] = []
    vault = Vault(vault_path)
    try:
        app = make_app(vault, watch=False)
        async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
            _, memory_list = await list_shows(pilot)
            # A message is seen once where it is posted and once more as it bubbles up.
            opened = list(
                {id(m): m for m in seen if isinstance(m, VaultScreen.IndexOpened)}.values()
            )
            # The list is painted from the index as it was, then from the synced one.
            assert [m.synced for m in opened] == [False, True]
            assert opened[1].changed
            await until(pilot, lambda: memory_list.border_title == "46 memories")
            assert "The old office wifi password" in titles(memory_list)
    finally:
        vault.close()


@pytest.mark.parametrize("theme", THEMES)
def test_filter_bar_at_80_by_24_snapshot(vault: Vault, theme: str, snap_compare) -> None:
    """The smallest terminal the app supports: a typed text and a kind, the bar open."""

    async def filter_by_text_and_kind(pilot: Pilot) -> None:
        pilot.app.theme = theme
        await choose(pilot, "kind", "preference")
        pilot.app.screen.query_one("#filter", Input).cursor_blink = False
        await pilot.press("slash", *"the")
        await list_shows(pilot)
        quiet(pilot.app)

    app = make_app(vault, watch=False)
    assert snap_compare(app, terminal_size=(80, 24), run_before=filter_by_text_and_kind)


async def test_x_in_the_filters_clears_them_all_at_once(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, "namespace", "personal")
        memory_list = await choose(pilot, "kind", "fact")
        assert len(titles(memory_list)) < vault.index.count()
        bar = app.screen.query_one(FacetBar)
        bar.query_one("#facet-kind", Select).focus()
        await pilot.press("x")
        memory_list = (await list_shows(pilot))[1]
        assert bar.facets == ListFilter()
        assert len(titles(memory_list)) == vault.index.count()


async def test_x_clear_all_is_offered_once_a_filter_is_chosen_and_gone_once_cleared(
    vault: Vault,
) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await list_shows(pilot)
        await pilot.press("f")
        await settled(pilot)
        assert "x" not in footer_keys(app.screen)  # nothing chosen: nothing to clear
        why = "No filter is chosen: there is nothing to clear."
        assert await said(pilot, "x") == [why]  # pressed, it says why it does nothing
        rows, off = await help_rows_now(pilot)  # and the help lists it off, with why
        assert ("x", "Clear all", why) in off
        assert "x" not in {keys for keys, _, _ in rows}
        # esc closes the filters here: one key, one row, not the screen's "Clear filter" too.
        assert [name for keys, name, _ in rows + off if keys == "esc"] == ["Close filters"]
        await choose(pilot, "kind", "fact")
        bar = app.screen.query_one(FacetBar)
        bar.query_one("#facet-kind", Select).focus()
        await settled(pilot)
        assert footer_keys(app.screen)["x"] == "Clear all"
        await pilot.press("x")
        await list_shows(pilot)
        assert "x" not in footer_keys(app.screen)


async def test_esc_with_no_filter_typed_says_so_and_the_help_lists_it_off(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await list_shows(pilot)
        why = "No filter is typed: there is nothing to clear (/ starts one)."
        assert await said(pilot, "escape") == [why]
        rows, off = await help_rows_now(pilot)
        assert ("esc", "Clear filter", why) in off
        # What works is what the footer offers; what is off, it leaves out.
        footer = footer_keys(app.screen)
        shown = {name for _, name, _ in rows}
        assert set(footer.values()) <= shown
        assert not {name for _, name, _ in off} & set(footer.values())
        await pilot.press("slash", *"mango")
        await settled(pilot)
        rows, off = await help_rows_now(pilot)
        assert ("esc", "Clear filter", "Clear the filter and go back to the list") in rows
        assert not off


@pytest.mark.parametrize(
    ("facet", "value"),
    [("status", "needs_review"), ("kind", "preference"), ("kind", "correction"), ("pinned", "no")],
)
async def test_a_chosen_status_or_kind_shows_whole_at_80_by_24(
    vault: Vault, facet: str, value: str
) -> None:
    from textual.widgets._select import SelectCurrent

    app = make_app(vault, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await choose(pilot, facet, value)
        await pilot.pause()
        select = pilot.app.screen.query_one(f"#facet-{facet}", Select)
        label = select.query_one(SelectCurrent).query_one("#label")
        shown = dict((v, words) for words, v in select._options)[value]
        assert label.size.width >= len(str(shown)), (label.size, shown)
