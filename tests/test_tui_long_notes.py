"""A long note (a pasted log) is shown by its head, so the view never freezes rendering it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import Markdown, Static
from tui_support import SIZE, settled, until, vault, vault_path

from memoryctl.storage.vault import Vault
from memoryctl.tui.app import make_app
from memoryctl.tui.screens.vault import VaultScreen
from memoryctl.tui.widgets import MemoryList, MemoryView
from memoryctl.tui.widgets.memory_view import MOST_RENDERED, rendered_head

__all__ = ["vault", "vault_path"]


@given(st.text(alphabet="ab \n", max_size=300), st.integers(min_value=8, max_value=120))
def test_the_head_is_a_prefix_no_longer_than_the_limit(body: str, most: int) -> None:
    head = rendered_head(body, most)
    assert body.startswith(head)
    assert len(head) <= most
    assert head == body or len(head) >= most * 3 // 4


def test_the_head_ends_at_a_paragraph_when_one_ends_near_the_limit() -> None:
    body = "a" * 80 + "\n\n" + "b" * 100
    assert rendered_head(body, 100) == "a" * 80
    assert rendered_head("a" * 30 + "\n\n" + "b" * 100, 100) == ("a" * 30 + "\n\n" + "b" * 68)
    assert rendered_head("short", 100) == "short"


async def test_a_long_note_shows_its_head_and_says_so(vault_path: Path) -> None:
    lines = "\n".join(f"line {n}: the staging deploy retried" for n in range(4000))
    (vault_path / "memories" / "deploy-log.md").write_text(
        "---\nid: longlog001\ntitle: A pasted deploy log\ncreated: 2027-01-01T00:00:00Z\n---\n\n"
        + lines,
        encoding="utf-8",
    )
    vault = Vault(vault_path)
    try:
        app = make_app(vault, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            screen = app.screen
            assert isinstance(screen, VaultScreen)
            current = screen.query_one(MemoryList).current
            assert current is not None and current.id == "longlog001"  # the newest
            await pilot.press("enter")
            view = screen.query_one(MemoryView)
            await until(pilot, lambda: view.shown is not None)
            await settled(pilot)
            assert view.has_class("-cut")
            notice = str(view.query_one("#memory-cut", Static).content)
            assert f"This note is {len(lines):,} characters" in notice
            assert len(view.query_one("#memory-body", Markdown).source) <= MOST_RENDERED
    finally:
        vault.close()
