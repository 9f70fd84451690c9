"""The TUI remembers the theme chosen last; a state file it cannot read is left alone."""

from __future__ import annotations

import json
from pathlib import Path

from textual.message import Message
from textual.notifications import Notify
from tui_support import SIZE, settled, until, vault, vault_path

from memoryctl.storage.vault import Vault
from memoryctl.tui.app import make_app
from memoryctl.tui.state import save_theme, saved_theme, state_path

__all__ = ["vault", "vault_path"]


def test_a_saved_theme_is_read_back_and_other_keys_stay(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tui.json"
    assert saved_theme(path) == (None, None)
    assert save_theme(path, "textual-light") is None
    assert saved_theme(path) == ("textual-light", None)
    path.write_text(json.dumps({"theme": "textual-light", "later": 1}), encoding="utf-8")
    assert save_theme(path, "nord") is None
    assert json.loads(path.read_text(encoding="utf-8")) == {"later": 1, "theme": "nord"}


def test_a_state_file_that_cannot_be_read_is_reported_and_never_rewritten(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tui.json"
    for text in ("{not json", "[1, 2]"):
        path.write_text(text, encoding="utf-8")
        theme, problem = saved_theme(path)
        assert theme is None and problem is not None and str(path) in problem
        assert save_theme(path, "textual-light") == problem
        assert path.read_text(encoding="utf-8") == text


async def test_the_theme_chosen_is_the_one_the_next_run_starts_with(vault: Vault) -> None:
    app = make_app(vault, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.theme == "textual-dark"
        app.theme = "textual-light"
        await until(pilot, lambda: state_path().is_file())
        await settled(pilot)
    again = make_app(vault, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert again.theme == "textual-light"


class Told(list[str]):
    """Every toast the app put up, kept after it fades: a toast lasts five seconds, and a
    loaded machine can take longer than that to settle."""

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.append(message.notification.message)


async def test_an_unreadable_state_file_starts_dark_with_a_warning(vault: Vault) -> None:
    path = state_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    app = make_app(vault, watch=False)
    told = Told()
    async with app.run_test(size=SIZE, message_hook=told) as pilot:
        await settled(pilot)
        assert app.theme == "textual-dark"
        assert any(t.startswith("Starting with the default theme") for t in told)
        app.theme = "textual-light"
        await until(pilot, lambda: any("Could not remember the theme" in t for t in told))
    assert path.read_text(encoding="utf-8") == "{not json"
