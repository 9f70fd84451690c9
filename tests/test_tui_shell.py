"""The TUI shell as a person uses it: list, filter, open, corrections, broken files."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input, Markdown, Static
from tui_support import THEMES, help_text, settled, vault_path

from memoryctl.actions import init_vault
from memoryctl.memory import Memory
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import HelpScreen, MemoryApp, make_app
from memoryctl.tui.list_filter import ListFilter
from memoryctl.tui.screens.vault import START_MESSAGE, VaultScreen
from memoryctl.tui.widgets import MemoryList, MemoryView, RowPages
from memoryctl.tui.widgets.memory_list import PAGE_SIZE

SAMPLE_VAULT = Path(__file__).resolve().parents[1] / "sample_vault"
SIZE = (100, 32)
# The sample vault's one frontmatter-less note takes its created date from the file's
# mtime, so every copied file gets this one (2026-01-01T00:00:00Z).
# The sample vault with fixed mtimes comes from tui_support, shared with the other screens.
__all__ = ["vault_path"]

FIXED_MTIME = 1_767_225_600

BROKEN_NOTE = """\
---
id: brokenyaml
title: [this list never closes
---

Call the plumber about the boiler.
"""

NEW_NOTE = """\
---
id: extern0001
title: Written in another editor
kind: fact
created: 2026-11-30T09:00:00Z
---

This memory was saved by an editor while memoryctl was open.
"""


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("MEMORYCTL_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def open_vault() -> Iterator[Callable[[Path], Vault]]:
    opened: list[Vault] = []

    def open_(path: Path) -> Vault:
        opened.append(Vault(path))
        return opened[-1]

    yield open_
    for vault in opened:
        vault.close()


@pytest.fixture
def vault(vault_path: Path, open_vault: Callable[[Path], Vault]) -> Vault:
    return open_vault(vault_path)


# --- helpers -------------------------------------------------------------------------------


async def until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the app"
        await pilot.pause(0.05)


async def workers_done(pilot: Pilot) -> None:
    """Every worker has finished, except the file watcher, which runs until the app ends."""
    await until(pilot, lambda: all(w.is_finished for w in pilot.app.workers if w.group != "watch"))
    await pilot.pause()


def vault_screen(pilot: Pilot) -> VaultScreen:
    screen = pilot.app.screen
    assert isinstance(screen, VaultScreen)
    return screen


async def ready(pilot: Pilot) -> VaultScreen:
    """Wait until the index is open and the list shows what the filter asks for."""
    screen = vault_screen(pilot)
    memory_list = screen.query_one(MemoryList)

    def settled() -> bool:
        pages = memory_list.pages
        return (
            not memory_list.loading
            and pages is not None
            and pages.text == screen.filter_text
            and not memory_list.border_subtitle
        )

    await until(pilot, settled)
    await pilot.pause()
    return screen


def rows(screen: VaultScreen) -> list[str]:
    """The list's lines as the person sees them."""
    memory_list = screen.query_one(MemoryList)
    height = memory_list.scrollable_content_region.height
    lines = [memory_list.render_line(y).text.rstrip() for y in range(height)]
    return [line for line in lines if line]


def row_for(screen: VaultScreen, title: str) -> str:
    matches = [line for line in rows(screen) if title in line]
    assert matches, f"no row for {title!r} in {rows(screen)}"
    return matches[0]


async def filter_to(pilot: Pilot, text: str) -> VaultScreen:
    await pilot.press("slash", *text)
    return await ready(pilot)


async def open_first(pilot: Pilot, screen: VaultScreen) -> MemoryView:
    await pilot.press("enter")
    await until(pilot, lambda: screen.opened is not None)
    await workers_done(pilot)
    return screen.query_one(MemoryView)


def text_of(view: MemoryView, selector: str) -> str:
    return str(view.query_one(selector, Static).content)


# --- stories ---------------------------------------------------------------------------------


async def test_list_shows_the_vaults_memories_newest_first_with_marks(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert app.title == "memoryctl"
        assert app.sub_title == str(vault.root)
        memory_list = screen.query_one(MemoryList)
        assert memory_list.border_title == f"{vault.index.count()} memories"
        assert row_for(screen, "Staging publish failed").startswith(
            "     2026-11-18 event      Staging"
        )
        assert row_for(screen, "Current project").startswith(" *   2026-10-06 fact")
        assert row_for(screen, "Flaky test_stream").startswith("  ~  2026-09-02 event")
        assert memory_list.pages is not None
        assert memory_list.pages.count == vault.index.count()


async def test_typing_in_the_filter_narrows_the_list_and_resets_the_cursor(
    vault: Vault,
) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("down", "down", "down")
        assert screen.query_one(MemoryList).cursor == 3
        screen = await filter_to(pilot, "mango")
        titles = rows(screen)
        assert len(titles) == 3
        assert any("Likes mangoes" in row for row in titles)
        assert any("Gone off mangoes" in row for row in titles)
        assert screen.query_one(MemoryList).border_title == "3 of 45 memories"
        assert screen.query_one(MemoryList).cursor == 0
        await pilot.press("escape")
        screen = await ready(pilot)
        assert screen.query_one(Input).value == ""
        assert screen.query_one(MemoryList).border_title == "45 memories"


async def test_typing_a_chinese_word_in_the_filter_finds_the_memory_it_is_inside(
    vault_path: Path, open_vault: Callable[[Path], Vault]
) -> None:
    (vault_path / "memories" / "coffee.md").write_text(
        "---\nid: coffee0001\ntitle: 早上的习惯\ncreated: 2026-11-30T09:00:00Z\n---\n\n"
        "我每天早上喝咖啡，不加糖。\n",
        encoding="utf-8",
    )
    app = make_app(open_vault(vault_path), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await filter_to(pilot, "咖")
        assert [row for row in rows(screen) if "早上的习惯" in row]
        await pilot.press("啡")
        screen = await ready(pilot)
        assert screen.query_one(MemoryList).border_title == "1 of 46 memories"


async def test_a_thai_word_in_the_filter_finds_the_memory_it_is_inside(
    vault_path: Path, open_vault: Callable[[Path], Vault]
) -> None:
    # "I really like eating shrimp fried rice": ข้าวผัด (fried rice) is written inside it.
    (vault_path / "memories" / "rice.md").write_text(
        "---\nid: rice000001\ntitle: อาหารที่ชอบ\ncreated: 2026-11-30T09:00:00Z\n---\n\n"
        "ฉันชอบกินข้าวผัดกุ้งมาก\n",
        encoding="utf-8",
    )
    app = make_app(open_vault(vault_path), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("slash")
        # Pasted: the test's key presses cannot carry a tone mark.
        app.screen.query_one(Input).post_message(events.Paste("ข้าว"))
        screen = await ready(pilot)
        assert [row for row in rows(screen) if "อาหารที่ชอบ" in row]
        await pilot.press("ผ")  # typing on: the next letter, before its vowel sign
        screen = await ready(pilot)
        assert screen.query_one(Input).value == "ข้าวผ"
        assert screen.query_one(MemoryList).border_title == "1 of 46 memories"


async def test_enter_opens_the_memory_with_its_title_fields_and_body(vault: Vault) -> None:
    opened: list[Message] = []
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE, message_hook=opened.append) as pilot:
        screen = await filter_to(pilot, "likes mangoes")
        await pilot.press("enter")  # from the filter to the list
        view = await open_first(pilot, screen)
        [message] = [m for m in opened if isinstance(m, MemoryList.Opened)][:1]
        assert isinstance(message, MemoryList.Opened)
        assert message.memory.title == "Likes mangoes"
        assert text_of(view, "#memory-title") == "Likes mangoes"
        fields = " ".join(str(s.content) for s in view.query(".field-value").results(Static))
        assert "preference" in fields and "personal" in fields and "food" in fields
        body = view.query_one("#memory-body", Markdown).source
        assert "ripe Palmer mangoes in smoothies" in body


async def test_memory_overtaken_by_a_correction_shows_its_now_line(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await filter_to(pilot, "flaky")
        await pilot.press("enter")
        view = await open_first(pilot, screen)
        assert screen.opened is not None and screen.opened.id == "h3jcnchn9x"
        now = [str(s.content) for s in view.query(".now-line").results(Static)]
        assert len(now) == 1
        assert now[0].startswith("now: The UFO core repository is ufo-ai/ufo")
        assert "(q0csfnqc07)" in now[0]
        assert view.has_class("-overtaken")


async def test_broken_file_is_marked_and_opens_with_its_error_and_raw_text(
    vault_path: Path, open_vault: Callable[[Path], Vault]
) -> None:
    (vault_path / "memories" / "boiler.md").write_text(BROKEN_NOTE, encoding="utf-8")
    app = make_app(open_vault(vault_path), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await filter_to(pilot, "boiler")
        assert rows(screen)[0].startswith("!")
        await pilot.press("enter")
        view = await open_first(pilot, screen)
        assert view.has_class("-broken")
        error = text_of(view, "#memory-error")
        assert error.startswith("Cannot read this file: malformed YAML frontmatter")
        assert text_of(view, "#memory-raw") == BROKEN_NOTE


async def test_empty_vault_shows_how_to_add_the_first_memory(
    tmp_path: Path, open_vault: Callable[[Path], Vault]
) -> None:
    path = tmp_path / "empty"
    init_vault(path)
    app = make_app(open_vault(path), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(MemoryView).message == START_MESSAGE
        assert screen.query_one(MemoryList).border_title == "0 memories"


async def test_memories_written_in_one_second_list_last_written_first_in_the_tui_and_cli(
    tmp_path: Path, open_vault: Callable[[Path], Vault], cli
) -> None:
    """An agent's burst of `remember` (or a script's loop of `memoryctl add`) writes
    several memories within one second: the list shows them in the order they were
    written, the last first, as every other second's memories are, not by their ids."""
    import datetime as dt

    from memoryctl.actions import NewMemory, add_memory

    path = tmp_path / "burst"
    init_vault(path)
    vault = open_vault(path)
    one_second = dt.datetime(2026, 12, 2, 9, 30, 5, tzinfo=dt.UTC)
    written = [
        add_memory(vault, NewMemory(body=f"Burst memory number {n}"), now=one_second).id
        for n in range(8)
    ]
    newest_first = written[::-1]
    assert [m.id for m in vault.index.list()] == newest_first
    listed = cli("--vault", str(path), "list", "--json")
    assert listed.code == 0, listed.err
    assert [m["id"] for m in json.loads(listed.out)] == newest_first
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        shown = [line for line in rows(screen) if "Burst memory number" in line]
        assert [int(line.rsplit(" ", 1)[1]) for line in shown] == list(range(7, -1, -1))


async def test_a_folder_without_git_works_and_warns(
    tmp_path: Path, open_vault: Callable[[Path], Vault]
) -> None:
    path = tmp_path / "plain"
    shutil.copytree(SAMPLE_VAULT / "memories" / "personal", path / "memories")
    app = make_app(open_vault(path), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert "Likes mangoes" in " ".join(rows(screen))
        warnings = [n for n in app._notifications if n.severity == "warning"]
        assert warnings and "not a git repository" in warnings[0].message


async def test_clicking_a_row_opens_that_memory(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        third = rows(screen)[2]
        # The list's border takes the first line, so row n is at y = n + 1.
        await pilot.click(MemoryList, offset=(10, 3))
        await until(pilot, lambda: screen.opened is not None)
        await workers_done(pilot)
        assert screen.query_one(MemoryList).cursor == 2
        assert screen.opened is not None and screen.opened.title[:20] in third


@pytest.mark.parametrize("key", ["f1", "question_mark"])
async def test_help_lists_every_key_with_what_it_does(vault: Vault, key: str) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press(key)
        assert isinstance(app.screen, HelpScreen)
        shown = help_text(app.screen)
        for binding in app.screen.help_bindings:
            assert binding.tooltip in shown
        assert "Filter the memories as you type" in shown
        assert "Open the memory under the cursor" in shown
        assert "f1 / ?" in shown
        await pilot.press("escape")
        assert isinstance(app.screen, VaultScreen)


async def test_help_at_80x24_scrolls_to_the_last_key_and_wraps_inside_its_column(
    vault: Vault,
) -> None:
    app = make_app(vault, watch=False, start="review")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.pause()
        rows = list(app.screen.query(".help-row"))
        last = rows[-1]
        # Both keys of a binding, as the footer writes keys, not the binding's raw list.
        assert "[ / ^pgup" in help_text(app.screen)
        assert "left_square_bracket" not in help_text(app.screen)
        assert not app.screen.region.contains_region(last.region)  # below the fold
        await pilot.press("end")
        await pilot.pause()
        assert app.screen.query_one("VerticalScroll").region.contains_region(last.region)
        explanations = [row.query(Static).last() for row in rows]
        assert len({what.region.x for what in explanations}) == 1  # one column
        assert max(what.region.height for what in explanations) > 1  # a long one wraps in it


async def test_esc_clear_filter_is_offered_only_when_there_is_a_filter_to_clear(
    vault: Vault,
) -> None:
    from tui_support import footer_keys

    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert "escape" not in footer_keys(screen)  # the list, and nothing typed
        await pilot.press("/", *"mango")
        assert footer_keys(screen)["escape"] == "Clear filter"
        await pilot.press("enter")  # to the list, the filter kept
        screen = await ready(pilot)
        assert footer_keys(screen)["escape"] == "Clear filter"
        await pilot.press("escape")
        screen = await ready(pilot)
        assert screen.filter_text == ""
        assert "escape" not in footer_keys(screen)


async def test_question_mark_and_slash_are_typed_into_the_filter(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("slash", "a", "slash", "question_mark")
        assert isinstance(app.screen, VaultScreen)
        assert app.screen.query_one(Input).value == "a/?"


async def test_ctrl_q_quits(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running
    assert app.return_code == 0


# How soon a saved file shows is a figure for a quiet machine, not for a test: these wait
# as long as a loaded one may need.
SEEN_BY_THE_WATCHER = 30.0


async def test_files_saved_by_another_editor_appear_in_the_list_and_the_open_memory(
    vault: Vault,
) -> None:
    app = make_app(vault, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        note = vault.root / "memories" / "external.md"
        note.write_text(NEW_NOTE, encoding="utf-8")
        await until(
            pilot,
            lambda: "Written in another editor" in rows(screen)[0],
            timeout=SEEN_BY_THE_WATCHER,
        )
        assert screen.query_one(MemoryList).border_title == "46 memories"

        view = await open_first(pilot, screen)
        assert "saved by an editor" in view.query_one("#memory-body", Markdown).source
        note.write_text(NEW_NOTE.replace("saved by an editor", "changed again"), "utf-8")
        await until(
            pilot,
            lambda: "changed again" in view.query_one("#memory-body", Markdown).source,
            timeout=SEEN_BY_THE_WATCHER,
        )


async def test_a_file_saved_just_before_the_watcher_starts_appears(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Saved after the open read the vault and before the watcher watches: no file event
    # will ever come for it.
    from memoryctl.storage import watch

    def saved_first(*args, **kwargs):
        (vault.root / "memories" / "external.md").write_text(NEW_NOTE, encoding="utf-8")
        return watching(*args, **kwargs)

    watching = watch.watch_vault
    monkeypatch.setattr(watch, "watch_vault", saved_first)
    app = make_app(vault, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(
            pilot,
            lambda: "Written in another editor" in rows(screen)[0],
            timeout=SEEN_BY_THE_WATCHER,
        )


# --- a big vault ------------------------------------------------------------------------------


class HundredThousandMemories:
    """An index stand-in with 100,000 memories that records what the list asks for."""

    count = 100_000

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []  # the first and last rowid of each page

    # Before `list`, which would otherwise shadow the builtin in these annotations.
    def corrections_reaching(self, mids: Iterable[str]) -> dict[str, list[str]]:
        return {}

    def get_many(self, mids: Iterable[str]) -> dict[str, Memory]:
        return {}

    def by_rowids(self, rowids: Sequence[int]) -> Sequence[Memory]:
        self.asked.append((rowids[0], rowids[-1]))
        return [
            Memory(id=f"m{n:09d}", path=f"m/{n}.md", title=f"Memory number {n}", created="2026")
            for n in rowids
        ]


class ListOnly(App[None]):
    def compose(self) -> ComposeResult:
        yield MemoryList()


async def test_list_of_100000_memories_reads_only_the_pages_it_shows() -> None:
    source = HundredThousandMemories()
    app = ListOnly()
    async with app.run_test(size=SIZE) as pilot:
        memory_list = app.query_one(MemoryList)
        pages = RowPages(source, ListFilter(), range(source.count))
        memory_list.show(pages, pages.fetch(0))
        memory_list.focus()
        await pilot.pause()
        await pilot.press("end")
        await until(pilot, lambda: not memory_list._fetching and len(source.asked) > 1)
        await pilot.pause()
        assert memory_list.virtual_size.height == 100_000
        assert memory_list.current is not None
        assert memory_list.current.title == "Memory number 99999"
        assert source.asked == [(0, PAGE_SIZE - 1), (100_000 - PAGE_SIZE, 99_999)]


# --- how it looks ----------------------------------------------------------------------------


@pytest.mark.parametrize("theme", THEMES)
def test_vault_screen_with_the_first_memory_open(vault: Vault, theme: str, snap_compare) -> None:
    async def open_the_first_memory(pilot: Pilot) -> None:
        pilot.app.theme = theme
        app = pilot.app
        assert isinstance(app, MemoryApp)
        app.sub_title = "~/sample_vault"  # the real path is a new temporary folder each run
        screen = await ready(pilot)
        screen.query_one(Input).cursor_blink = False
        await open_first(pilot, screen)
        app.clear_notifications()  # the first-build notice times out: not stable to compare

    app = make_app(vault, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_the_first_memory)


async def test_a_screen_made_on_its_first_visit_counts_as_styled_by_the_stylesheet(
    vault: Vault,
) -> None:
    """The app tells Textual that a numbered screen made on its first visit is styled by
    the stylesheet as it is, through Textual's private `_css_update_count` (see
    docs/ARCHITECTURE.md, "The TUI's first visits"). This fails when Textual renames the
    attribute or stops comparing it as a screen is shown: the first visit to a screen
    would then parse every stylesheet again and restyle every widget of the app."""
    import inspect

    from textual.app import App as TextualApp
    from textual.screen import Screen

    assert vars(Screen())["_css_update_count"] == -1  # Textual's own mark: never styled
    for shown in (TextualApp.switch_mode, TextualApp._init_mode):
        assert "screen._css_update_count != self._css_update_count" in inspect.getsource(shown)
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("5")
        await pilot.pause()
        assert app.current_mode == "preview"
        assert app.screen._css_update_count == app._css_update_count


async def test_clicking_a_key_in_the_footer_presses_it(vault: Vault) -> None:
    from memoryctl.tui.widgets.facet_bar import FacetBar
    from memoryctl.tui.widgets.footer import KeysFooter

    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        footer = screen.query_one(KeysFooter)
        # " ⏎ Open  / Filter  f Filters …": the f key starts at the 19th cell. (Once the
        # filters show, the footer offers their keys first.)
        await pilot.hover(footer, offset=(19, 0))
        await pilot.pause()
        assert footer.tooltip is not None and "status, kind" in str(footer.tooltip)
        await pilot.click(footer, offset=(19, 0))
        await pilot.pause()
        assert screen.query_one(FacetBar).has_class("-shown")


def test_a_footer_too_narrow_for_every_key_leaves_whole_keys_out_and_keeps_the_help() -> None:
    from memoryctl.tui.widgets.footer import fitting

    widths, kept = [10, 10, 10, 8, 9, 7], [False, False, False, False, True, False]
    assert fitting(widths, kept, 60) == [0, 1, 2, 3, 4, 5]  # room for all
    assert fitting(widths, kept, 40) == [0, 1, 2, 4]  # the fourth would pass the help
    assert fitting(widths, kept, 5) == [4]  # the help, however narrow


async def test_at_80_columns_the_footer_shows_whole_keys_and_f1_help(
    vault: Vault,
) -> None:
    from memoryctl.tui.widgets.footer import KeysFooter

    app = make_app(vault, watch=False, start="pins")
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        footer = app.screen.query_one(KeysFooter)
        line = footer.render_line(0).text
        assert len(line) == 80
        assert line.startswith(" ^↑ Move up  ^↓ Move down  u Unpin  a Add pin  o Open ")
        assert " f1 Help " in line
        # What does not fit is left out whole: no key's words stop part way.
        for _, _, item in footer._spans:
            assert f"{item.display} {item.description}" in line
        assert "6 Agents" not in line and "6 A" not in line


@pytest.mark.parametrize("theme", THEMES)
def test_help_of_the_review_screen_at_80x24(vault: Vault, theme: str, snap_compare) -> None:
    async def open_the_help(pilot: Pilot) -> None:
        pilot.app.theme = theme
        pilot.app.sub_title = "~/sample_vault"  # the real path is a new temporary folder
        await settled(pilot)  # the queue beneath has loaded
        await pilot.press("f1")
        await settled(pilot)
        pilot.app.clear_notifications()

    app = make_app(vault, watch=False, start="review")
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_the_help)
