"""Live checks withdraw as well as propose: when what triggered a pending proposal is
gone (the `retires` removed, the typed fact edited away, the file deleted), the next
command withdraws the proposal, with a note, in the commit of its own live checks.
Nothing else is touched: a proposal whose target is gone stays, for the person.
"""

from __future__ import annotations

from pathlib import Path

from review_helpers import status, subjects
from test_bundle import edit_frontmatter, path_of

from memoryctl.live_checks import WITHDRAWN, check_changes
from memoryctl.memory import moment
from memoryctl.storage.vault import Vault

NEOVIM, HELIX = "vvtwsb0afj", "r2qxe7ged0"  # Helix names Neovim in `retires`
LISBON, PORTO = "hafbhwmj2s", "aghaak5xqn"  # Porto replaces Lisbon (`lives_in`)
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


def test_the_live_checks_report_what_they_withdrew(sample_dir):
    vault = Vault(sample_dir)
    try:
        first = check_changes(vault, now=NOW)
        assert any(p.targets == (NEOVIM,) for p in first.proposed)
        edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
        vault.index.sync()
        report = check_changes(vault, now=NOW)
        assert [(p.targets, p.state) for p in report.withdrawn] == [((NEOVIM,), "withdrawn")]
        assert report.proposed == [] and report.commit is not None
        # Putting the line back does not file it again: it was decided, by withdrawal.
        edit_frontmatter(path_of(sample_dir, HELIX), retires=f"[{NEOVIM}]")
        vault.index.sync()
        again = check_changes(vault, now=NOW)
        assert again.proposed == [] and again.withdrawn == []
    finally:
        vault.close()
