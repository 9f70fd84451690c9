"""The agents that may write to this vault over MCP: who they are, the profile each one
sees, when each was added; and revoking one, after a confirmation.

The identities and the keyring are read and changed in thread workers (a keyring can
block on a desktop unlock prompt); the workers post messages and the handlers own the
widgets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from memoryctl.tui.screens.base import AppScreen, WorkFailed, describe
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.modals import ConfirmScreen
from memoryctl.wording import counted

if TYPE_CHECKING:
    from memoryctl.mcp.agents import Agent
    from memoryctl.storage.vault import Vault

NO_AGENTS = (
    "No agent may write to this vault. Add one with\n"
    "  memoryctl agents add NAME --profile PROFILE\n"
    "Its token is printed once and kept only in the OS keyring."
)
ABOUT = (
    "An agent proves who it is over HTTP with a token kept in the OS keyring. "
    "Revoking takes effect on the agent's next request."
)


def unwrapped(text: str) -> str:
    """The keyring message is wrapped for a terminal of 88 columns; let the screen wrap it."""
    return re.sub(r"\n {4}(?=\S)", " ", text)


def when_added(created: str) -> str:
    """`2026-11-02T09:30:00Z` as a person reads it: `2026-11-02 09:30 UTC`."""
    if len(created) == 20 and created[10] == "T" and created.endswith("Z"):
        return f"{created[:10]} {created[11:16]} UTC"
    return created


class AgentsScreen(AppScreen):
    AUTO_FOCUS = "#agents"

    DEFAULT_CSS = """
    AgentsScreen {
        #agents { height: 1fr; border: tall $border-blurred; }
        #agents:focus { border: tall $border; }
        #agents-about { color: $text-muted; padding: 0 1; }
        #agents-empty { color: $text-muted; padding: 1 2; display: none; }
        #keyring-problem {
            color: $text-warning;
            background: $warning-muted;
            padding: 0 1;
            display: none;
        }
        &.-empty #agents-empty { display: block; }
        &.-empty #agents { display: none; }
        &.-no-keyring #keyring-problem { display: block; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "r",
            "revoke",
            "Revoke",
            id="memoryctl.mcp.agents.revoke",
            tooltip="Revoke the agent under the cursor: its token stops working",
        ),
    ]

    @dataclass
    class Read(Message):
        agents: list[Agent]
        keyring_problem: str | None

    @dataclass
    class Revoked(Message):
        agent: Agent
        keyring_problem: str | None  # the token could not be deleted from the keyring

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault)
        self.agents: list[Agent] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="keyring-problem", markup=False)
        yield Static(ABOUT, id="agents-about", markup=False)
        table: DataTable[str] = DataTable(id="agents", cursor_type="row", zebra_stripes=True)
        table.add_columns("Name", "Profile", "Created")
        yield table
        yield Static(NO_AGENTS, id="agents-empty", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        from memoryctl.mcp.agents import identities_path

        self.loading_soon(self.query_one("#agents"))
        self.reload()
        # `memoryctl agents add` and `revoke` write this file: the list follows it.
        self.follow_file(identities_path(), self.reload)

    def reload(self) -> None:
        self.read()

    @property
    def current(self) -> Agent | None:
        table = self.query_one("#agents", DataTable)
        if not self.agents or table.cursor_row is None or table.cursor_row >= len(self.agents):
            return None
        return self.agents[table.cursor_row]

    # --- workers -----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="agents", exit_on_error=False, name="read the agents")
    def read(self) -> None:
        from memoryctl.mcp.agents import keyring_problem, list_agents
        from memoryctl.mcp.keyring_safety import unsafe_keyring, unsafe_warning

        found = list_agents(self.vault.root)
        problem = keyring_problem()
        unsafe = unsafe_keyring() if problem is None else None
        if unsafe is not None:
            problem = f"⚠ {unsafe_warning(unsafe)}"
        self.post_message(self.Read(found, problem))

    @work(thread=True, exclusive=True, group="agents-write", exit_on_error=False)
    def revoke(self, agent: Agent) -> None:
        from memoryctl.mcp.agents import KeyringUnavailable, revoke_agent

        try:
            revoked = revoke_agent(self.vault.root, agent.name)
        except KeyringUnavailable as error:
            # The identity goes first, so the token is already refused; only the
            # keyring's copy of it could not be deleted.
            self.post_message(self.Revoked(agent, str(error)))
            return
        except Exception as error:
            self.post_message(WorkFailed(f"revoke {agent.name}", describe(error)))
            self.reload()
            return
        self.post_message(self.Revoked(revoked, None))

    # --- handlers ------------------------------------------------------------------------------

    @on(Read)
    def read_done(self, message: Read) -> None:
        table = self.query_one("#agents", DataTable)
        self.loaded(table)
        keep = table.cursor_row
        self.agents = message.agents
        table.clear()
        for agent in message.agents:
            table.add_row(agent.name, agent.profile, when_added(agent.created), key=agent.name)
        count = len(message.agents)
        table.border_title = counted(count, "agent")
        if message.agents:
            table.move_cursor(row=min(keep or 0, len(message.agents) - 1))
        self.set_class(not message.agents, "-empty")
        self.set_class(message.keyring_problem is not None, "-no-keyring")
        self.query_one("#keyring-problem", Static).update(unwrapped(message.keyring_problem or ""))
        self.refresh_bindings()

    @on(Revoked)
    def revoked(self, message: Revoked) -> None:
        said = f"Revoked {message.agent.name}: its token fails on its next request."
        if message.keyring_problem:
            # The banner at the top says what to install; the toast only says what happened.
            self.notify(
                f"{said}\nIts token could not be deleted from the keyring, which is not "
                "usable: see the top of the screen.",
                title="Agents",
                severity="warning",
                timeout=15,
            )
        else:
            self.notify(said, title="Agents")
        self.reload()

    # --- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "revoke":
            return bool(self.agents)
        return True

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        return "No agent may write to this vault: there is none to revoke."

    def action_revoke(self) -> None:
        agent = self.current
        if agent is None:
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self.revoke(agent)

        self.app.push_screen(
            ConfirmScreen(
                "Revoke an agent",
                f"Revoke {agent.name} (profile {agent.profile})? Its token stops working on "
                "its next request, and it can no longer write to this vault. "
                "Its memories and proposals stay.",
            ),
            answer,
        )
