"""Live checks withdraw as well as propose: when what triggered a pending proposal is
gone (the `retires` removed, the typed fact edited away, the file deleted), the next
command withdraws the proposal, with a note, in the commit of its own live checks.
Nothing else is touched: a proposal whose target is gone stays, for the person.

And when the trigger comes back, so does the proposal, pending again: a check took it
back, so a check brings it back. One the person declined stays declined.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from review_helpers import status, subjects, write_note
from test_bundle import edit_frontmatter, path_of

from memoryctl.checks import NO_LONGER_FOUND, REOPENED, run_checks
from memoryctl.live_checks import BULK, WITHDRAWN, check_changes
from memoryctl.moments import moment
from memoryctl.review import ChangedSinceProposed, approve
from memoryctl.storage.vault import Vault

NEOVIM, HELIX = "vvtwsb0afj", "r2qxe7ged0"  # Helix names Neovim in `retires`
LISBON, PORTO = "hafbhwmj2s", "aghaak5xqn"  # Porto replaces Lisbon (`lives_in`)
DINNER = "scarjk0h83"  # a plan that expired on 2026-11-21
NOW = moment("2026-11-29T12:00:00Z")


def v(root: Path) -> tuple[str, str]:
    return ("--vault", str(root), "--now", "2026-11-29")


def review(cli, root: Path, state: str = "pending") -> dict[str, dict]:
    """The proposals in one state, by their first target."""
    result = cli("--vault", str(root), "review", "--json", "--state", state)
    assert result.code == 0, result.err
    return {p["targets"][0]["id"]: p for p in result.json()["proposals"]}


def test_removing_retires_by_hand_withdraws_its_pending_proposal(sample_dir, cli):
    assert NEOVIM in review(cli, sample_dir)  # the live checks filed it on the first command
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
    assert NEOVIM not in review(cli, sample_dir)
    withdrawn = review(cli, sample_dir, "withdrawn")[NEOVIM]
    assert withdrawn["decision"]["note"] == WITHDRAWN
    assert subjects(sample_dir)[0] == "Check changes: propose 0, withdraw 1"
    # The person's own edit is theirs to commit; only the proposal's file was committed.
    assert status(sample_dir).strip() == f"M {path_of(sample_dir, HELIX).relative_to(sample_dir)}"


def test_a_typed_fact_edited_away_withdraws_what_it_proposed(sample_dir, cli):
    assert review(cli, sample_dir)[LISBON]["origin"]["ref"] == PORTO
    edit_frontmatter(path_of(sample_dir, PORTO), value="Lisbon")  # the same city: no conflict
    assert LISBON not in review(cli, sample_dir)
    assert LISBON in review(cli, sample_dir, "withdrawn")


def test_deleting_the_file_that_triggered_a_proposal_withdraws_it(sample_dir, cli):
    assert NEOVIM in review(cli, sample_dir)
    path_of(sample_dir, HELIX).unlink()
    assert NEOVIM not in review(cli, sample_dir)
    assert NEOVIM in review(cli, sample_dir, "withdrawn")


def test_a_proposal_whose_target_is_deleted_stays_for_the_person(sample_dir, cli):
    assert NEOVIM in review(cli, sample_dir)
    path_of(sample_dir, NEOVIM).unlink()
    assert NEOVIM in review(cli, sample_dir)
    assert review(cli, sample_dir, "withdrawn") == {}


def test_an_edit_of_the_text_alone_withdraws_nothing(sample_dir, cli):
    before = review(cli, sample_dir)
    path = path_of(sample_dir, HELIX)
    path.write_text(path.read_text(encoding="utf-8") + "\nStill Helix.\n", encoding="utf-8")
    assert review(cli, sample_dir).keys() == before.keys()
    assert review(cli, sample_dir, "withdrawn") == {}


def test_the_live_checks_report_what_they_withdrew_and_what_came_back(sample_dir):
    vault = Vault(sample_dir)
    try:
        first = check_changes(vault, now=NOW)
        assert any(p.targets == (NEOVIM,) for p in first.proposed)
        edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
        vault.index.sync()
        report = check_changes(vault, now=NOW)
        assert [(p.targets, p.state) for p in report.withdrawn] == [((NEOVIM,), "withdrawn")]
        assert report.proposed == [] and report.commit is not None
        # Putting the line back brings the same proposal back, pending again.
        edit_frontmatter(path_of(sample_dir, HELIX), retires=f"[{NEOVIM}]")
        vault.index.sync()
        again = check_changes(vault, now=NOW)
        assert again.proposed == [] and again.withdrawn == []
        assert [(p.id, p.state) for p in again.reopened] == [(report.withdrawn[0].id, "pending")]
    finally:
        vault.close()


# --- the trigger comes back: so does the proposal ------------------------------------------


def test_putting_retires_back_makes_the_withdrawn_proposal_pending_again(sample_dir, cli):
    proposal = review(cli, sample_dir)[NEOVIM]
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
    assert NEOVIM not in review(cli, sample_dir)
    edit_frontmatter(path_of(sample_dir, HELIX), retires=f"[{NEOVIM}]")
    result = cli("--vault", str(sample_dir), "review", "--json")
    assert "1 withdrawn proposal is pending again: what proposed it is back" in result.err
    back = review(cli, sample_dir)[NEOVIM]
    assert back["id"] == proposal["id"]  # the same proposal, not a new one
    assert [(h["state"], h.get("note")) for h in back["history"]] == [
        ("withdrawn", WITHDRAWN),
        ("pending", REOPENED),
    ]
    assert subjects(sample_dir)[0] == "Check changes: propose 0, reopen 1"


def test_a_typed_fact_edited_away_and_back_brings_its_proposal_back(sample_dir, cli):
    proposal = review(cli, sample_dir)[LISBON]
    edit_frontmatter(path_of(sample_dir, PORTO), value="Lisbon")
    assert LISBON not in review(cli, sample_dir)
    edit_frontmatter(path_of(sample_dir, PORTO), value="Porto")
    assert review(cli, sample_dir)[LISBON]["id"] == proposal["id"]
    assert review(cli, sample_dir, "withdrawn") == {}


def test_a_deleted_file_put_back_brings_its_proposal_back(sample_dir, cli):
    proposal = review(cli, sample_dir)[NEOVIM]
    path = path_of(sample_dir, HELIX)
    text = path.read_text(encoding="utf-8")
    path.unlink()
    assert NEOVIM not in review(cli, sample_dir)
    path.write_text(text, encoding="utf-8")
    assert review(cli, sample_dir)[NEOVIM]["id"] == proposal["id"]


def test_a_declined_proposal_stays_declined_when_its_trigger_goes_and_comes_back(sample_dir, cli):
    proposal = review(cli, sample_dir)[NEOVIM]
    declined = cli("--vault", str(sample_dir), "review", "decline", proposal["id"])
    assert declined.code == 0, declined.err
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
    review(cli, sample_dir)
    edit_frontmatter(path_of(sample_dir, HELIX), retires=f"[{NEOVIM}]")
    assert NEOVIM not in review(cli, sample_dir)
    assert review(cli, sample_dir, "declined")[NEOVIM]["id"] == proposal["id"]
    checked = cli("--vault", str(sample_dir), "check", "--json").json()
    assert checked["proposed"] == [] and checked["reopened"] == []


def test_check_brings_back_what_it_withdrew_and_the_bundle_shows_it_again(sample_dir, cli):
    """An expiry proposal exists only as a proposal: while it is withdrawn the bundle has
    nothing to say beneath the plan, and once the date is back it says it again."""
    vault, now = ("--vault", str(sample_dir)), ("--now", "2026-11-29T12:00:00Z")
    message = ("preview", "--message", "dinner with Sam at Taberna do Largo", *now)
    assert DINNER in review(cli, sample_dir)
    plan = path_of(sample_dir, DINNER)
    edit_frontmatter(plan, expires="2026-12-24")
    checked = cli(*vault, "check", "--json", *now).json()
    assert [p["targets"] for p in checked["withdrawn"]] == [[DINNER]]
    assert "pending (" not in cli(*vault, *message).out
    edit_frontmatter(plan, expires="2026-11-21")
    checked = cli(*vault, "check", "--json", *now).json()
    assert [(p["targets"], p["state"]) for p in checked["reopened"]] == [([DINNER], "pending")]
    shown = cli(*vault, *message).out
    dinner = shown.index("Taberna do Largo")
    assert "a proposal to retire this awaits the person's decision" in shown[dinner:]


# --- a bulk change withdraws too --------------------------------------------------------------


def test_a_large_pull_that_also_removes_a_retires_withdraws_its_proposal(sample_dir, cli):
    """More changed rows than the live checks look at one by one: they check the whole
    vault, as `check` does, and withdraw what it no longer proposes."""
    assert NEOVIM in review(cli, sample_dir)
    folder = sample_dir / "memories" / "pulled"
    folder.mkdir()
    for number in range(BULK + 1):
        (folder / f"note-{number}.md").write_text(
            f"---\ntitle: Pulled note {number}\n---\n\nA note from another device, {number}.\n",
            encoding="utf-8",
        )
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
    assert NEOVIM not in review(cli, sample_dir)
    assert review(cli, sample_dir, "withdrawn")[NEOVIM]["decision"]["note"] == NO_LONGER_FOUND


def test_a_full_reindex_withdraws_what_the_vault_no_longer_proposes(sample_dir, cli):
    assert LISBON in review(cli, sample_dir)
    edit_frontmatter(path_of(sample_dir, PORTO), value="Lisbon")
    result = cli("--vault", str(sample_dir), "reindex", "--full")
    assert result.code == 0, result.err
    assert LISBON not in review(cli, sample_dir)
    assert LISBON in review(cli, sample_dir, "withdrawn")


# --- what a proposal records of its target -------------------------------------------------


def test_a_target_edited_after_the_check_read_it_is_flagged_changed_since_proposed(sample_dir):
    """A proposal records its target as the check judged it, from the index: an edit
    the check did not see is for the person to look at before approving."""
    vault = Vault(sample_dir)
    try:
        assert vault.index.get(LISBON) is not None  # the index has read the vault
        lisbon = path_of(sample_dir, LISBON)
        lisbon.write_text(lisbon.read_text(encoding="utf-8") + "\nNow in Alfama.\n", "utf-8")
        report = run_checks(vault, now=NOW)
        [proposal] = [p for p in report.proposed if p.targets == (LISBON,)]
        with pytest.raises(ChangedSinceProposed):
            approve(vault, proposal.id, now=NOW)
        assert approve(vault, proposal.id, now=NOW, force=True).proposal.state == "approved"
    finally:
        vault.close()


# --- a newer fact takes over what the one before it proposed ---------------------------------


BRAGA = "brag4c1ty0"


def move_on_to_braga(root: Path) -> Path:
    return write_note(
        root,
        "memories/personal/home/lives-in-braga.md",
        BRAGA,
        "Lives in Braga",
        "I moved on to Braga.",
        created="2026-11-01T09:00:00Z",
        subject="user",
        predicate="lives_in",
        value="Braga",
    )


def retiring(cli, root: Path, target: str, state: str = "pending") -> list[str]:
    """Which facts propose retiring `target`, among the proposals in this state."""
    result = cli("--vault", str(root), "review", "--json", "--state", state)
    proposals = result.json()["proposals"]
    return [p["origin"]["ref"] for p in proposals if p["targets"][0]["id"] == target]


def assert_check_agrees(cli, root: Path) -> None:
    """`check` over the whole vault finds nothing to add to what the live checks left."""
    checked = cli("--vault", str(root), "check", "--json").json()
    assert (checked["proposed"], checked["withdrawn"], checked["reopened"]) == ([], [], [])


def test_a_newer_fact_withdraws_what_the_fact_it_replaces_proposed(sample_dir, cli):
    """Porto proposed retiring Lisbon. Braga comes after Porto: the rules now have
    Braga propose retiring both, so the live checks withdraw Porto's proposal about
    Lisbon, as `check` would, instead of leaving two proposals to retire Lisbon."""
    assert retiring(cli, sample_dir, LISBON) == [PORTO]
    move_on_to_braga(sample_dir)
    assert retiring(cli, sample_dir, LISBON) == [BRAGA]
    assert retiring(cli, sample_dir, PORTO) == [BRAGA]
    assert retiring(cli, sample_dir, LISBON, "withdrawn") == [PORTO]
    assert review(cli, sample_dir, "withdrawn")[LISBON]["decision"]["note"] == NO_LONGER_FOUND
    assert_check_agrees(cli, sample_dir)


def test_removing_the_newer_fact_brings_back_what_the_one_before_it_proposed(sample_dir, cli):
    """Braga deleted again: Porto is the newest fact once more, and its proposal to
    retire Lisbon is pending again, the same proposal, while Braga's are withdrawn."""
    first = review(cli, sample_dir)[LISBON]["id"]
    braga = move_on_to_braga(sample_dir)
    assert retiring(cli, sample_dir, LISBON) == [BRAGA]
    braga.unlink()
    assert retiring(cli, sample_dir, LISBON) == [PORTO]
    assert review(cli, sample_dir)[LISBON]["id"] == first
    assert sorted(retiring(cli, sample_dir, LISBON, "withdrawn")) == [BRAGA]
    assert retiring(cli, sample_dir, PORTO) == []
    assert_check_agrees(cli, sample_dir)


def test_a_withdrawal_commits_only_itself_and_leaves_the_persons_edit_of_the_proposal(
    sample_dir, cli
):
    """The person wrote a line in a pending proposal by hand and has not committed it;
    the check that withdraws the proposal writes over neither, and commits only its
    own change: the person's line stays theirs to commit."""
    proposal = review(cli, sample_dir)[NEOVIM]
    path = sample_dir / proposal["path"]
    path.write_text(path.read_text(encoding="utf-8") + "\nMy note: ask Sam first.\n")
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
    assert NEOVIM not in review(cli, sample_dir)
    text = path.read_text(encoding="utf-8")
    assert "state: withdrawn" in text and "My note: ask Sam first." in text
    committed = subprocess.run(
        ["git", "show", f"HEAD:{proposal['path']}"],
        cwd=sample_dir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "state: withdrawn" in committed and "ask Sam" not in committed
    assert f"M {proposal['path']}" in status(sample_dir)
