"""The review core's actions as objects: each owns its words, its guard, its preview and
its reverse, and every refusal is a typed error carrying data, worded for no face."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memoryctl import review, review_actions
from memoryctl.decisions import act
from memoryctl.proposals import NoSuchProposal
from memoryctl.review_actions import (
    ACTIONS,
    HOLD,
    REPLACE,
    AlreadyHeld,
    AlreadyRetired,
    IsRetired,
    NoNewText,
    NotRetired,
    NotReversible,
    ReviewError,
    SameText,
)
from memoryctl.storage.vault import Vault

NOW = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)
NEOVIM = "vvtwsb0afj"
LISBON = "hafbhwmj2s"
PEANUTS = "zj1d2pyve2"  # pinned


@pytest.fixture
def vault(sample_dir: Path) -> Vault:
    return Vault(sample_dir)


def test_every_action_has_one_name_one_word_and_one_verb() -> None:
    assert list(ACTIONS) == ["retire", "replace", "needs_review", "confirm", "restore", "conflict"]
    assert review_actions.PROPOSABLE == ("retire", "replace", "needs_review", "conflict")
    # A conflict is proposed only by sync: nobody types it.
    assert review_actions.PROPOSAL_WORDS == ("retire", "replace", "review")
    assert review_actions.by_word("review") is HOLD
    assert review_actions.by_word("needs_review") is HOLD
    assert review_actions.by_word("delete") is None
    assert [a.verb for a in ACTIONS.values()] == [
        "Retire",
        "Replace",
        "Hold for review",
        "Confirm",
        "Restore",
        "Take the other version",
    ]


@pytest.mark.parametrize("word", ["retire", "review", "replace"])
def test_the_preview_is_the_file_approving_writes(vault: Vault, word: str) -> None:
    body = "Lisbon, still; the flat on Rua da Rosa." if word == "replace" else None
    proposal, _ = review.propose(
        vault, word, LISBON, now=NOW, reason="checking the preview", body=body
    )
    [item] = [i for i in review.queue(vault).items if i.proposal.id == proposal.id]
    before = vault.load(vault.resolve(LISBON)).note.to_text()
    diff = review.preview(vault, item, NOW)[LISBON]

    review.approve(vault, proposal.id, now=NOW)

    after = vault.load(vault.resolve(LISBON)).note.to_text()
    removed = [line[1:] for line in diff.splitlines()[2:] if line.startswith("-")]
    added = [line[1:] for line in diff.splitlines()[2:] if line.startswith("+")]
    assert [line for line in before.splitlines() if line not in after.splitlines()] == removed
    assert [line for line in after.splitlines() if line not in before.splitlines()] == added


def test_approving_after_the_target_changed_says_which_file_and_both_hashes(vault: Vault) -> None:
    proposal, _ = review.propose(vault, "retire", NEOVIM, now=NOW, reason="switched to Helix")
    memory = vault.resolve(NEOVIM)
    path = vault.root / memory.path
    path.write_text(path.read_text(encoding="utf-8") + "\nA line added by hand.\n")
    vault.index.sync_paths([memory.path])

    with pytest.raises(review.ChangedSinceProposed) as refused:
        review.approve(vault, proposal.id, now=NOW)

    error = refused.value
    assert (error.proposal_id, error.path) == (proposal.id, memory.path)
    assert error.proposed_sha == proposal.target_sha[NEOVIM]
    assert error.current_sha == vault.load(memory).sha != error.proposed_sha


def test_deciding_twice_is_refused_with_the_state_it_is_in(vault: Vault) -> None:
    proposal, _ = review.propose(vault, "retire", NEOVIM, now=NOW, reason="switched to Helix")
    review.decline(vault, proposal.id, now=NOW, note="not yet")

    with pytest.raises(review.NotPending) as refused:
        review.approve(vault, proposal.id, now=NOW)

    assert (refused.value.proposal_id, refused.value.state) == (proposal.id, "declined")
    assert refused.value.note == "not yet"


def test_each_guard_names_the_memory_and_the_action_it_stopped(vault: Vault) -> None:
    act(vault, "retire", NEOVIM, now=NOW, reason="switched to Helix")
    with pytest.raises(AlreadyRetired) as twice:
        act(vault, "retire", NEOVIM, now=NOW, reason="again")
    assert (twice.value.memory_id, twice.value.action) == (NEOVIM, "retire")
    with pytest.raises(IsRetired) as confirming:
        act(vault, "confirm", NEOVIM, now=NOW)
    assert (confirming.value.memory_id, confirming.value.status) == (NEOVIM, "retired")
    with pytest.raises(NotRetired) as restoring:
        act(vault, "restore", LISBON, now=NOW)
    assert restoring.value.status == "active"
    with pytest.raises(SameText):
        act(vault, "replace", LISBON, now=NOW, body=vault.resolve(LISBON).body)
    with pytest.raises(NoNewText):
        review.propose(vault, "replace", LISBON, now=NOW, body="  ")
    review.propose(vault, "review", LISBON, now=NOW, reason="moved?")
    [held] = review.queue(vault).items
    review.approve(vault, held.proposal.id, now=NOW)
    with pytest.raises(AlreadyHeld):
        review.propose(vault, "review", LISBON, now=NOW, reason="moved again?")


def test_undo_says_which_action_reverses_a_restore_or_a_confirmation(vault: Vault) -> None:
    act(vault, "retire", NEOVIM, now=NOW, reason="switched to Helix")
    restored = act(vault, "restore", NEOVIM, now=NOW)
    confirmed = act(vault, "confirm", LISBON, now=NOW)

    with pytest.raises(NotReversible) as restore:
        review.undo(vault, restored.proposal.id, now=NOW)
    with pytest.raises(NotReversible) as confirm:
        review.undo(vault, confirmed.proposal.id, now=NOW)

    assert (restore.value.action, restore.value.instead) == ("restore", "retire")
    assert (confirm.value.action, confirm.value.instead) == ("confirm", "needs_review")


def test_no_refusal_of_the_review_core_names_a_command_or_a_flag(vault: Vault) -> None:
    refusals: list[Exception] = []

    def refused(run) -> None:
        with pytest.raises(ReviewError) as caught:
            run()
        refusals.append(caught.value)

    proposal, _ = review.propose(vault, "retire", NEOVIM, now=NOW, reason="Helix")
    review.decline(vault, proposal.id, now=NOW)
    refused(lambda: review.approve(vault, proposal.id, now=NOW))
    refused(lambda: review.propose(vault, "retire", NEOVIM, now=NOW))
    refused(lambda: review.propose(vault, "restore", NEOVIM, now=NOW, reason="x"))
    refused(lambda: review.propose(vault, "replace", NEOVIM, now=NOW, body=""))
    refused(lambda: review.since_moment("soon"))
    pending, _ = review.propose(vault, "retire", PEANUTS, now=NOW, reason="allergy gone")
    refused(lambda: review.undo(vault, pending.id, now=NOW))
    act(vault, "retire", LISBON, now=NOW, reason="moved")
    refused(lambda: act(vault, "confirm", LISBON, now=NOW))
    restored = act(vault, "restore", LISBON, now=NOW)
    refused(lambda: review.undo(vault, restored.proposal.id, now=NOW))
    undone = act(vault, "retire", LISBON, now=NOW, reason="moved after all")
    review.undo(vault, undone.proposal.id, now=NOW)
    refused(lambda: review.undo(vault, undone.proposal.id, now=NOW))
    with pytest.raises(NoSuchProposal) as missing:
        review.approve(vault, "zzzzzzzzzz", now=NOW)
    refusals.append(missing.value)

    assert len(refusals) == 10
    for error in refusals:
        assert "memoryctl" not in str(error) and "--" not in str(error), error


def test_a_replacement_is_proposed_through_its_action(vault: Vault) -> None:
    proposal, new = review.propose(vault, "replace", LISBON, now=NOW, body="Porto now.")
    assert new and proposal.action == REPLACE.name and proposal.reason == "new text proposed"
    again, new_again = review.propose(vault, "replace", LISBON, now=NOW, body="Porto now.\n")
    assert (again.id, new_again) == (proposal.id, False)


def test_check_now_runs_what_check_and_check_anchors_run_in_one_report(
    sample_dir: Path, tmp_path: Path
) -> None:
    from conftest import copy_sample

    from memoryctl.anchors import repo_root
    from memoryctl.checks import check_anchors, check_now, run_checks

    apart = copy_sample(tmp_path / "apart")
    vault, other = Vault(sample_dir), Vault(apart)

    report = check_now(vault, now=NOW)

    rules = run_checks(other, now=NOW)
    anchors = check_anchors(other, repo_root(apart, "code", None), now=NOW)
    keys = {p.key for p in report.proposed}
    assert keys == {p.key for p in rules.proposed} | {p.key for p in anchors.proposed}
    assert {p.origin for p in report.proposed} >= {"explicit", "rule", "expiry", "anchor"}
    assert report.checked["anchors"] == anchors.checked["anchors"]
