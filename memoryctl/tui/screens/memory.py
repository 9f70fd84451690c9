"""One memory on a screen of its own: the note, its lineage, its anchors and its history,
with the actions a person takes on it (pin, edit in place, retire, restore, confirm).

Everything is read in a thread worker that posts one `Loaded`; each action runs in a
worker that calls the core and posts `Done`. The handlers own the widgets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Header, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from memoryctl.tui.screens.base import AppScreen, WorkFailed, describe, kept_edits, opened_index
from memoryctl.tui.widgets import MemoryView
from memoryctl.tui.widgets.diff import diff_content
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.memory_view import Shown
from memoryctl.tui.widgets.modals import AskScreen
from memoryctl.tui.widgets.tab_keys import TAB_KEYS, focus_in_tab, step_tab
from memoryctl.wording import counted

if TYPE_CHECKING:
    from memoryctl.memory import Memory
    from memoryctl.storage.gitrepo import Commit
    from memoryctl.storage.vault import Vault

NO_GIT = "This vault is not a git repository, so there is no history. Run `memoryctl init` there."


@dataclass(frozen=True)
class AnchorState:
    spec: str
    status: str  # "ok", or what no longer holds
    ok: bool


@dataclass
class MemoryDetails:
    """Everything the screen shows about one memory, read in one go."""

    memory: Memory
    now: list[Memory]
    raw: str | None
    sources: list[Memory]
    descendants: list[tuple[int, Memory]]  # (depth, memory)
    anchors: list[AnchorState]
    anchors_note: str | None
    commits: list[Commit] = field(default_factory=list)
    history_note: str | None = None


def read_details(vault: Vault, memory_id: str) -> MemoryDetails | None:
    """What the screen shows, from the index, the code repository and git. Blocks."""
    from memoryctl.corrections import now_lines
    from memoryctl.lineage import descendants
    from memoryctl.storage import gitrepo

    index = opened_index(vault)
    memory = index.get(memory_id) or index.by_path(memory_id)
    if memory is None:
        return None
    now = now_lines(index, [memory])[memory.id]
    raw = vault.read_text(memory) if memory.broken else None
    found = index.get_many(memory.derived_from)
    sources = [found[mid] for mid in memory.derived_from if mid in found]
    below = descendants([memory.id], index.derived_children)
    by_id = index.get_many(d.id for d in below)
    kids = [(d.depth, by_id[d.id]) for d in below if d.id in by_id]
    anchors, anchors_note = anchor_states(vault, memory)
    details = MemoryDetails(memory, now, raw, sources, kids, anchors, anchors_note)
    if vault.is_git:
        details.commits = gitrepo.history(vault.root, memory.path)
    else:
        details.history_note = NO_GIT
    return details


def anchor_states(vault: Vault, memory: Memory) -> tuple[list[AnchorState], str | None]:
    from memoryctl.anchors import RepoFiles, anchor_breaks, repo_root, spec

    if not memory.anchors:
        return [], "This memory points at no code."
    try:
        repo = RepoFiles(repo_root(vault.root, vault.config.anchors_repo, None))
    except Exception as error:
        states = [AnchorState(spec(a), "not checked", False) for a in memory.anchors]
        return states, f"Anchors cannot be checked: {describe(error)}"
    breaks = anchor_breaks(memory, repo)
    states = []
    for anchor in memory.anchors:
        problems = [b.detail for b in breaks if b.anchor == anchor]
        states.append(AnchorState(spec(anchor), "; ".join(problems) or "ok", not problems))
    return states, None


class MemoryScreen(AppScreen):
    DEFAULT_CSS = """
    MemoryScreen {
        TabbedContent { height: 1fr; }
        TabPane { padding: 0; }
        MemoryView { height: 1fr; }
        #lineage, #commits { height: 1fr; border: tall $border-blurred; }
        #lineage:focus, #commits:focus { border: tall $border; }
        #commits { height: 10; }
        #diff-box { height: 1fr; border: tall $border-blurred; padding: 0 1; }
        #anchors { padding: 1 1; }
        .note { color: $text-muted; padding: 0 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="memoryctl.memory.back", tooltip="Back to the list"),
        Binding(
            "p",
            "pin",
            "Pin",
            id="memoryctl.memory.pin",
            tooltip="Pin this memory: it is always in the agent's context",
        ),
        Binding(
            "p",
            "unpin",
            "Unpin",
            id="memoryctl.memory.unpin",
            tooltip="Unpin this memory",
        ),
        Binding(
            "e",
            "edit",
            "Edit",
            id="memoryctl.memory.edit",
            tooltip="Edit the note in place, in the app",
        ),
        Binding(
            "E",
            "edit_outside",
            "$EDITOR",
            id="memoryctl.memory.editor",
            tooltip="Edit the note in place, in $EDITOR",
        ),
        Binding(
            "r",
            "retire",
            "Retire",
            id="memoryctl.memory.retire",
            tooltip="Retire this memory, with a reason",
        ),
        Binding(
            "R",
            "restore",
            "Restore",
            id="memoryctl.memory.restore",
            tooltip="Bring a retired memory back into context",
        ),
        Binding(
            "c",
            "confirm",
            "Confirm",
            id="memoryctl.memory.confirm",
            tooltip="Confirm this memory is current: out of review, checked today",
        ),
        Binding(
            "P",
            "propose",
            "Propose",
            show=False,
            id="memoryctl.memory.propose",
            tooltip="Propose holding this memory for review",
        ),
        *TAB_KEYS,
    ]

    @dataclass
    class Loaded(Message):
        memory_id: str
        details: MemoryDetails | None

    @dataclass
    class Done(Message):
        """An action on the memory finished; `memory` is the note as it is now."""

        memory: Memory | None
        said: str

    def __init__(self, vault: Vault, memory_id: str, shown: Shown | None = None) -> None:
        super().__init__(vault)
        self.memory_id = memory_id
        self.shown = shown
        self.details: MemoryDetails | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(id="memory-tabs"):
            with TabPane("Note", id="tab-note"):
                yield MemoryView(self.shown, id="memory-view")
            with TabPane("Lineage", id="tab-lineage"):
                yield OptionList(id="lineage")
            with TabPane("Anchors", id="tab-anchors"), VerticalScroll():
                yield Static(id="anchors")
            with TabPane("History", id="tab-history"), Vertical():
                yield Static(id="history-note", classes="note")
                yield OptionList(id="commits")
                with VerticalScroll(id="diff-box"):
                    yield Static(id="diff")
        yield KeysFooter()

    def on_mount(self) -> None:
        if self.shown is None:
            self.query_one(MemoryView).loading = True
        else:
            self.sub_title = self.shown.memory.title
        self.reload()

    async def present(self, memory_id: str, shown: Shown | None) -> None:
        """Show another memory on this screen, before it is shown again (the app keeps one
        Memory screen), so the memory it showed last is never painted."""
        self.memory_id = memory_id
        self.shown = shown
        self.details = None
        self.refresh_bindings()
        self.sub_title = shown.memory.title if shown else ""
        self.query_one(TabbedContent).active = "tab-note"
        view = self.query_one(MemoryView)
        if shown is None:
            view.show_message("")
            view.loading = True
        else:
            await view.show(shown.memory, shown.now, shown.raw)
        self._clear_tabs()
        self.reload()

    def _clear_tabs(self) -> None:
        self.query_one("#lineage", OptionList).clear_options()
        self.query_one("#anchors", Static).update("")
        self.query_one("#commits", OptionList).clear_options()
        self.query_one("#diff", Static).update("")

    @property
    def memory(self) -> Memory | None:
        return self.details.memory if self.details else None

    # --- reading -------------------------------------------------------------------------

    def reload(self) -> None:
        self.load()

    @work(
        thread=True,
        exclusive=True,
        group="memory-details",
        exit_on_error=False,
        name="read the memory",
    )
    def load(self) -> None:
        memory_id = self.memory_id
        details = read_details(self.vault, memory_id)
        self.post_message(self.Loaded(memory_id, details))

    @on(Loaded)
    async def loaded(self, message: Loaded) -> None:
        if message.memory_id != self.memory_id:
            return  # read for the memory this screen showed before
        view = self.query_one(MemoryView)
        view.loading = False
        details = self.details = message.details
        self.refresh_bindings()
        if details is None:
            view.show_message(f"{self.memory_id} is no longer in the vault.")
            return
        memory = details.memory
        self.sub_title = memory.title
        await view.show(memory, details.now, details.raw)
        self._show_lineage(details)
        self._show_anchors(details)
        self._show_history(details)

    def _show_lineage(self, details: MemoryDetails) -> None:
        lineage = self.query_one("#lineage", OptionList)
        lineage.clear_options()
        lineage.border_title = "Lineage: enter opens a memory"
        options: list[Option] = [Option(Content.styled("Derived from", "bold"), disabled=True)]
        options += [Option(f"  {m.title}  ({m.id})", id=m.id) for m in details.sources]
        if not details.sources:
            options.append(
                Option(Content.styled("  nothing: an original memory", "dim"), disabled=True)
            )
        options.append(Option(Content.styled("Built on it", "bold"), disabled=True))
        options += [
            Option(f"  {'  ' * (depth - 1)}{m.title}  ({m.id})", id=m.id)
            for depth, m in details.descendants
        ]
        if not details.descendants:
            options.append(
                Option(Content.styled("  no memory is derived from it", "dim"), disabled=True)
            )
        lineage.add_options(options)

    def _show_anchors(self, details: MemoryDetails) -> None:
        lines = [
            Content.assemble(
                ("✓ " if state.ok else "✗ ", "$text-success" if state.ok else "$text-error"),
                (state.spec, "bold"),
                "  ",
                (state.status, "$text-muted" if state.ok else "$text-warning"),
            )
            for state in details.anchors
        ]
        if details.anchors_note:
            lines.append(Content.styled(details.anchors_note, "$text-muted"))
        checked = details.memory.checked or details.memory.updated or details.memory.created
        if details.anchors:
            lines.append(Content.styled(f"last checked {checked[:10]}", "$text-muted"))
        self.query_one("#anchors", Static).update(Content("\n").join(lines))

    def _show_history(self, details: MemoryDetails) -> None:
        commits = self.query_one("#commits", OptionList)
        commits.clear_options()
        commits.border_title = (
            f"{counted(len(details.commits), 'commit')}: select one to see its diff"
        )
        commits.add_options(
            Option(f"{c.date[:10]} {c.sha[:7]} {c.subject}", id=c.sha) for c in details.commits
        )
        note = self.query_one("#history-note", Static)
        note.update(details.history_note or "")
        note.display = bool(details.history_note)
        self.query_one("#diff", Static).update(
            diff_content(details.commits[0].diff) if details.commits else ""
        )

    @on(OptionList.OptionHighlighted, "#commits")
    def commit_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.details is None:
            return
        chosen = [c for c in self.details.commits if c.sha == event.option.id]
        if chosen:
            self.query_one("#diff", Static).update(diff_content(chosen[0].diff))

    @on(OptionList.OptionSelected, "#lineage")
    def lineage_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.app.open_memory(event.option.id)  # type: ignore[attr-defined]

    # --- actions ---------------------------------------------------------------------------

    # The screen's keys are those the core allows on the memory as it is now; they are
    # checked again whenever the memory is read or changed (`refresh_bindings`).
    ACTION_NAMES: ClassVar[dict[str, str]] = {
        "pin": "pin",
        "unpin": "unpin",
        "edit": "replace",
        "edit_outside": "edit_file",
        "retire": "retire",
        "restore": "restore",
        "confirm": "confirm",
        "propose": "hold",
    }

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        from memoryctl.actions import available_actions

        if action not in self.ACTION_NAMES:
            return True
        memory = self.memory
        return memory is not None and self.ACTION_NAMES[action] in available_actions(memory)

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        """The core's own refusal of the action on the memory as it is now."""
        from memoryctl.actions import DIRECT_ACTIONS, NotPinnable
        from memoryctl.review_actions import IsRetired, ReviewError, Unreadable

        memory = self.memory
        if memory is None:
            return "The memory is still being read."
        name = self.ACTION_NAMES.get(action)
        if memory.broken:
            refusal: Exception = Unreadable(memory.path)
        elif name in ("pin", "unpin"):
            refusal = NotPinnable(memory)
        else:
            decision = DIRECT_ACTIONS.get("replace" if name == "edit_file" else name or "")
            if decision is None:
                return None
            try:
                decision.guard(memory, None)
            except ReviewError as error:
                refusal = error
            else:
                return None
        said = str(refusal)
        if isinstance(refusal, IsRetired):
            said += " (R)"
        elif isinstance(refusal, Unreadable):
            said += " (E opens it in $EDITOR)"
        return f"{said}."  # it starts with the memory's id or path, as the core words it

    def action_back(self) -> None:
        self.dismiss()

    def action_step_tab(self, step: int) -> None:
        step_tab(self.query_one(TabbedContent), step)

    @on(TabbedContent.TabActivated, "#memory-tabs")
    def tab_shown(self) -> None:
        focus_in_tab(self.query_one(TabbedContent))

    def action_pin(self) -> None:
        if self.memory is not None:
            self.loading = True
            self.set_pinned(self.memory, True)

    def action_unpin(self) -> None:
        if self.memory is not None:
            self.loading = True
            self.set_pinned(self.memory, False)

    @work(
        thread=True,
        exclusive=True,
        group="memory-action",
        exit_on_error=False,
        name="change the pin",
    )
    def set_pinned(self, memory: Memory, pinned: bool) -> None:
        from memoryctl.actions import set_pinned

        updated = set_pinned(self.vault, memory.id, pinned)
        said = "Pinned" if pinned else "Unpinned"
        self.post_message(self.Done(updated, said + kept_edits(self.vault)))

    def action_edit(self) -> None:
        from memoryctl.tui.screens.editor import EditorScreen

        if self.memory is not None:
            self.app.push_screen(EditorScreen(self.vault, self.memory), self._edited)

    def _edited(self, saved: Memory | None) -> None:
        if saved is not None:
            self.reload()

    def action_edit_outside(self) -> None:
        if self.memory is not None:
            self.edit_outside(self.memory)

    @work(exclusive=True, group="memory-action", exit_on_error=False, name="edit in $EDITOR")
    async def edit_outside(self, memory: Memory) -> None:
        """$EDITOR on the file itself, then index and commit what changed."""
        from memoryctl.actions import read_for_edit, record_external_edit
        from memoryctl.editor_command import run_editor

        _, before = read_for_edit(self.vault, memory)
        with self.app.suspend():
            run_editor(self.vault.root / memory.path)
        updated = record_external_edit(self.vault, memory, before)
        self.post_message(self.Done(updated, "Saved" if updated else "Nothing changed"))

    def action_retire(self) -> None:
        if self.memory is None:
            return
        question = AskScreen(
            "Retire",
            f"Retire “{self.memory.title}”? It leaves the agent's context and stays in history.",
            placeholder="why (required)",
        )
        self.app.push_screen(question, self._retire_with)

    def _retire_with(self, reason: str | None) -> None:
        if reason and self.memory is not None:
            self.loading = True
            self.decide("retire", self.memory, reason)

    def action_restore(self) -> None:
        if self.memory is not None:
            self.loading = True
            self.decide("restore", self.memory, None)

    def action_confirm(self) -> None:
        if self.memory is not None:
            self.loading = True
            self.decide("confirm", self.memory, None)

    def action_propose(self) -> None:
        if self.memory is None:
            return
        question = AskScreen(
            "Propose a review",
            f"Propose holding “{self.memory.title}” for review? It goes to the Review screen.",
            placeholder="why (required)",
        )
        self.app.push_screen(question, self._propose_with)

    def _propose_with(self, reason: str | None) -> None:
        if reason and self.memory is not None:
            self.decide("propose", self.memory, reason)

    @work(thread=True, exclusive=True, group="memory-action", exit_on_error=False)
    def decide(self, what: str, memory: Memory, reason: str | None) -> None:
        from memoryctl import review
        from memoryctl.actions import utcnow
        from memoryctl.decisions import act
        from memoryctl.review_actions import ACTIONS

        try:
            if what == "propose":
                # The queue's own `propose`: the same proposal is never filed twice.
                proposal, new = review.propose(
                    self.vault,
                    "needs_review",
                    memory.id,
                    now=utcnow(),
                    reason=reason,
                    origin="user",
                )
                said = (
                    "Proposed for review: see the Review screen"
                    if new
                    else f"Already proposed as {proposal.id} ({proposal.state}); nothing new filed"
                )
                self.post_message(self.Done(memory, said))
                return
            outcome = act(self.vault, what, memory.id, now=utcnow(), reason=reason)
        except Exception as error:
            self.post_message(WorkFailed(f"{what} the memory", describe(error)))
            return
        self.post_message(self.Done(outcome.memory, ACTIONS[what].past))

    @on(Done)
    def done(self, message: Done) -> None:
        self.loading = False
        self.notify(message.said, title=message.memory.title if message.memory else None)
        if message.memory is not None and self.details is not None:
            self.details.memory = message.memory  # the keys follow at once, not at the reread
            self.refresh_bindings()
        self.reload()
