"""Proposals are live: a fact written in another editor while the app runs shows its
proposal on the Review screen, and the sample vault's proposals are there from the
start, without anyone running `check`."""

from __future__ import annotations

from tui_support import SIZE, settled, show, until, vault, vault_path

from memoryctl.storage.vault import Vault
from memoryctl.tui.app import make_app
from memoryctl.tui.screens.review import ReviewScreen

__all__ = ["vault", "vault_path"]

LISBON, PORTO, NEOVIM = "hafbhwmj2s", "aghaak5xqn", "vvtwsb0afj"
BERLIN = "berlin0001"
FACT = """---
id: berlin0001
title: Moved to Berlin
kind: fact
created: 2026-11-30T09:00:00Z
namespace: personal
subject: user
predicate: lives_in
value: Berlin
---

I moved to Berlin and live in Kreuzberg now.
"""


def pending_targets(screen: ReviewScreen) -> set[tuple[str, str]]:
    if screen.state is None:
        return set()
    return {(t, i.proposal.origin) for i in screen.state.pending for t in i.proposal.targets}


async def sample_proposals_shown(pilot) -> ReviewScreen:
    """The Review screen in front, once it lists what the sample vault's facts propose."""
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    await until(
        pilot,
        lambda: {(LISBON, "rule"), (NEOVIM, "explicit")} <= pending_targets(screen),
        timeout=10,
    )
    return screen


async def test_a_fact_written_on_disk_while_the_app_runs_shows_its_proposal(vault: Vault) -> None:
    app = make_app(vault, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await until(pilot, lambda: any(w.group == "watch" and w.is_running for w in app.workers))
        await show(pilot, "3")
        # What the sample vault's own facts propose is there from the start.
        screen = await sample_proposals_shown(pilot)

        (vault.root / "memories/personal/home/lives-in-berlin.md").write_text(FACT)
        # The watcher, the live checks and the screen's read, on a machine that may be
        # loaded: waited for as long as that may take, never timed.
        await until(pilot, lambda: (PORTO, "rule") in pending_targets(screen), timeout=30)
        [item] = [i for i in screen.state.pending if PORTO in i.proposal.targets]
        assert item.proposal.ref == BERLIN
        assert "the newer 'Berlin'" in item.proposal.reason
        shown = screen.query_one("#proposals")
        assert any(
            "Moved to Porto" in shown.get_option_at_index(n).prompt.plain
            for n in range(shown.option_count)
        )
        # Proposed, never decided: Porto is still current.
        porto = vault.index.get(PORTO)
        assert porto is not None and porto.status == "active"


async def test_the_demo_opens_on_review_with_the_sample_vaults_proposals(vault: Vault) -> None:
    """`make demo` runs `memoryctl tui . --screen review` on a fresh copy of the sample
    vault: nobody has run anything, and its proposals are in front of the person."""
    app = make_app(vault, watch=True, start="review")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        # What the sample vault's own facts propose is there from the start.
        screen = await sample_proposals_shown(pilot)
        shown = screen.query_one("#proposals")
        assert shown.option_count >= 2
        # The proposal under the cursor is the one described beside the list.
        detail = screen.query_one("#proposal-text")
        current = screen.current
        assert current is not None
        await until(pilot, lambda: current.proposal.id in str(detail.render()), timeout=10)
        # The Vault screen is one key away, as on any other start.
        await show(pilot, "1")
        assert app.current_mode == "vault"
