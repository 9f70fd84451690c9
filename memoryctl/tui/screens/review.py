"""The review queue: pending proposals grouped by origin, each with its reason and the
before/after diff of what approving would change; approve, decline, undo, approve a
whole group; and the record of every past decision and every retired memory.

The decisions are the review core's (memoryctl.review); this screen only shows them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Header, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from memoryctl import review_actions
from memoryctl.actions import utcnow
from memoryctl.decisions import DIRECT
from memoryctl.tui.screens.base import AppScreen, WorkFailed, describe, opened_index
from memoryctl.tui.widgets.choice_list import ChoiceList
from memoryctl.tui.widgets.diff import diff_content
from memoryctl.tui.widgets.footer import KeysFooter
from memoryctl.tui.widgets.modals import ConfirmScreen
from memoryctl.tui.widgets.tab_keys import TAB_KEYS, focus_in_tab, step_tab, tab_bar_has_focus
from memoryctl.tui.workers import quiet_work
from memoryctl.wording import counted

if TYPE_CHECKING:
    from memoryctl.audit import Retirement
    from memoryctl.decisions import Outcome
    from memoryctl.proposals import Proposal
    from memoryctl.review import Item, LogEntry
    from memoryctl.storage.vault import Vault


@dataclass
class ReviewState:
    pending: list[Item]
    log: list[LogEntry]
    retired: list[Retirement]
    problems: list[tuple[str, str]] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # every memory the log names

    def entry(self, key: str | None) -> LogEntry | None:
        """The decision a row of the Decisions list stands for."""
        return next((e for e in self.log if entry_key(e) == key), None)


def read_review(vault: Vault) -> ReviewState:
    from memoryctl.audit import retired
    from memoryctl.proposals import ProposalStore
    from memoryctl.review import decision_log, queue

    index = opened_index(vault)
    pending = queue(vault)
    log = decision_log(ProposalStore(vault.root).load().proposals)
    named = index.get_many({t for entry in log for t in entry.proposal.targets})
    titles = {mid: memory.title for mid, memory in named.items()}
    return ReviewState(pending.items, log, retired(vault), pending.problems, titles)


def entry_key(entry: LogEntry) -> str:
    """A decision's own name, the same across reads: its proposal, when and what."""
    return f"{entry.proposal.id} {entry.at} {entry.state}"


def is_latest(entry: LogEntry) -> bool:
    """The decision is the proposal's current one (no later decision undid it)."""
    decision = entry.proposal.decision
    return decision is not None and (decision.at, decision.state) == (entry.at, entry.state)


def can_undo(entry: LogEntry) -> bool:
    """Only a proposal's current decision can be undone, and a reopened one has none."""
    return is_latest(entry) and entry.state != "pending"


def by_origin(items: list[Item]) -> dict[str, list[Item]]:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.proposal.origin, []).append(item)
    return dict(sorted(groups.items()))


def run_every_check(vault: Vault, now: dt.datetime) -> str:
    """Every check the vault is set up for (the core's `check_now`); what they found, as
    a person reads it. Blocks."""
    from memoryctl.checks import check_now

    report = check_now(vault, now=now)
    proposed, withdrawn = len(report.proposed), len(report.withdrawn)
    reopened = len(report.reopened)
    if not proposed and not withdrawn and not reopened:
        return "Checked: nothing new to propose."
    parts = [counted(proposed, "new proposal")]
    if withdrawn:
        parts.append(f"{withdrawn} withdrawn (no longer found)")
    if reopened:
        parts.append(f"{reopened} pending again (found again)")
    return "Checked: " + ", ".join(parts) + "."


def refusal(error: BaseException) -> str:
    """What stopped a decision, as this screen words it: the core's sentence, and the
    key that does what is left to do."""
    from memoryctl import review

    if isinstance(error, review.NotPending):
        return f"{error}; u on the Decisions tab reopens it"
    if isinstance(error, review.Unresolved | review.AlreadyDone):
        return f"{error}; d declines it"
    return describe(error)


def group_question(origin: str, group: list[Item], held: list[Item]) -> str:
    """What approving a group asks: how many, and which stay pending. A proposal whose
    target changed since it was made (or is gone) is never approved in a batch: the
    person reads its diff against the file as it is now, and approves it on its own."""
    question = f"Approve {counted(len(group) - len(held), 'pending proposal')} from {origin}?"
    if held:
        changed = sum(1 for i in held if i.changed)
        gone = len(held) - changed
        why = " and ".join(
            part
            for part in (
                f"{changed} changed on disk since proposed" if changed else "",
                f"{gone} point at a memory that is gone" if gone else "",
            )
            if part
        )
        stay = "stays" if len(held) == 1 else "stay"
        question += f" {len(held)} {stay} pending ({why}): approve those one at a time."
    return question + " Each is its own decision; u undoes them one at a time."


def who(item: Item) -> str:
    """Who proposed it: an agent by name, the person, or the check that found it."""
    return who_proposed(item.proposal)


def who_proposed(p: Proposal) -> str:
    if p.origin == "agent":
        return f"agent {p.ref}" if p.ref else "an agent"
    if p.origin == "user":
        return "you, directly" if p.ref == DIRECT else "you"
    return p.describe_origin()


def item_prompt(item: Item) -> Content:
    titles = ", ".join(t.memory.title if t.memory else f"{t.id} (gone)" for t in item.targets)
    parts: list[Content | tuple[str, str] | str] = [
        (f"{review_actions.verb(item.proposal.action)}: ", "bold"),
        titles,
        (f"\n  by {who(item)}: ", "$text-accent"),
        (item.proposal.reason, "$text-muted"),
    ]
    if item.flags():
        parts.append((f"\n  ⚠ {'; '.join(item.flags())}", "$text-warning"))
    return Content.assemble(*parts)


def titled(targets: tuple[str, ...] | list[str], titles: dict[str, str]) -> str:
    """The memories a proposal names, by title (by id when a memory is gone)."""
    return ", ".join(f"“{titles[t]}”" if t in titles else f"{t} (gone)" for t in targets)


def log_prompt(entry: LogEntry, titles: dict[str, str]) -> Content:
    state = "reopened" if entry.state == "pending" else entry.state
    p = entry.proposal
    return Content.assemble(
        (f"{entry.at[:10]} ", "$text-muted"),
        (f"{state:<9} ", "bold"),
        ("undone " if not is_latest(entry) and entry.state != "pending" else "", "$text-warning"),
        f"{review_actions.verb(p.action).lower()} {titled(p.targets, titles)}",
        (f"  {p.id} · {who_proposed(p)}", "$text-muted"),
        (f"\n  {p.reason}" if p.reason else "", "$text-muted"),
    )


UNDONE_NOUNS = {"approved": "approval", "declined": "decline", "withdrawn": "withdrawal"}


def decided_words(verb: str, outcome: Outcome) -> str:
    """What a decision did, as the toast says it: the action, the memory by its title."""
    p = outcome.proposal
    action = review_actions.verb(p.action).lower()
    what = f"{action} “{outcome.memory.title}”" if outcome.memory else f"{action} {p.id}"
    if verb == "approve":
        return f"Approved: {what}"
    if verb == "decline":
        return f"Declined: {what}; the memory stays as it is"
    history = p.history or ()
    was = history[-2].state if len(history) >= 2 and history[-2] else "approved"
    now = "pending again" if p.state == "pending" else "withdrawn"
    return f"Undid the {UNDONE_NOUNS.get(was, 'decision')}: {what} is {now}"


def retired_prompt(record: Retirement) -> Content:
    when = record.at[:10] if record.at else "by hand"
    return Content.assemble(
        (f"{when} ", "$text-muted"),
        (record.memory.title, "bold"),
        (f"\n  {record.reason or 'no reason recorded'}", "$text-muted"),
    )


class ReviewScreen(AppScreen):
    AUTO_FOCUS = "#proposals"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012

    DEFAULT_CSS = """
    ReviewScreen {
        TabbedContent { height: 1fr; }
        TabPane { padding: 0; }
        #review-pending { height: 1fr; }
        #proposals { width: 2fr; }
        #proposal-detail { width: 3fr; padding: 0 1; }
        #proposals, #proposal-detail, #log, #retired {
            height: 1fr; border: tall $border-blurred;
        }
        #proposals:focus, #log:focus, #retired:focus { border: tall $border; }
        OptionList > .option-list--option { padding: 0 1; }
        &.-narrow #review-pending { layout: vertical; }
        &.-narrow #proposals, &.-narrow #proposal-detail { width: 1fr; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "a", "approve", "Approve", id="memoryctl.review.approve", tooltip="Approve the proposal"
        ),
        Binding(
            "d",
            "decline",
            "Decline",
            id="memoryctl.review.decline",
            tooltip="Decline the proposal: the memory stays as it is",
        ),
        Binding(
            "u",
            "undo",
            "Undo",
            id="memoryctl.review.undo",
            tooltip="Undo your last decision here, or in Decisions the one under the cursor",
        ),
        Binding(
            "A",
            "approve_group",
            "Approve group",
            id="memoryctl.review.approve-group",
            tooltip="Approve every pending proposal of this origin, after a confirmation",
        ),
        Binding(
            "c",
            "check",
            "Check now",
            id="memoryctl.review.check",
            tooltip="Look for what to propose: retires, the typed-fact rules, expiry, lineage "
            "and code anchors",
        ),
        *TAB_KEYS,
    ]

    @dataclass
    class Read(Message):
        state: ReviewState

    @dataclass
    class Previewed(Message):
        proposal_id: str
        diff: str

    @dataclass
    class ChangedSinceProposed(Message):
        """Approving was refused: a target's file changed after the proposal was made."""

        proposal_id: str
        detail: str

    @dataclass
    class Decided(Message):
        said: str
        proposal_id: str | None  # what `u` undoes next, or None after an undo
        undone: str | None = None  # the proposal an undo reopened, kept under the cursor

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault)
        self.clock: Callable[[], dt.datetime] = utcnow  # what "now" the diffs are drawn at
        self.state: ReviewState | None = None
        self.rows: list[Item | None] = []  # the proposals list's options; None for a heading
        self.undo_stack: list[str] = []
        self.log_follows: str | None = None  # a proposal the Decisions cursor goes to next
        self.detail_of: str | None = None  # the proposal the detail pane shows or will show

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(id="review-tabs"):
            with TabPane("Pending", id="tab-pending"), Horizontal(id="review-pending"):
                yield ChoiceList(id="proposals")
                with VerticalScroll(id="proposal-detail"):
                    yield Static(id="proposal-text")
            with TabPane("Decisions", id="tab-log"):
                yield ChoiceList(id="log")
            with TabPane("Retired", id="tab-retired"):
                yield ChoiceList(id="retired")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#proposals").loading = True
        self.query_one("#proposal-detail").border_title = "What approving changes"
        self.reload()

    def reload(self) -> None:
        self.read()

    @work(
        thread=True,
        exclusive=True,
        group="review",
        exit_on_error=False,
        name="read the review queue",
    )
    def read(self) -> None:
        state = read_review(self.vault)
        self.post_message(self.Read(state))

    @on(Read)
    def read_done(self, message: Read) -> None:
        self.loading = False
        self.state = state = message.state
        self.show_pending(state.pending, read=True)
        log = self.query_one("#log", ChoiceList)
        keep = log.highlighted_id
        if self.log_follows:
            newest = (e for e in state.log if e.proposal.id == self.log_follows)
            keep = next((entry_key(e) for e in newest), keep)
            self.log_follows = None
        at = log.highlighted
        log.clear_options()
        log.add_options(Option(log_prompt(e, state.titles), id=entry_key(e)) for e in state.log)
        if state.log and not log.highlight_id(keep):
            log.highlighted = min(at or 0, len(state.log) - 1)
        log.border_title = f"{counted(len(state.log), 'decision')}, newest first"
        retired = self.query_one("#retired", OptionList)
        retired.clear_options()
        retired.add_options(Option(retired_prompt(r)) for r in message.state.retired)
        retired.border_title = counted(
            len(message.state.retired), "retired memory", "retired memories"
        )
        for path, why in message.state.problems:
            self.notify(f"{path}: {why}", title="Skipped a proposal file", severity="warning")
        tabs = self.query_one(TabbedContent)
        if tab_bar_has_focus(tabs):  # the first visit: the arrows move in the list
            focus_in_tab(tabs)
        self.refresh_bindings()

    @on(TabbedContent.TabActivated, "#review-tabs")
    def tab_shown(self) -> None:
        focus_in_tab(self.query_one(TabbedContent))
        self.refresh_bindings()

    @on(OptionList.OptionHighlighted, "#log")
    def decision_highlighted(self) -> None:
        self.refresh_bindings()

    def action_step_tab(self, step: int) -> None:
        step_tab(self.query_one(TabbedContent), step)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        tab = self.query_one(TabbedContent).active
        if action in ("approve", "decline", "approve_group"):
            return tab == "tab-pending" and self.current is not None
        if action == "undo":
            if tab == "tab-log":
                entry = self.chosen_decision
                return entry is not None and can_undo(entry)
            return tab == "tab-pending" and bool(self.undo_stack)
        if action == "check":
            return tab == "tab-pending"
        return True

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        tab = self.query_one(TabbedContent).active
        if action == "undo":
            if tab == "tab-log":
                entry = self.chosen_decision
                if entry is None:
                    return "No decision is under the cursor to undo."
                if entry.state == "pending":
                    return "This proposal is pending again: there is no decision to undo."
                return "A later decision on this proposal came after: only that one can be undone."
            if tab == "tab-pending":
                return "No decision made here yet to undo; the Decisions tab undoes older ones."
            return "Undo works on the Pending and Decisions tabs (] and [ switch tabs)."
        if tab != "tab-pending":
            return "That key works on the Pending tab (] and [ switch tabs)."
        if self.state is None:
            return "The proposals are still being read."
        return "No proposal is waiting for review."

    @property
    def chosen_decision(self) -> LogEntry | None:
        """The decision under the cursor in Decisions, by its name, never by its row."""
        if self.state is None:
            return None
        return self.state.entry(self.query_one("#log", ChoiceList).highlighted_id)

    def show_pending(self, items: list[Item], *, read: bool = False) -> None:
        """List the pending proposals, the cursor on the one it was on or the nearest.

        `read`: the queue as just read from the vault, so the change beside the cursor
        is worked out again from the files; otherwise (a decision on its way) it waits
        for the read that follows the decision, which may change it."""
        box = self.query_one("#proposals", ChoiceList)
        box.loading = False
        keep = box.highlighted_id
        at = box.highlighted
        box.clear_options()
        self.rows = []
        options: list[Option] = []
        for origin, group in by_origin(items).items():
            heading = Content.styled(f"{origin} · {len(group)} pending", "bold $text-accent")
            options.append(Option(heading, disabled=True))
            self.rows.append(None)
            for item in group:
                options.append(Option(item_prompt(item), id=item.proposal.id))
                self.rows.append(item)
        box.add_options(options)
        box.border_title = counted(len(items), "pending proposal")
        if not items:
            self.detail_of = None
            self.query_one("#proposal-text", Static).update(
                Content.styled(
                    "Nothing waits for a decision. Press c to look for what to propose "
                    "(explicit retires, the typed-fact rules, expiry, lineage, code anchors).",
                    "$text-muted",
                )
            )
            return
        if not box.highlight_id(keep):
            # Its proposal was decided: the nearest one left takes the cursor.
            choices = [n for n, row in enumerate(self.rows) if row is not None]
            target = at if at is not None and at < len(self.rows) else choices[0]
            box.highlighted = min(choices, key=lambda n: abs(n - target))
        # The cursor can land where it was (the first row, after a read that found none):
        # Textual then says nothing, and the pane would keep what it said before. When it
        # moves, Textual says so later, and `proposal_highlighted` finds it shown already.
        item = self.current
        if item is None:
            return
        if item.proposal.id != self.detail_of:
            self.detail_of = item.proposal.id
            self.query_one("#proposal-text", Static).update("")
        if read:
            self.preview(item)

    @property
    def current(self) -> Item | None:
        """The proposal under the cursor, by its id."""
        chosen = self.query_one("#proposals", ChoiceList).highlighted_id
        return next((i for i in self.rows if i is not None and i.proposal.id == chosen), None)

    @on(OptionList.OptionHighlighted, "#proposals")
    def proposal_highlighted(self) -> None:
        self.refresh_bindings()
        item = self.current
        if item is not None and item.proposal.id != self.detail_of:
            self.detail_of = item.proposal.id
            self.preview(item)

    @quiet_work("review-preview")
    def preview(self, item: Item) -> None:
        from memoryctl.review import preview

        try:
            diffs = preview(self.vault, item, self.clock())
        except Exception as error:
            diffs = {"": f"(the change cannot be shown: {describe(error)})"}
        self.post_message(self.Previewed(item.proposal.id, "\n".join(diffs.values())))

    @on(Previewed)
    def previewed(self, message: Previewed) -> None:
        item = self.current
        if item is None or item.proposal.id != message.proposal_id:
            return
        p = item.proposal
        head = Content.assemble(
            (review_actions.verb(p.action), "bold"),
            (f"  proposed by {who(item)} on {p.created[:10]} · {p.id}\n", "$text-muted"),
            (f"Why: {p.reason}\n", ""),
        )
        self.query_one("#proposal-text", Static).update(
            Content("\n").join([head, diff_content(message.diff or "(no change to the file)")])
        )

    # --- deciding ----------------------------------------------------------------------------

    def action_approve(self) -> None:
        self._decide("approve")

    def action_decline(self) -> None:
        self._decide("decline")

    def _decide(self, verb: str) -> None:
        item = self.current
        if item is None:
            return
        if verb == "approve" and item.changed:
            changed = ", ".join(t.memory.path for t in item.targets if t.changed and t.memory)
            self.ask_to_force(item.proposal.id, f"{changed} changed on disk")
            return
        self._decide_now(verb, item.proposal.id)

    def _decide_now(self, verb: str, proposal_id: str, *, force: bool = False) -> None:
        # The list changes at once; the files follow in a worker.
        rows = [i for i in self.rows if i is not None and i.proposal.id != proposal_id]
        self.show_pending(rows)
        self.decide(verb, proposal_id, force=force)

    def ask_to_force(self, proposal_id: str, detail: str) -> None:
        """The target changed after the proposal was made: approve only if the person,
        having seen the file as it is now, says so."""
        from memoryctl.review import CHANGED

        def answer(yes: bool | None) -> None:
            if yes:
                self._decide_now("approve", proposal_id, force=True)

        self.app.push_screen(
            ConfirmScreen(
                "Changed since proposed",
                f"{proposal_id}: {CHANGED}. {detail} after the proposal was made; the "
                "diff shows what approving does to the file as it is now. Approve anyway?",
            ),
            answer,
        )

    @on(ChangedSinceProposed)
    def changed_since_proposed(self, message: ChangedSinceProposed) -> None:
        self.reload()
        self.ask_to_force(message.proposal_id, message.detail)

    @work(thread=True, exclusive=True, group="review-write", exit_on_error=False)
    def decide(self, verb: str, proposal_id: str, *, force: bool = False) -> None:
        from memoryctl import review
        from memoryctl.actions import utcnow

        try:
            if verb == "approve":
                outcome = review.approve(self.vault, proposal_id, now=utcnow(), force=force)
            else:
                outcome = getattr(review, verb)(self.vault, proposal_id, now=utcnow())
        except review.ChangedSinceProposed as changed:
            # The file changed after this screen read the queue.
            self.post_message(
                self.ChangedSinceProposed(proposal_id, f"{changed.path} changed on disk")
            )
            return
        except Exception as error:
            self.post_message(WorkFailed(f"{verb} {proposal_id}", refusal(error)))
            self.post_message(self.Decided("", None))
            return
        said = decided_words(verb, outcome)
        extra = [*outcome.notices]
        if outcome.filed:
            extra.append(f"{len(outcome.filed)} derived memories proposed for review")
        said += "".join(f"\n{line}" for line in extra)
        if verb == "undo":
            self.post_message(self.Decided(said, None, undone=proposal_id))
        else:
            self.post_message(self.Decided(said, proposal_id))

    @on(Decided)
    def decided(self, message: Decided) -> None:
        if message.said:
            self.notify(message.said, title="Review")
        if message.proposal_id:
            self.undo_stack.append(message.proposal_id)
        # The Decisions cursor goes to the proposal just decided, or stays with the one
        # just undone, on its newest decision: what `u` there would undo is what was done.
        self.log_follows = message.undone or message.proposal_id
        self.reload()

    def action_undo(self) -> None:
        tabs = self.query_one(TabbedContent)
        if tabs.active == "tab-log":
            entry = self.chosen_decision
            if entry is None or not can_undo(entry):
                return
            proposal_id = entry.proposal.id
        elif self.undo_stack:
            proposal_id = self.undo_stack.pop()
        else:
            self.notify("No decision to undo yet (the Decisions tab lists every one).")
            return
        if proposal_id:
            self.decide("undo", proposal_id)

    def action_check(self) -> None:
        self.loading = True
        self.check()

    @work(
        thread=True,
        exclusive=True,
        group="review-write",
        exit_on_error=False,
        name="check the vault",
    )
    def check(self) -> None:
        said = run_every_check(self.vault, self.clock())
        self.post_message(self.Decided(said, None))

    def action_approve_group(self) -> None:
        item = self.current
        if item is None or self.state is None:
            return
        origin = item.proposal.origin
        group = by_origin(self.state.pending).get(origin, [])
        held = [i for i in group if i.changed or i.unresolved]
        if len(held) == len(group):
            self.notify(
                f"Every proposal from {origin} needs a look of its own: "
                "a target changed since it was proposed, or is gone. Approve them one at a time.",
                severity="warning",
            )
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self.show_pending([i for i in self.state.pending if i not in group or i in held])
                self.approve_group(origin)

        self.app.push_screen(
            ConfirmScreen("Approve the group", group_question(origin, group, held)), answer
        )

    @work(
        thread=True,
        exclusive=True,
        group="review-write",
        exit_on_error=False,
        name="approve the group",
    )
    def approve_group(self, origin: str) -> None:
        from memoryctl.actions import utcnow
        from memoryctl.review import approve_all

        done, skipped = approve_all(self.vault, now=utcnow(), origin=origin)
        said = f"Approved {len(done)} from {origin}"
        if skipped:
            said += f"; skipped {len(skipped)}: " + "; ".join(
                refusal(why) for _, why in skipped[:3]
            )
        for outcome in done[:-1]:
            self.undo_stack.append(outcome.proposal.id)
        last = done[-1].proposal.id if done else None
        self.post_message(self.Decided(said, last))
