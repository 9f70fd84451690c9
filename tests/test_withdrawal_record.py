"""A withdrawal records who withdrew the proposal (`by` in its decision), so a check
brings back only what a check took back, whatever the note says; a file written before
decisions said who is read by its note, as it always was."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from review_helpers import commit_all
from test_bundle import edit_frontmatter, path_of
from test_live_withdraw import HELIX, NEOVIM, review

from memoryctl.checks import NO_LONGER_FOUND, withdrawn_by_check
from memoryctl.live_checks import WITHDRAWN
from memoryctl.proposals import (
    BY_CHECK,
    BY_DECISION,
    BY_PERSON,
    Decision,
    Suggestion,
    decided_bytes,
    new_proposal_bytes,
    proposal_from_file,
)

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)
SUGGESTION = Suggestion("retire", ("hafbhwmj2s",), "a newer fact replaces it", "rule", ref="x")

notes = st.none() | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40
).map(str.strip).filter(bool)
decisions = st.builds(
    Decision,
    at=st.integers(0, 10**9).map(lambda s: (NOW + dt.timedelta(seconds=s)).isoformat()),
    state=st.sampled_from(["approved", "declined", "withdrawn", "pending"]),
    note=notes,
    by=st.none() | st.sampled_from([BY_CHECK, BY_DECISION, BY_PERSON]),
)


def moment_of(at: str) -> str:
    return dt.datetime.fromisoformat(at).strftime("%Y-%m-%dT%H:%M:%SZ")


@settings(deadline=None)  # a loaded machine is slow, not wrong
@given(st.lists(decisions, min_size=1, max_size=4))
def test_every_decision_reads_back_as_it_was_recorded_with_who_withdrew(steps):
    relpath = "proposals/p.md"
    raw = new_proposal_bytes(SUGGESTION, "p0000000001", NOW, {})
    proposal = proposal_from_file(relpath, raw, "")
    for decision in steps:
        raw = decided_bytes(proposal, raw, decision)
        proposal = proposal_from_file(relpath, raw, "")
    read = [(moment_of(d.at), d.state, d.note, d.by) for d in proposal.history]
    assert read == [(moment_of(d.at), d.state, d.note, d.by) for d in steps]
    last = steps[-1]
    assert proposal.state == last.state
    if last.state == "pending":
        assert proposal.decision is None
    else:
        assert proposal.decision is not None and proposal.decision.by == last.by


def withdrawn(note: str, by: str | None) -> bool:
    raw = new_proposal_bytes(SUGGESTION, "p0000000001", NOW, {})
    proposal = proposal_from_file("proposals/p.md", raw, "")
    raw = decided_bytes(proposal, raw, Decision(NOW.isoformat(), "withdrawn", note, by))
    return withdrawn_by_check(proposal_from_file("proposals/p.md", raw, ""))


def test_who_withdrew_decides_and_the_note_only_for_a_file_from_before():
    assert withdrawn("anything at all", BY_CHECK)
    assert not withdrawn(NO_LONGER_FOUND, BY_DECISION)  # a check's words, not a check
    assert not withdrawn(NO_LONGER_FOUND, BY_PERSON)
    assert withdrawn(NO_LONGER_FOUND, None)  # written before `by`
    assert not withdrawn("the person's own words", None)


def test_a_check_records_that_it_withdrew_and_brings_back_an_old_file_by_its_note(
    sample_dir: Path, cli
):
    assert NEOVIM in review(cli, sample_dir)
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
    gone = review(cli, sample_dir, "withdrawn")[NEOVIM]
    assert gone["decision"] == {"at": gone["decision"]["at"], "note": WITHDRAWN, "by": BY_CHECK}
    # The same file as memoryctl wrote it before decisions said who withdrew.
    path = sample_dir / gone["path"]
    path.write_text(re.sub(r"(?m)^ *by: check\n", "", path.read_text()))
    assert "by:" not in path.read_text()
    commit_all(sample_dir, "a proposal file from before")
    edit_frontmatter(path_of(sample_dir, HELIX), retires=f"[{NEOVIM}]")
    assert NEOVIM in review(cli, sample_dir)
