"""The TUI knows about agents: who wrote a memory, who proposed a change, and a screen
that lists the agents and revokes one after a confirmation."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator

import keyring
import pytest
from keyring.backends import fail
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList, Static
from tui_support import (
    SIZE,
    THEMES,
    app,
    help_text,
    quiet,
    settled,
    show,
    toasts,
    until,
    vault,
    vault_path,
)

from memoryctl.actions import NewMemory, add_memory
from memoryctl.decisions import Change
from memoryctl.mcp import agents
from memoryctl.proposals import Suggestion
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import HelpScreen, MemoryApp
from memoryctl.tui.screens.agents import NO_AGENTS, AgentsScreen
from memoryctl.tui.screens.memory import MemoryScreen
from memoryctl.tui.screens.review import ReviewScreen
from memoryctl.tui.widgets.modals import ConfirmScreen

__all__ = ["app", "vault", "vault_path"]

ADDED = dt.datetime(2026, 11, 2, 9, 30, tzinfo=dt.UTC)


@pytest.fixture
def two_agents(vault: Vault) -> dict[str, str]:
    """Two agents added at fixed moments; their tokens by name."""
    made = {
        "claude": agents.add_agent(vault.root, "claude", "default", now=ADDED),
        "cursor": agents.add_agent(vault.root, "cursor", "default", now=ADDED + dt.timedelta(1)),
    }
    return {name: new.token for name, new in made.items()}


@pytest.fixture
def no_keyring() -> Iterator[None]:
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(before)


async def open_agents(pilot: Pilot) -> AgentsScreen:
    await show(pilot, "6")
    screen = pilot.app.screen
    assert isinstance(screen, AgentsScreen)
    await until(pilot, lambda: screen.agents is not None)
    await settled(pilot)
    return screen


def table_rows(screen: AgentsScreen) -> list[list[str]]:
    table = screen.query_one("#agents", DataTable)
    return [[str(cell) for cell in table.get_row_at(n)] for n in range(table.row_count)]


async def test_the_agents_screen_lists_each_agent_with_its_profile_and_when_it_was_added(
    app: MemoryApp, two_agents: dict[str, str]
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_agents(pilot)
        assert table_rows(screen) == [
            ["claude", "default", "2026-11-02 09:30 UTC"],
            ["cursor", "default", "2026-11-03 09:30 UTC"],
        ]
        assert not screen.has_class("-empty")
        # The keyring works; the banner only warns that this one keeps tokens unencrypted.
        assert "UNENCRYPTED" in str(screen.query_one("#keyring-problem", Static).content)


async def test_revoking_an_agent_asks_first_then_its_token_stops_working(
    app: MemoryApp, vault: Vault, two_agents: dict[str, str]
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_agents(pilot)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Revoke claude" in str(app.screen.query_one(Static).content)
        await pilot.press("n")
        await settled(pilot)
        assert [a.name for a in agents.list_agents(vault.root)] == ["claude", "cursor"]

        await pilot.press("down", "r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: len(table_rows(screen)) == 1)
        await settled(pilot)
        assert table_rows(screen)[0][0] == "claude"
        assert any(t.startswith("Revoked cursor") for t in toasts(app))
    assert agents.authenticate(vault.root, two_agents["cursor"]) is None
    assert agents.authenticate(vault.root, two_agents["claude"]).name == "claude"


async def test_with_no_agents_the_screen_says_how_to_add_one(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_agents(pilot)
        assert screen.has_class("-empty")
        assert str(screen.query_one("#agents-empty", Static).content) == NO_AGENTS
        await pilot.press("r")  # nothing to revoke: no dialog, and it says why
        await pilot.pause()
        assert app.screen is screen
        assert "No agent may write to this vault: there is none to revoke." in toasts(app)


async def test_without_a_keyring_the_screen_names_the_backends_to_install(
    app: MemoryApp, vault: Vault, two_agents: dict[str, str], no_keyring: None
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_agents(pilot)
        assert screen.has_class("-no-keyring")
        problem = str(screen.query_one("#keyring-problem", Static).content)
        assert "keyrings.alt" in problem and "Secret Service" in problem
        # Revoking still refuses the agent: its identity goes first.
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: len(table_rows(screen)) == 1)
        warned = [n.message for n in app._notifications if n.severity == "warning"]
        assert warned and "could not be deleted from the keyring" in warned[0]
    assert [a.name for a in agents.list_agents(vault.root)] == ["cursor"]


async def test_the_agents_screen_is_in_help_and_in_the_palette(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await open_agents(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        shown = help_text(app.screen)
        assert "See the agents that may write, and revoke one" in shown
        # No agent yet: r is listed as off, with why, as pressing it says.
        assert "r  Revoke  No agent may write to this vault: there is none to revoke." in shown
        await pilot.press("escape")
        await show(pilot, "1")
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"agents")
        palette = app.screen

        def offered() -> bool:
            options = palette.query_one(OptionList)
            prompts = [
                str(options.get_option_at_index(n).prompt) for n in range(options.option_count)
            ]
            # Each entry says what it does once: its name, then its description.
            return any(p.startswith("Agents") and p.count("See the agents") == 1 for p in prompts)

        await until(pilot, offered)


async def test_the_memory_screen_names_the_agent_that_wrote_a_memory(
    app: MemoryApp, vault: Vault
) -> None:
    written = add_memory(
        vault,
        NewMemory(
            body="The user prefers rebase over merge for feature branches.",
            source="inference",
            source_ref=agents.source_ref_for("claude", "chat about git"),
        ),
    )
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        app.open_memory(written.id)
        await until(pilot, lambda: isinstance(app.screen, MemoryScreen))
        screen = app.screen
        await until(pilot, lambda: screen.details is not None)
        await settled(pilot)
        fields = [str(s.content) for s in screen.query("#memory-fields Static")]
        at = fields.index("written by")
        assert fields[at + 1] == "agent claude (its inference)"


async def test_each_proposal_in_review_says_which_agent_made_it(
    app: MemoryApp, vault: Vault
) -> None:
    mangoes = vault.index.list(text="mangoes", limit=1)[0]
    change = Change.start(vault, ADDED)
    change.propose(
        [Suggestion("retire", (mangoes.id,), "went off them", "agent", ref="claude", trigger="x")]
    )
    change.commit("Propose retiring mangoes")
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "3")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await until(pilot, lambda: screen.state is not None)
        await settled(pilot)
        box = screen.query_one("#proposals", OptionList)
        assert "by agent claude: went off them" in str(box.get_option_at_index(1).prompt)


@pytest.mark.parametrize("theme", THEMES)
def test_agents_screen_snapshot(
    app: MemoryApp, two_agents: dict[str, str], theme: str, snap_compare
) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        screen = await open_agents(pilot)
        quiet(pilot.app)
        # The keyring's file is in this run's temporary folder: shown as a person's would be.
        banner = screen.query_one("#keyring-problem", Static)
        data_home = os.environ["XDG_DATA_HOME"]
        banner.update(str(banner.content).replace(data_home, "~/.local/share"))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_a_screen_whose_reading_fails_says_what_it_could_not_do_and_why(
    app: MemoryApp,
) -> None:
    path = agents.identities_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "6")
        screen = pilot.app.screen
        assert isinstance(screen, AgentsScreen)
        await until(pilot, lambda: any("Could not read the agents" in t for t in toasts(app)))
        [said] = [t for t in toasts(app) if "Could not read the agents" in t]
        assert "agents.json" in said
        assert not screen.loading
    assert path.read_text(encoding="utf-8") == "{not json"


async def test_an_agent_added_with_the_cli_appears_without_a_restart(
    app: MemoryApp, vault: Vault
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_agents(pilot)
        assert screen.agents == []
        agents.add_agent(vault.root, "codex", "default", now=ADDED)  # as `agents add` does
        await until(pilot, lambda: [a.name for a in screen.agents or []] == ["codex"])
        await pilot.press("1")
        await settled(pilot)
        agents.revoke_agent(vault.root, "codex")
        await show(pilot, "6")  # back on the screen: it reads the file again
        await until(pilot, lambda: screen.agents == [])


async def test_a_keyring_that_stores_tokens_unencrypted_is_named_loudly(
    app: MemoryApp, two_agents: dict[str, str]
) -> None:
    # The test suite's keyring is keyrings.alt's plain file (tests/conftest.py).
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_agents(pilot)
        assert screen.has_class("-no-keyring")
        banner = str(screen.query_one("#keyring-problem", Static).content)
        assert "UNENCRYPTED" in banner and "keyrings.alt.file.PlaintextKeyring" in banner
        assert "Secret Service" in banner  # what would keep them safe here
