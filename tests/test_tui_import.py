"""The palette's Import action: choose a source and a path, check what it would make,
import in one commit, and see the new memories in the list."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandPalette
from textual.widgets import Input, OptionList, Select, Static
from tui_support import SIZE, app, settled, toasts, until, vault, vault_path

from memoryctl.storage.vault import Vault
from memoryctl.tui.app import MemoryApp
from memoryctl.tui.screens.import_memories import ImportScreen

__all__ = ["app", "vault", "vault_path"]

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"


async def test_import_from_the_palette_checks_first_then_imports_once(
    app: MemoryApp, vault: Vault
) -> None:
    before = len(vault.index.list(limit=1000))
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"import")
        palette = app.screen

        def offered() -> int | None:
            options = palette.query_one(OptionList)
            for n in range(options.option_count):
                prompt = str(options.get_option_at_index(n).prompt)
                if prompt.startswith("Import") and "Import memories" in prompt:
                    return n
            return None

        await until(pilot, lambda: offered() is not None)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ImportScreen))
        form = app.screen
        form.query_one("#source", Select).value = "letta"
        form.query_one("#import-path", Input).value = str(FIXTURES / "letta")
        await pilot.press("enter")  # check: a dry run
        report = form.query_one("#import-report", Static)
        await until(pilot, lambda: "Would make 4" in str(report.content))
        assert len(vault.index.list(limit=1000)) == before
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, ImportScreen))
        await settled(pilot)
        assert any("Made 4" in toast for toast in toasts(app))
        assert len(Vault(vault.root).index.list(limit=1000)) == before + 4


async def test_escape_imports_nothing_and_a_bad_path_says_why(
    app: MemoryApp, vault: Vault, tmp_path: Path
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, ImportScreen))
        form = app.screen
        form.query_one("#import-path", Input).value = str(tmp_path / "missing")
        await pilot.press("enter")
        await until(pilot, lambda: any("no such" in t for t in toasts(app)))
        missing = tmp_path / "missing"
        # In the words the CLI uses: the path and why, not an "unexpected error".
        assert f"Could not import from claude-code: {missing}: no such file or folder" in toasts(
            app
        )
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ImportScreen))
