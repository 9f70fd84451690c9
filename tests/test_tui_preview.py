"""The preview screen: exactly what `memoryctl preview` prints, its tokens, and export."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static
from tui_support import (
    SIZE,
    THEMES,
    app,
    help_rows_now,
    quiet,
    said,
    settled,
    show,
    toasts,
    until,
    vault,
    vault_path,
)

from memoryctl.storage.vault import Vault
from memoryctl.tui.app import MemoryApp
from memoryctl.tui.screens.preview import PreviewScreen
from memoryctl.tui.widgets.export_dialog import ExportScreen
from memoryctl.tui.widgets.held_out import HeldOut
from memoryctl.tui.widgets.token_meter import TokenMeter

__all__ = ["app", "vault", "vault_path"]


def cli_preview(vault: Vault, *args: str) -> str:
    """What `memoryctl preview` prints, run as a person runs it."""
    command = [sys.executable, "-m", "memoryctl", "preview", "--vault", str(vault.root), *args]
    result = subprocess.run(command, capture_output=True, check=True)
    return result.stdout.decode("utf-8")


async def open_preview(pilot: Pilot) -> PreviewScreen:
    await show(pilot, "5")
    screen = pilot.app.screen
    assert isinstance(screen, PreviewScreen)
    await until(pilot, lambda: screen.bundle is not None)
    await settled(pilot)
    return screen


async def ask(pilot: Pilot, screen: PreviewScreen, message: str) -> None:
    """Type a message (the box's value, as the typing pause leaves it) and wait for its
    bundle to be shown."""
    screen.query_one("#preview-message", Input).value = message
    await until(pilot, lambda: screen.bundle is not None and screen.bundle.message == message)
    await settled(pilot)


async def test_preview_shows_byte_for_byte_what_the_cli_prints(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        assert screen.text == cli_preview(vault)
        message = "which repository do I push the streaming fix to?"
        await ask(pilot, screen, message)
        assert screen.text == cli_preview(vault, "--message", message)
        bundle = screen.bundle
        assert bundle.recalled
        meter = screen.query_one(TokenMeter)
        assert (meter.used, meter.budget) == (bundle.used, bundle.budget)
        sections = str(screen.query_one("#preview-sections", Static).content)
        assert f"{bundle.sections['pinned']:>6,} tokens" in sections


async def test_held_out_memories_are_listed_with_their_reasons(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        await ask(pilot, screen, "mangoes")
        held = screen.query_one(HeldOut).text
        for excluded in screen.bundle.excluded:
            assert excluded.title in held and excluded.reason in held


def held_rows(screen: PreviewScreen) -> list[str]:
    """The held-out list's rows as painted."""
    held = screen.query_one(HeldOut)
    return [held.render_line(y).text.rstrip() for y in range(held.size.height)]


async def test_a_held_out_title_takes_one_row_and_its_reason_is_shown_in_full(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        await ask(pilot, screen, "mangoes and the repository")
        excluded = screen.bundle.excluded
        long = [x.title for x in excluded if len(x.title) > screen.query_one(HeldOut).size.width]
        assert long, "the sample vault holds out a title wider than the panel"
        rows = held_rows(screen)
        for title in long:
            cut = next(row for row in rows if row.endswith("…"))
            assert title.startswith(cut.removesuffix("…"))
        said = " ".join(" ".join(rows).split())
        for x in excluded:
            assert " ".join(x.reason.split()) in said
        # Narrower, the panel spans the screen: the title is cut again to its new width.
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: all(title in held_rows(screen) for title in long))


async def test_a_new_message_holding_out_as_much_shows_its_own_list(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        painted = []
        for message in ("mangoes", "repository"):
            await ask(pilot, screen, message)
            painted.append(held_rows(screen))
        # Each holds out one memory, its reason on two rows: the list keeps its height.
        assert len(painted[0]) == len(painted[1])
        assert painted[0][0] == "Gone off mangoes"
        assert painted[1][0].startswith("The UFO core repository")
        assert "now:" in " ".join(painted[1])


async def test_preview_then_export_writes_the_same_text(
    app: MemoryApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ExportScreen))
        dialog = app.screen
        dialog.query_one(Select).value = "cursor-rules"
        await pilot.pause()
        assert dialog.query_one(Input).value == ".cursor/rules/memoryctl.mdc"
        dialog.query_one(Input).value = "bundle.md"
        dialog.query_one(Select).value = "markdown"
        await pilot.pause()
        dialog.query_one(Input).focus()
        await pilot.press("enter")
        await settled(pilot)
        assert (out / "bundle.md").read_text() == screen.text
        assert any(t.startswith("Wrote") for t in toasts(app))


@pytest.mark.parametrize("write_key", ["enter", "ctrl+s"])
async def test_export_dialog_writes_with_the_key_its_border_names_as_soon_as_it_opens(
    app: MemoryApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_key: str
) -> None:
    """The border says "ctrl+s or enter writes": the file's box has the focus when the
    dialog opens, so enter writes rather than opening the list of formats."""
    monkeypatch.chdir(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ExportScreen))
        await pilot.pause()
        assert "ctrl+s or enter writes" in str(app.screen.query_one("Vertical").border_subtitle)
        await pilot.press(write_key)
        await settled(pilot)
        assert app.screen is screen
        assert (tmp_path / "memory.md").read_text() == screen.text


@pytest.mark.parametrize(
    "fmt", ["markdown", "json", "agents-md", "claude-md", "gemini-md", "cursor-rules"]
)
async def test_make_demo_exports_every_format_to_the_file_the_dialog_suggests(
    app: MemoryApp, vault: Vault, vault_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """`make demo` runs the TUI inside the sample vault, so that exports land there: the
    file the dialog suggests must be one the vault does not read as a memory."""
    monkeypatch.chdir(vault_path)
    count = vault.index.count()
    async with app.run_test(size=SIZE) as pilot:
        await open_preview(pilot)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ExportScreen))
        dialog = app.screen
        dialog.query_one(Select).value = fmt
        await pilot.pause()
        out = dialog.query_one(Input).value
        dialog.query_one(Input).focus()
        await pilot.press("enter")
        await settled(pilot)
        assert (vault_path / out).is_file(), toasts(app)
        assert any(t.startswith("Wrote") for t in toasts(app)), toasts(app)
    again = Vault(vault_path)  # reads the vault afresh: the export is no memory
    try:
        assert again.index.count() == count
    finally:
        again.close()


async def test_preview_says_what_each_tool_loads_here_and_where_codex_cuts(
    app: MemoryApp, vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    # The owner's own rules fill AGENTS.md almost to Codex's 32 KiB: it reads the first
    # part of memoryctl's block and never the rest.
    (project / "AGENTS.md").write_text("# Rules\n" + ("r" * 99 + "\n") * 322)
    (project / "CLAUDE.md").write_text("@AGENTS.md\n")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        await until(pilot, lambda: bool(screen.targets))
        shown = str(screen.query_one("#preview-targets", Static).content)
    from memoryctl.export import tool_loads

    codex = next(t for t in tool_loads(screen.bundle, project) if t.fmt == "agents-md")
    assert codex.is_cut and codex.load.cut_lines
    kept, total = codex.load.kept_lines, codex.load.total_lines
    assert f"AGENTS.md  Codex\n  loads {kept:,} of the file's {total:,} lines; cut at" in shown
    assert f"'{codex.load.cut_lines[0][:30]}…'" in shown
    assert "CLAUDE.md imports AGENTS.md" in shown
    assert "GEMINI.md  Gemini CLI\n  loads the whole file" in shown
    # The CLI says the same of the same file, and nothing was written.
    result = subprocess.run(
        [sys.executable, "-m", "memoryctl", "preview", "--vault", str(vault.root), "--targets"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert codex.message() in result.stderr
    assert sorted(p.name for p in project.iterdir()) == ["AGENTS.md", "CLAUDE.md"]


@pytest.mark.parametrize("theme", THEMES)
def test_preview_screen_snapshot(
    app: MemoryApp, theme: str, snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What each tool loads depends on the files of the folder memoryctl runs in.
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    (tmp_path / "project" / "AGENTS.md").write_text("# Rules\n" + ("r" * 99 + "\n") * 322)

    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        screen = await open_preview(pilot)
        await until(pilot, lambda: bool(screen.targets))
        await settled(pilot)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_a_profile_added_to_the_settings_can_be_picked_without_a_restart(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        picker = screen.query_one("#preview-profile", Select)
        assert "travel" not in [value for _, value in picker._options]
        config = vault.root / "memoryctl.toml"
        config.write_text(config.read_text() + '\n[profiles.travel]\nnamespaces = ["personal"]\n')
        await until(pilot, lambda: "travel" in [value for _, value in picker._options])
        picker.value = "travel"
        await until(
            pilot, lambda: screen.bundle is not None and screen.bundle.profile.name == "travel"
        )
        await settled(pilot)
        assert "travel gets" in str(screen.query_one("#preview-text").border_title)


async def test_escape_leaves_the_message_box_so_number_keys_switch_screens(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        box = screen.query_one("#preview-message", Input)
        await pilot.press("ctrl+l")
        await pilot.press(*"peanut 1")
        assert box.value == "peanut 1"  # typing, the number is text
        await pilot.press("escape")
        assert app.focused is not box
        await pilot.press("1")
        await until(pilot, lambda: app.screen is not screen)
        assert box.value == "peanut 1"


@pytest.mark.parametrize("size", [(100, 32), (80, 24)])
async def test_typing_on_the_preview_goes_into_the_message_box(
    app: MemoryApp, size: tuple[int, int]
) -> None:
    async with app.run_test(size=size) as pilot:
        screen = await open_preview(pilot)
        box = screen.query_one("#preview-message", Input)
        assert app.focused is not box  # the bundle has the focus on arrival
        await pilot.press(*"peanuts?")
        assert app.focused is box and box.value == "peanuts?"
        await until(
            pilot, lambda: screen.bundle is not None and screen.bundle.message == "peanuts?"
        )
        await pilot.press("escape")
        await pilot.press("s")  # a letter goes on with the message
        assert box.value == "peanuts?s"
        await pilot.press("escape", "2")  # a digit still switches screens
        await until(pilot, lambda: app.screen is not screen)
        assert box.value == "peanuts?s"


async def test_esc_off_the_message_box_says_why_and_the_help_lists_it_off(
    app: MemoryApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await open_preview(pilot)
        why = "You are not typing a message: a letter or ctrl+l starts one."
        assert await said(pilot, "escape") == [why]
        _, off = await help_rows_now(pilot)
        assert off == [("esc", "Done typing", why)]
        await pilot.press("m")
        rows, off = await help_rows_now(pilot)
        assert not off
        leave = "Leave the message box, so the number keys switch screens again"
        assert ("esc", "Done typing", leave) in rows


def built_ahead(app: MemoryApp) -> PreviewScreen | None:
    """The Preview screen the app built while the person was elsewhere, if it has."""
    try:
        [screen] = app.get_screen_stack("preview")
    except KeyError:
        return None
    assert isinstance(screen, PreviewScreen)
    return screen


def build_nothing_ahead(monkeypatch: pytest.MonkeyPatch, idle: float = 3600.0) -> None:
    """The app builds no screen ahead (or, with `idle` 0, may at once)."""
    import memoryctl.tui.app as app_module

    monkeypatch.setattr(app_module, "IDLE_BEFORE_AHEAD", idle)


def typed_at_once(app: MemoryApp, keys: str | tuple[str, ...]) -> None:
    """Keys as a terminal sends them in one read: no pause between them."""
    from textual import events

    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_preview_is_built_ahead_while_the_list_is_read_and_shown_on_its_first_visit(
    app: MemoryApp, vault: Vault
) -> None:
    """The app builds Preview off-screen through Textual's private `App._init_mode` and
    `Screen._refresh_layout` (docs/ARCHITECTURE.md, "The TUI's first visits"): this fails
    when Textual stops starting, laying out or showing such a screen."""
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await until(pilot, lambda: (s := built_ahead(app)) is not None and bool(s.targets))
        screen = built_ahead(app)
        assert screen is not None and app.current_mode == "vault"
        area = screen.query_one("#preview-text")
        assert area.size.width > 0  # laid out before it is shown
        await pilot.press("5")
        await pilot.pause()
        assert app.screen is screen and screen.text == cli_preview(vault)
        assert app.focused is area


async def test_a_preview_built_ahead_follows_the_files_changed_before_its_first_visit(
    app: MemoryApp, vault: Vault
) -> None:
    from memoryctl.actions import set_pinned

    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await until(pilot, lambda: (s := built_ahead(app)) is not None and s.bundle is not None)
        screen = built_ahead(app)
        assert screen is not None and "I've gone off mangoes" not in screen.text
        memory = set_pinned(vault, "wbhh9dh72s", True)
        app._files_written([memory.path])
        await until(pilot, lambda: "I've gone off mangoes" in screen.text)
        await pilot.press("5")
        await settled(pilot)
        assert app.screen is screen and screen.text == cli_preview(vault)


async def test_nothing_is_built_ahead_while_the_person_types(app: MemoryApp) -> None:
    from memoryctl.tui.app import IDLE_BEFORE_AHEAD
    from memoryctl.tui.widgets import MemoryList

    async with app.run_test(size=SIZE) as pilot:
        memory_list = app.screen.query_one(MemoryList)
        await until(pilot, lambda: memory_list.pages is not None)  # the app starts its clock
        await pilot.press("slash")
        for letter in "mangoes are not" * 2:  # a key every tenth of a second, for three
            await pilot.press(letter)
            await pilot.pause(0.1)
            assert built_ahead(app) is None
        await until(pilot, lambda: built_ahead(app) is not None, timeout=IDLE_BEFORE_AHEAD + 5)


@pytest.mark.parametrize("ahead", [False, True], ids=["built-on-the-visit", "built-ahead"])
async def test_every_letter_typed_at_once_after_the_preview_key_arrives_in_the_message_box(
    app: MemoryApp, ahead: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person presses 5 and types straight on, while the screen is still being shown
    and its bundle read: the keys come as a terminal sends them, a few milliseconds apart."""

    if not ahead:
        build_nothing_ahead(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        if ahead:
            await until(pilot, lambda: (s := built_ahead(app)) is not None and bool(s.targets))
        else:
            assert built_ahead(app) is None
        for key in "5mangoes":
            typed_at_once(app, key)
            await asyncio.sleep(0.01)
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        box = screen.query_one("#preview-message", Input)
        await until(pilot, lambda: len(box.value) >= len("mangoes"))
        assert box.value == "mangoes"
        await until(pilot, lambda: screen.bundle is not None and screen.bundle.message == "mangoes")
        assert app.focused is box and box.value == "mangoes"


async def typed_into_the_box(pilot: Pilot, word: str) -> str:
    """What Preview's message box holds once as many letters as `word` has reached it."""
    await until(pilot, lambda: isinstance(pilot.app.screen, PreviewScreen))
    screen = pilot.app.screen
    assert isinstance(screen, PreviewScreen)
    box = screen.query_one("#preview-message", Input)
    await until(pilot, lambda: len(box.value) >= len(word))
    await settled(pilot)
    return box.value


@pytest.mark.parametrize("ahead", [False, True], ids=["built-on-the-visit", "built-ahead"])
async def test_letters_typed_as_the_preview_key_switches_screens_keep_their_order(
    app: MemoryApp, ahead: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine the screen in front is slow to pass a key on: the letter typed
    with 5 must not come after those typed once Preview is shown ("amngoes")."""
    from textual import events

    from memoryctl.tui.screens.vault import VaultScreen

    async def busy(screen: VaultScreen, key: events.Key) -> None:
        await asyncio.sleep(0.05)

    monkeypatch.setattr(VaultScreen, "on_key", busy, raising=False)
    if not ahead:
        build_nothing_ahead(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        if ahead:
            await until(pilot, lambda: (s := built_ahead(app)) is not None and bool(s.targets))

        def typed_on(mode: str) -> None:  # the rest of the word, as the screen switches
            typed_at_once(app, "angoes")

        app.mode_change_signal.subscribe(app, typed_on, immediate=True)
        typed_at_once(app, "5m")
        assert await typed_into_the_box(pilot, "mangoes") == "mangoes"


async def test_a_letter_the_bundle_holds_up_still_comes_before_the_letters_after_it(
    app: MemoryApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundle has the focus and is busy a moment as `a` passes it; the letters typed
    once the message box has the focus must not overtake it ("mngoesa")."""
    from textual import events
    from textual.message import Message
    from textual.widgets import TextArea

    passed_on = TextArea._on_key

    async def busy(area: TextArea, key: events.Key) -> None:
        if key.key == "a":
            await asyncio.sleep(0.05)
        await passed_on(area, key)

    monkeypatch.setattr(TextArea, "_on_key", busy)
    box: list[Input] = []

    def type_on_when_the_box_has_the_focus(message: Message) -> None:
        if isinstance(message, events.Focus) and box and app.focused is box[0]:
            box.clear()
            typed_at_once(app, "ngoes")

    async with app.run_test(size=SIZE, message_hook=type_on_when_the_box_has_the_focus) as pilot:
        screen = await open_preview(pilot)
        assert app.focused is screen.query_one("#preview-text")
        box.append(screen.query_one("#preview-message", Input))
        typed_at_once(app, "ma")
        assert await typed_into_the_box(pilot, "mangoes") == "mangoes"


async def test_letters_typed_while_preview_is_slow_to_open_all_reach_the_box(
    app: MemoryApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first visit to Preview takes a moment to mount: no letter typed meanwhile is
    lost or typed out of order, as the app reads no key until the screen is mounted."""

    build_nothing_ahead(monkeypatch)
    mount = PreviewScreen.on_mount

    async def slow(screen: PreviewScreen) -> None:
        await asyncio.sleep(0.1)
        mount(screen)

    monkeypatch.setattr(PreviewScreen, "on_mount", slow)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        typed_at_once(app, "5mangoes")
        assert await typed_into_the_box(pilot, "mangoes") == "mangoes"


async def test_quitting_with_the_preview_key_in_the_same_breath_closes_cleanly(
    app: MemoryApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+q and 5 read together: Preview starts as the app closes, with no widgets."""
    build_nothing_ahead(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        typed_at_once(app, ("ctrl+q", "5"))
    assert app.return_code == 0


async def test_nothing_is_built_ahead_once_the_person_has_quit(
    app: MemoryApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_nothing_ahead(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert built_ahead(app) is None
        build_nothing_ahead(monkeypatch, idle=0.0)  # idle long enough
        app.exit()
        app.build_ahead()  # the idle timer fires as the app starts to close
        assert built_ahead(app) is None
    assert app.return_code == 0


@pytest.mark.parametrize("size", [(100, 32), (80, 24)])
async def test_the_side_panel_keeps_its_lines_and_the_meter_its_bar_when_it_scrolls(
    app: MemoryApp, size: tuple[int, int]
) -> None:
    async with app.run_test(size=size) as pilot:
        screen = await open_preview(pilot)
        await ask(pilot, screen, "bike release mangoes berlin lisbon porto neovim editor")
        await until(pilot, lambda: bool(screen.targets))
        await settled(pilot)
        side = screen.query_one("#preview-side")
        assert side.max_scroll_y > 0  # it scrolls
        sections = screen.query_one("#preview-sections", Static)
        lines = str(sections.content).splitlines()
        assert sections.size.height == len(lines)  # no line wraps
        assert [sections.render_line(y).text.rstrip() for y in range(len(lines))] == lines
        meter = screen.query_one(TokenMeter).render_line(0).text
        assert "█" in meter or "░" * 8 in meter
        assert f"{screen.bundle.used:,} / {screen.bundle.budget:,} tokens" in meter


@pytest.mark.parametrize("size", [(100, 32), (80, 24)], ids=["100x32", "80x24"])
@pytest.mark.parametrize("theme", THEMES)
def test_preview_snapshot_with_a_side_panel_that_scrolls(
    app: MemoryApp,
    theme: str,
    size: tuple[int, int],
    snap_compare,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")

    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        screen = await open_preview(pilot)
        await ask(pilot, screen, "bike release mangoes berlin lisbon porto neovim editor")
        await until(pilot, lambda: bool(screen.targets))
        screen.query_one("#preview-message", Input).cursor_blink = False
        await settled(pilot)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
