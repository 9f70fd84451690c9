"""The TUI's Sync action (f5), its state in the header, and a conflict
from sync decided on the Review screen."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import OptionList, Static
from tui_support import SIZE, settled, show, toasts, until

from memoryctl.actions import NewMemory, add_memory, utcnow
from memoryctl.storage.vault import Vault
from memoryctl.sync import sync
from memoryctl.tui.app import MemoryApp, make_app
from memoryctl.tui.screens.review import ReviewScreen
from tests.sync_support import Devices, both_change_many, git, make_devices


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


@asynccontextmanager
async def running(devices: Devices, device: Path) -> AsyncIterator[tuple[MemoryApp, Pilot]]:
    """The TUI on one device's vault, settled."""
    devices.on(device)
    vault = Vault(device)
    app = make_app(vault, watch=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            yield app, pilot
    finally:
        vault.close()


async def test_the_sync_key_brings_the_other_devices_memory_and_shows_the_state(devices):
    memory_id = devices.add(devices.laptop, "Owls hunt at dusk", "--title", "Owls")
    assert devices.sync(devices.laptop).code == 0
    async with running(devices, devices.desktop) as (app, pilot):
        assert "origin" in app.sub_title and "synced" in app.sub_title
        await pilot.press("f5")
        await until(pilot, lambda: any("Received" in t for t in toasts(app)), timeout=60)
        await settled(pilot)
        assert app.vault.index.get(memory_id) is not None
        assert "↑0 ↓0" in app.sub_title and "synced just now" in app.sub_title


async def run_sync_from_the_palette(app: MemoryApp, pilot: Pilot) -> None:
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*"sync")
    palette = app.screen

    def sync_entry() -> int | None:
        options = palette.query_one(OptionList)
        for n in range(options.option_count):
            if str(options.get_option_at_index(n).prompt).startswith("Sync"):
                return n
        return None

    await until(pilot, lambda: sync_entry() is not None)
    palette.query_one(OptionList).highlighted = sync_entry()
    await pilot.press("enter")


async def test_sync_from_the_palette_and_from_f5_brings_each_new_memory_of_the_other_device(
    devices,
):
    first = devices.add(devices.laptop, "Herons nest in colonies", "--title", "Herons")
    assert devices.sync(devices.laptop).code == 0
    async with running(devices, devices.desktop) as (app, pilot):
        await run_sync_from_the_palette(app, pilot)
        await until(pilot, lambda: any("Received" in t for t in toasts(app)), timeout=60)
        await until(pilot, lambda: app.vault.index.get(first) is not None, timeout=20)
        app.clear_notifications()
        laptop = Vault(devices.laptop)  # the other device, while this one's TUI runs
        try:
            second = add_memory(laptop, NewMemory("Egrets follow cattle", title="Egrets")).id
            sync(laptop, now=utcnow())
        finally:
            laptop.close()
        assert app.vault.index.get(second) is None
        await pilot.press("f5")
        await until(pilot, lambda: any("Received" in t for t in toasts(app)), timeout=60)
        await until(pilot, lambda: app.vault.index.get(second) is not None, timeout=20)
        await settled(pilot)
        assert "↑0 ↓0" in app.sub_title and "synced just now" in app.sub_title
    assert git(devices.desktop, "rev-parse", "HEAD") == git(devices.remote, "rev-parse", "main")


async def test_a_conflict_from_sync_shows_both_versions_and_taking_the_other_one(devices):
    _, _, desktop_file = devices.same_line_changed()
    async with running(devices, devices.desktop) as (app, pilot):
        await pilot.press("f5")
        await until(pilot, lambda: any("conflict" in t for t in toasts(app)), timeout=60)
        assert "Buy rice milk" in desktop_file.read_text()
        await show(pilot, "3")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        text = screen.query_one("#proposal-text", Static)
        await until(pilot, lambda: "conflict from sync" in str(text.render()), timeout=20)
        shown = str(text.render())
        assert "-Buy rice milk" in shown and "+Buy soy milk" in shown
        await pilot.press("a")
        await until(pilot, lambda: "Buy soy milk" in desktop_file.read_text(), timeout=20)
        await settled(pilot)
    assert "<<<<<<<" not in desktop_file.read_text()


async def test_sync_without_a_remote_says_what_to_do_in_words_the_tui_has(tmp_path, cli):
    vault_path = tmp_path / "vault"
    assert cli("init", str(vault_path)).code == 0
    vault = Vault(vault_path)
    app = make_app(vault, watch=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            await pilot.press("f5")
            await until(pilot, lambda: any("Sync stopped" in t for t in toasts(app)))
            said = next(t for t in toasts(app) if "Sync stopped" in t)
            assert "git remote add origin URL" in said and "then sync again" in said
            assert "memoryctl sync" not in said  # f5 is how this face syncs
    finally:
        vault.close()


async def test_a_sync_with_many_conflicts_and_notes_shows_a_few_toasts_and_counts_the_rest(
    devices,
):
    # Five memories the laptop will delete and the desktop change: five notes.
    folder = devices.laptop / "memories" / "default"
    folder.mkdir(parents=True)
    for n in range(5):
        (folder / f"gone-{n}.md").write_text(f"---\nid: gone{n}\n---\n\nold\n")
    git(devices.laptop, "add", "-A")
    git(devices.laptop, "commit", "-q", "-m", "Notes to drop")
    both_change_many(devices, 5)
    git(devices.laptop, "rm", "-q", "memories/default/gone-*.md")
    git(devices.laptop, "commit", "-q", "-m", "Dropped")
    assert devices.sync(devices.laptop).code == 0
    for n in range(5):
        path = devices.desktop / "memories" / "default" / f"gone-{n}.md"
        path.write_text(path.read_text().replace("old", "kept"))
    git(devices.desktop, "commit", "-q", "-a", "-m", "Changed")
    async with running(devices, devices.desktop) as (app, pilot):
        await pilot.press("f5")
        await until(pilot, lambda: any("Received" in t for t in toasts(app)), timeout=60)
        shown = toasts(app)
    deleted = [t for t in shown if "deleted on one device and changed on the other" in t]
    assert len(deleted) == 3
    assert "…and 2 more notes from this sync" in shown
    [conflicts] = [t for t in shown if "conflicts from sync" in t]
    assert conflicts.startswith("5 conflicts from sync to decide on the Review screen")
    assert conflicts.endswith(" and 2 more") and conflicts.count("memories/default/note-") == 3
