"""A filter most memories match (one or two letters) shows its newest page first and
orders the rest after: the list the person ends up with is the one a slow, complete
query gives, and the rows beyond the first page are never wrong, only pending."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.message import Message
from tui_support import SIZE, settled, until

from memoryctl.storage.index_lists import DENSE_SHARE
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import make_app
from memoryctl.tui.list_filter import ListFilter, narrowed
from memoryctl.tui.screens.vault import VaultScreen
from memoryctl.tui.widgets import MemoryList
from memoryctl.tui.widgets.memory_list import PAGE_SIZE, RowPages

WORDS = ["alpha", "almond", "amber", "basil", "cedar", "delta", "ember", "fjord"]
COUNT = 3 * PAGE_SIZE


def note(number: int, rng: random.Random) -> str:
    day = rng.randrange(1, 28)
    hour = rng.randrange(0, 24)
    # Every note has a word in "a", most have "al"; "fjord" is rare.
    words = ["amber"] + rng.sample(WORDS[:7], 3) + (["fjord"] if number % 25 == 0 else [])
    return (
        f"---\nid: dense{number:05d}\ntitle: Note {number} {' '.join(words[:2])}\nkind: fact\n"
        f"created: 2026-03-{day:02d}T{hour:02d}:00:{number % 60:02d}Z\n---\n\n"
        f"{' '.join(words)}.\n"
    )


@pytest.fixture
def dense_vault(tmp_path: Path) -> Iterator[Vault]:
    rng = random.Random(11)
    folder = tmp_path / "vault" / "memories"
    folder.mkdir(parents=True)
    for number in range(COUNT):
        (folder / f"note-{number:05d}.md").write_text(note(number, rng), encoding="utf-8")
    vault = Vault(tmp_path / "vault")
    yield vault
    vault.close()


@pytest.mark.parametrize("text", ["a", "al", "am", "f", "fjord", "zz", "amber al"])
def test_the_quick_reads_agree_with_the_complete_one(dense_vault: Vault, text: str) -> None:
    index = dense_vault.index
    matches = index.text_matches(text)
    assert matches is not None
    complete = narrowed(index.rowids_in_order(), matches)
    assert index.text_count(text) == len(matches)
    assert index.newest_text_matches(text, PAGE_SIZE) == complete[:PAGE_SIZE]
    steps = list(index.text_matches_in_steps(text, step=37))
    assert len(steps) > 1
    assert set().union(*steps) == matches


def test_a_text_with_no_words_counts_nothing(dense_vault: Vault) -> None:
    index = dense_vault.index
    assert index.text_count("  ") is None
    assert index.newest_text_matches("", PAGE_SIZE) == []
    assert list(index.text_matches_in_steps("")) == []


def test_rows_past_the_known_ones_wait_for_the_rest(dense_vault: Vault) -> None:
    index = dense_vault.index
    everything = index.rowids_in_order()
    pages = RowPages(index, ListFilter("a"), everything[:PAGE_SIZE], count=COUNT)
    assert (pages.known, pages.count) == (PAGE_SIZE, COUNT)
    assert pages.missing(0, COUNT - 1) == [0]  # only what can be read now
    pages.store(0, pages.fetch(0))
    pages.complete(everything)
    assert pages.known == pages.count == COUNT
    assert pages.row(0) is not None  # the first page still holds
    assert pages.missing(0, COUNT - 1) == [1, 2]


async def test_one_letter_lists_the_newest_page_then_every_match(dense_vault: Vault) -> None:
    index = dense_vault.index
    expected = narrowed(index.rowids_in_order(), index.text_matches("al"))
    assert len(expected) >= DENSE_SHARE * COUNT  # the quick path is the one taken
    app = make_app(dense_vault, watch=False)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        screen = app.screen
        memory_list = screen.query_one(MemoryList)
        await settled(pilot)
        await pilot.press("slash", "a", "l")
        await until(
            pilot,
            lambda: (
                memory_list.pages is not None
                and memory_list.pages.text == "al"
                and memory_list.pages.known == memory_list.pages.count
            ),
        )
        await settled(pilot)
        completed = [m.pages.text for m in seen if isinstance(m, VaultScreen.Completed)]
        assert completed[-1:] == ["al"]  # its newest page came first, the rest after
        assert memory_list.border_title == f"{len(expected):,} of {COUNT:,} memories"
        assert list(memory_list.pages.rowids) == expected
        await pilot.press("enter", "end")  # to the list, and its last (oldest) match
        await settled(pilot)
        assert memory_list.cursor == len(expected) - 1
        last = memory_list.current
        assert last is not None and index.by_rowids([expected[-1]])[0].id == last.id
