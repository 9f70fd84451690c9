"""The review screen: proposals grouped by origin; approve, decline, undo, a whole group."""

from __future__ import annotations

import datetime as dt

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static, TabbedContent
from tui_support import (
    SIZE,
    THEMES,
    app,
    footer_keys,
    quiet,
    settled,
    show,
    toasts,
    until,
    vault,
    vault_path,
)

from memoryctl.decisions import Change
from memoryctl.proposals import Suggestion
from memoryctl.review import queue
from memoryctl.storage.vault import Vault
from memoryctl.tui.app import MemoryApp
from memoryctl.tui.screens.review import ReviewScreen
from memoryctl.tui.widgets.modals import ConfirmScreen

__all__ = ["app", "vault", "vault_path"]

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


def propose(vault: Vault, title_word: str, origin: str, ref: str | None, why: str) -> str:
    memory = vault.index.list(text=title_word, limit=1)[0]
    change = Change.start(vault, NOW)
    change.propose([Suggestion("retire", (memory.id,), why, origin, ref=ref, trigger=why)])
    change.commit(f"Propose retiring {memory.title}")
    return memory.id


def mangoes_and_bike(vault: Vault) -> tuple[str, str]:
    """An agent's two proposals, mangoes first: the ids of the memories they retire."""
    mango = propose(vault, "mangoes", "agent", "codex", "went off them")
    return mango, propose(vault, "bike", "agent", "codex", "gave it away")


def status(vault: Vault, mid: str) -> str:
    memory = vault.index.get(mid)
    assert memory is not None
    return memory.status


def edit_on_disk(vault: Vault, mid: str) -> None:
    """Change the memory's file after the proposal was made, as an editor would."""
    memory = vault.index.get(mid)
    assert memory is not None
    path = vault.root / memory.path
    path.write_text(path.read_text() + "\nStill true on weekdays.\n")
    vault.index.sync()


def propose_then_edit(vault: Vault, title_word: str, why: str) -> str:
    """An agent's proposal to retire a memory whose file then changed on disk."""
    mid = propose(vault, title_word, "agent", "codex", why)
    edit_on_disk(vault, mid)
    return mid


async def open_review(pilot: Pilot) -> ReviewScreen:
    await show(pilot, "3")
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    await until(pilot, lambda: screen.state is not None)
    await settled(pilot)
    return screen


async def test_pending_proposals_are_grouped_by_origin_with_who_proposed_them(
    app: MemoryApp, vault: Vault
) -> None:
    propose(vault, "mangoes", "agent", "codex", "the user said they went off mangoes")
    propose(vault, "bike", "rule", "owns", "a newer fact replaces it")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        box = screen.query_one("#proposals", OptionList)
        prompts = [str(box.get_option_at_index(n).prompt) for n in range(box.option_count)]
        assert prompts[0] == "agent · 1 pending"
        assert "the user said they went off mangoes" in prompts[1]
        assert prompts[2] == "rule · 1 pending"
        detail = str(screen.query_one("#proposal-text", Static).content)
        assert "proposed by agent codex" in detail
        assert "+status: retired" in detail


async def test_approve_retires_the_memory_and_undo_brings_it_back(
    app: MemoryApp, vault: Vault
) -> None:
    mid = propose(vault, "mangoes", "agent", "codex", "went off them")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        await pilot.press("a")
        assert screen.query_one("#proposals", OptionList).option_count == 0  # at once
        await settled(pilot)
        assert status(vault, mid) == "retired"
        assert any(t.startswith("Approved: retire") for t in toasts(app))
        assert screen.state is not None and screen.state.retired[0].memory.id == mid
        await pilot.press("u")
        await settled(pilot)
        assert status(vault, mid) == "active"
        assert len(queue(vault).items) == 1
        assert screen.query_one("#proposals", OptionList).option_count == 2


async def test_approving_with_an_empty_queue_or_undoing_nothing_says_why(app: MemoryApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        assert not queue(screen.vault).items
        for key in ("a", "d", "A"):
            app.clear_notifications()
            await pilot.press(key)
            await settled(pilot)
            assert toasts(app) == ["No proposal is waiting for review."]
        app.clear_notifications()
        await pilot.press("u")
        await settled(pilot)
        assert toasts(app) == [
            "No decision made here yet to undo; the Decisions tab undoes older ones."
        ]
        await pilot.press("]")  # Decisions
        await settled(pilot)
        app.clear_notifications()
        await pilot.press("a")
        await settled(pilot)
        assert toasts(app) == ["That key works on the Pending tab (] and [ switch tabs)."]


async def test_approve_chosen_in_the_palette_with_an_empty_queue_says_why(
    app: MemoryApp,
) -> None:
    from textual.command import CommandPalette

    async with app.run_test(size=SIZE) as pilot:
        await open_review(pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"approve group")
        options = app.screen.query_one(OptionList)
        await until(
            pilot,
            lambda: (
                options.option_count > 0
                and str(options.get_option_at_index(0).prompt).startswith("Approve group")
            ),
        )
        await pilot.press("enter")
        await settled(pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert "No proposal is waiting for review." in toasts(app)


async def test_decline_leaves_the_memory_and_is_in_the_audit(app: MemoryApp, vault: Vault) -> None:
    mid = propose(vault, "mangoes", "agent", "codex", "went off them")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        await pilot.press("d")
        await settled(pilot)
        assert status(vault, mid) == "active"
        assert not queue(vault).items
        assert any(t.startswith("Declined") for t in toasts(app))
        assert screen.state is not None and screen.state.log[0].state == "declined"


async def test_the_first_visit_puts_the_arrows_in_the_list_and_brackets_switch_tabs(
    app: MemoryApp, vault: Vault
) -> None:
    mangoes_and_bike(vault)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        box = screen.query_one("#proposals", OptionList)
        assert app.focused is box
        first = box.highlighted
        await pilot.press("down")
        assert box.highlighted == first + 1
        assert {"[", "]"} <= {app.get_key_display(b) for _, b, on, _ in active(screen)}
        tabs = screen.query_one(TabbedContent)
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: tabs.active == "tab-log")
        await until(pilot, lambda: app.focused is screen.query_one("#log"))
        assert "a" not in footer_keys(screen)  # nothing to approve from the log
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: tabs.active == "tab-pending" and app.focused is box)


def active(screen: ReviewScreen) -> list:
    return [b for b in screen.active_bindings.values() if b.binding.show and b.enabled]


async def test_undo_in_decisions_undoes_the_one_under_the_cursor_and_keeps_it_there(
    app: MemoryApp, vault: Vault
) -> None:
    mango, bike = mangoes_and_bike(vault)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        await pilot.press("a")  # the first proposal, mangoes
        await settled(pilot)
        await pilot.press("d")  # then the bike one is declined
        await settled(pilot)
        await pilot.press("right_square_bracket")
        await settled(pilot)
        log = screen.query_one("#log", OptionList)
        rows = [str(log.get_option_at_index(n).prompt) for n in range(log.option_count)]
        assert rows[0].split()[1] == "declined" and rows[1].split()[1] == "approved"
        mango_title = vault.index.get(mango).title
        assert f"retire “{mango_title}”" in rows[1]  # by title, not by id
        await pilot.press("down")  # the older decision: the approval of mangoes
        await pilot.press("u")
        await settled(pilot)
        assert status(vault, mango) == "active" and status(vault, bike) == "active"
        assert [i.proposal.targets[0] for i in queue(vault).items] == [mango]
        assert any(t.startswith("Undid the approval: retire") for t in toasts(app))
        # The cursor stays with the proposal undone, on its newest decision.
        chosen = screen.chosen_decision
        assert chosen is not None and chosen.proposal.targets == (mango,)
        assert chosen.state == "pending"
        rows = [str(log.get_option_at_index(n).prompt) for n in range(log.option_count)]
        assert any("approved  undone" in r and mango_title in r for r in rows)
        # A reopened proposal has no decision to undo: u is not offered on it.
        assert "u" not in footer_keys(screen)


async def test_decisions_open_on_the_decision_just_made_so_u_undoes_it(
    app: MemoryApp, vault: Vault
) -> None:
    """The cursor in Decisions was on an older row from before: after a decision on
    Pending it moves to that decision, so the `u` the footer offers there undoes it."""
    mango, bike = mangoes_and_bike(vault)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        await pilot.press("d")  # the mangoes proposal, declined
        await settled(pilot)
        await pilot.press("right_square_bracket", "left_square_bracket")  # Decisions seen
        await settled(pilot)
        await pilot.press("a")  # now the bike proposal, approved
        await settled(pilot)
        await pilot.press("right_square_bracket")
        await settled(pilot)
        chosen = screen.chosen_decision
        assert chosen is not None and chosen.proposal.targets == (bike,)
        assert chosen.state == "approved" and "u" in footer_keys(screen)
        await pilot.press("u")
        await settled(pilot)
        assert status(vault, bike) == "active" and status(vault, mango) == "active"


async def test_undoing_a_decline_says_it_was_a_decline(app: MemoryApp, vault: Vault) -> None:
    propose(vault, "mangoes", "agent", "codex", "went off them")
    async with app.run_test(size=SIZE) as pilot:
        await open_review(pilot)
        await pilot.press("d")
        await settled(pilot)
        await pilot.press("u")
        await settled(pilot)
        assert any(t.startswith("Undid the decline: retire") for t in toasts(app))
        assert len(queue(vault).items) == 1


async def test_approving_a_group_asks_first(app: MemoryApp, vault: Vault) -> None:
    first = propose(vault, "mangoes", "agent", "codex", "one")
    second = propose(vault, "bike", "agent", "codex", "two")
    async with app.run_test(size=SIZE) as pilot:
        await open_review(pilot)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settled(pilot)
        assert len(queue(vault).items) == 2
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settled(pilot)
        assert {status(vault, first), status(vault, second)} == {"retired"}
        assert any("Approved 2 from agent" in t for t in toasts(app))


async def test_check_now_files_what_the_rules_and_expiry_find(app: MemoryApp, vault: Vault) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        screen.clock = lambda: NOW
        assert "Press c to look for what to propose" in str(
            screen.query_one("#proposal-text", Static).content
        )
        await pilot.press("c")
        await settled(pilot)
        pending = queue(vault).items
        assert {i.proposal.origin for i in pending} >= {"rule", "expiry", "explicit"}
        assert f"Checked: {len(pending)} new proposals." in toasts(app)
        box = screen.query_one("#proposals", OptionList)
        assert box.option_count == len(pending) + len({i.proposal.origin for i in pending})
        app.clear_notifications()
        await pilot.press("c")
        await settled(pilot)
        assert toasts(app) == ["Checked: nothing new to propose."]
        assert len(queue(vault).items) == len(pending)


async def test_a_group_with_a_changed_target_approves_the_rest_and_leaves_it_pending(
    app: MemoryApp, vault: Vault
) -> None:
    changed = propose_then_edit(vault, "mangoes", "one")
    other = propose(vault, "bike", "agent", "codex", "two")
    async with app.run_test(size=SIZE) as pilot:
        await open_review(pilot)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = str(app.screen.query_one(Static).content)
        assert "Approve 1 pending proposal from agent?" in question
        assert "1 stays pending (1 changed on disk since proposed)" in question
        await pilot.press("y")
        await settled(pilot)
        assert status(vault, other) == "retired"
        assert status(vault, changed) == "active"
        [left] = queue(vault).items
        assert left.targets[0].memory is not None and left.targets[0].memory.id == changed


async def test_a_group_whose_every_target_changed_is_not_offered(
    app: MemoryApp, vault: Vault
) -> None:
    mid = propose_then_edit(vault, "mangoes", "one")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        await pilot.press("A")
        await settled(pilot)
        assert app.screen is screen  # no question: nothing would be approved
        assert any("needs a look of its own" in t for t in toasts(app))
        assert status(vault, mid) == "active"


@pytest.mark.parametrize("theme", THEMES)
def test_review_screen_snapshot(app: MemoryApp, vault: Vault, theme: str, snap_compare) -> None:
    propose(vault, "mangoes", "agent", "codex", "the user said they went off mangoes")
    propose(vault, "bike", "rule", "owns", "a newer fact replaces it")

    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        screen = await open_review(pilot)
        screen.clock = lambda: NOW  # the diff shows when the retirement would be recorded
        assert screen.current is not None
        screen.preview(screen.current)
        await settled(pilot)
        quiet(pilot.app)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_approving_a_proposal_whose_target_changed_asks_first_then_forces(
    app: MemoryApp, vault: Vault
) -> None:
    mid = propose_then_edit(vault, "mangoes", "went off them")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        assert "changed since proposed: review again" in str(
            screen.query_one("#proposals", OptionList).get_option_at_index(1).prompt
        )
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Approve anyway?" in str(app.screen.query_one(Static).content)
        await pilot.press("n")
        await settled(pilot)
        assert status(vault, mid) == "active"
        assert len(queue(vault).items) == 1

        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settled(pilot)
        assert status(vault, mid) == "retired"
        assert not queue(vault).items
        assert any(t.startswith("Approved: retire") for t in toasts(app))


async def test_a_target_that_changes_while_the_screen_is_open_is_caught_on_approve(
    app: MemoryApp, vault: Vault
) -> None:
    mid = propose(vault, "mangoes", "agent", "codex", "went off them")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        edit_on_disk(vault, mid)  # the screen read the queue before this
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert status(vault, mid) == "active"
        await pilot.press("y")
        await settled(pilot)
        assert status(vault, mid) == "retired"
        assert screen.query_one("#proposals", OptionList).option_count == 0


async def test_a_proposal_decided_elsewhere_is_refused_in_the_screens_words(
    app: MemoryApp, vault: Vault
) -> None:
    from memoryctl.review import decline

    propose(vault, "mangoes", "agent", "codex", "went off them")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        [item] = [row for row in screen.rows if row is not None]
        decline(vault, item.proposal.id, now=NOW, note="still likes them")  # another terminal
        await pilot.press("a")
        await until(pilot, lambda: any("Could not approve" in t for t in toasts(app)))
        [said] = [t for t in toasts(app) if "Could not approve" in t]
    assert f"{item.proposal.id} was already declined" in said
    assert said.endswith("u on the Decisions tab reopens it")
    assert "memoryctl" not in said


async def test_proposals_arriving_after_an_empty_queue_show_their_change_beside_them(
    app: MemoryApp, vault: Vault
) -> None:
    from memoryctl.tui.screens.base import FilesChanged

    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        detail = screen.query_one("#proposal-text", Static)
        assert str(detail.content).startswith("Nothing waits")
        # A check proposes while the screen is open (the watcher tells every screen).
        propose(vault, "mangoes", "agent", "codex", "the user said they went off mangoes")
        screen.post_message(FilesChanged([]))
        await until(pilot, lambda: bool(screen.rows))
        await until(pilot, lambda: str(detail.content).startswith("Retire"))
        assert "the user said they went off mangoes" in str(detail.content)


async def test_after_a_decision_the_next_proposals_change_is_worked_out_once(
    app: MemoryApp, vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memoryctl import review

    built: list[str] = []

    def counted(vault: Vault, item, now: dt.datetime) -> dict[str, str]:
        built.append(item.proposal.id)
        return previewing(vault, item, now)

    previewing = review.preview
    monkeypatch.setattr(review, "preview", counted)
    mangoes_and_bike(vault)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(pilot)
        first, second = (i.proposal.id for i in screen.rows if i is not None)
        assert screen.current is not None and screen.current.proposal.id == first
        built.clear()
        await pilot.press("a")
        await until(pilot, lambda: screen.state is not None and len(screen.state.pending) == 1)
        await settled(pilot)
        detail = str(screen.query_one("#proposal-text", Static).content)
        assert "gave it away" in detail and "+status: retired" in detail
        assert built == [second]
