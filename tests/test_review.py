"""The review queue end to end through the CLI: every origin of a proposal, deciding,
undo, the audit, and bad input. What a person types, sees, and finds on disk and in git.
"""

from __future__ import annotations

from pathlib import Path

from review_helpers import commit_all, git, note_text, status, subjects, write_note

NEOVIM = "vvtwsb0afj"  # named in `retires` by the Helix preference r2qxe7ged0
HELIX = "r2qxe7ged0"
LIKES_MANGOES = "zk26gcx3q4"
DISLIKES_MANGOES = "wbhh9dh72s"
LIKES_PAPAYAS = "x5tqg0jvzq"
OWNS_BIKE = "brxqnasz8q"
LISBON = "hafbhwmj2s"
DINNER = "scarjk0h83"  # a plan that expires 2026-11-21
CHRISTMAS = "dga2pd9d27"  # expires 2027-01-04
PEANUTS = "zj1d2pyve2"  # pinned
SIGNING = "danwpsx5ek"  # anchored to a symbol the sample code no longer has


def v(root: Path) -> tuple[str, str]:
    return ("--vault", str(root))


def pending(cli, root: Path, *extra: str) -> list[dict]:
    return cli(*v(root), "review", "--json", *extra).json()["proposals"]


def found(proposals: list[dict]) -> set[tuple[str, str, str]]:
    return {(p["action"], p["targets"][0]["id"], p["origin"]["kind"]) for p in proposals}


def fm(root: Path, cli, mid: str) -> dict:
    return cli(*v(root), "show", mid, "--json").json()


# --- where proposals come from ------------------------------------------------------------


def test_check_on_the_sample_vault_proposes_exactly_the_expected_retirements(sample_dir, cli):
    result = cli(*v(sample_dir), "check", "--now", "2026-11-29", "--json")
    assert result.code == 0, result.err
    assert found(pending(cli, sample_dir)) == {
        ("retire", NEOVIM, "explicit"),
        ("retire", LIKES_MANGOES, "rule"),
        ("retire", OWNS_BIKE, "rule"),
        ("retire", LISBON, "rule"),
        ("retire", DINNER, "expiry"),
        ("needs_review", SIGNING, "anchor"),  # the vault names its code repository
    }
    # The lookalike and the plan still ahead are left alone, and nothing is retired yet.
    targets = {p["targets"][0]["id"] for p in pending(cli, sample_dir)}
    assert LIKES_PAPAYAS not in targets and CHRISTMAS not in targets
    assert cli(*v(sample_dir), "list", "--status", "retired", "--json").json() == []
    assert subjects(sample_dir)[:2] == [
        "Check anchors: propose 1, withdraw 0",
        "Check: propose 5, withdraw 0",
    ]
    assert status(sample_dir) == ""


def test_running_the_checks_again_never_duplicates_a_proposal(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    files = sorted((sample_dir / "proposals").iterdir())
    again = cli(*v(sample_dir), "check", "--now", "2026-11-29", "--json").json()
    assert again["proposed"] == [] and again["withdrawn"] == []
    assert again["already_proposed"] == 6
    assert sorted((sample_dir / "proposals").iterdir()) == files
    # `check` checked the anchors too, since the vault names its repository.
    assert cli(*v(sample_dir), "check-anchors", "--json").json()["proposed"] == []
    assert "Nothing new to propose" in cli(*v(sample_dir), "check", "--now", "2026-11-29").out


def test_expiry_is_judged_at_the_moment_given(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-20T23:00:00Z")
    assert DINNER not in {p["targets"][0]["id"] for p in pending(cli, sample_dir)}
    cli(*v(sample_dir), "check", "--now", "2027-02-01")
    expired = {p["targets"][0]["id"] for p in pending(cli, sample_dir, "--origin", "expiry")}
    assert expired == {DINNER, CHRISTMAS, "aff8jkszxn"}
    [dinner] = [p for p in pending(cli, sample_dir) if p["targets"][0]["id"] == DINNER]
    assert dinner["reason"] == "plan expired on 2026-11-21"


def test_explicit_retires_yields_one_proposal_per_target_and_reports_unreplaced(vault_dir, cli):
    write_note(vault_dir, "a.md", "aaaaaaaaaa", "Old tool A")
    write_note(vault_dir, "b.md", "bbbbbbbbbb", "Old tool B")
    write_note(
        vault_dir,
        "c.md",
        "cccccccccc",
        "New tool",
        retires=["aaaaaaaaaa", "bbbbbbbbbb", "nosuchid00"],
    )
    commit_all(vault_dir)
    result = cli(*v(vault_dir), "check", "--json")
    report = result.json()
    assert {p["targets"][0] for p in report["proposed"]} == {"aaaaaaaaaa", "bbbbbbbbbb"}
    assert all(p["origin"] == {"kind": "explicit", "ref": "cccccccccc"} for p in report["proposed"])
    assert report["unreplaced"] == [
        {"memory": "cccccccccc", "title": "New tool", "target": "nosuchid00"}
    ]
    text = cli(*v(vault_dir), "check")
    assert "unreplaced: cccccccccc (New tool) retires nosuchid00, which is no memory" in text.err
    doctor = cli(*v(vault_dir), "doctor")
    assert "retires: nosuchid00 is no memory (unreplaced)" in doctor.out


def test_an_agent_proposes_and_the_same_proposal_is_filed_once(sample_dir, cli):
    agent = ("--origin", "agent")
    first = cli(
        *v(sample_dir), "propose", "retire", NEOVIM, "--reason", "switched to Helix", *agent
    )
    assert first.code == 0, first.err
    pid = first.out.strip()
    again = cli(
        *v(sample_dir), "propose", "retire", NEOVIM, "--reason", "Switched to  Helix", *agent
    )
    assert again.out.strip() == pid
    assert "Already proposed" in again.err
    [proposal] = pending(cli, sample_dir, "--origin", "agent")
    assert proposal["origin"] == {"kind": "agent", "ref": None}
    assert proposal["reason"] == "switched to Helix"
    assert (sample_dir / "proposals" / f"{pid}.md").is_file()
    assert subjects(sample_dir)[0] == "Propose: retire Editor: Neovim"


def test_propose_needs_a_reason_and_an_existing_memory(sample_dir, cli):
    assert "--reason" in cli(*v(sample_dir), "propose", "retire", NEOVIM).err
    missing = cli(*v(sample_dir), "propose", "review", "nosuchid00", "--reason", "x")
    assert missing.code == 1 and "no memory with id 'nosuchid00'" in missing.err


def test_a_hand_written_proposal_is_read_and_decided_keeping_its_own_text(sample_dir, cli):
    folder = sample_dir / "proposals"
    folder.mkdir()
    text = (
        "---\n"
        "# written by my agent\n"
        "action: retire\n"
        f"targets: [{NEOVIM}]\n"
        "reason: the user said they stopped using Neovim\n"
        "origin: {kind: agent, ref: session-42}\n"
        "---\n"
    )
    (folder / "from-agent.md").write_text(text)
    [proposal] = pending(cli, sample_dir, "--origin", "agent")
    assert proposal["id"] == "from-agent"
    assert proposal["origin"] == {"kind": "agent", "ref": "session-42"}
    assert cli(*v(sample_dir), "review", "approve", "from-agent").code == 0
    after = (folder / "from-agent.md").read_text()
    assert after.startswith(text[: text.index("origin:")])
    assert "state: approved" in after
    assert fm(sample_dir, cli, NEOVIM)["status"] == "retired"


# --- deciding -----------------------------------------------------------------------------


def test_approving_a_retirement_keeps_the_file_and_records_why_in_one_commit(sample_dir, cli):
    path = sample_dir / "memories/work/preferences/editor-neovim.md"
    before = path.read_text()
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    [pid] = [p["id"] for p in pending(cli, sample_dir) if p["targets"][0]["id"] == NEOVIM]
    head = git(sample_dir, "rev-parse", "HEAD").strip()
    result = cli(*v(sample_dir), "review", "approve", pid, "--note", "Helix for good")
    assert result.code == 0, result.err
    assert f"Approved {pid}: retire {NEOVIM}." in result.out
    after = path.read_text()
    assert "status: retired\n" in after and "retired:\n" in after
    assert f"  proposal: {pid}\n" in after
    assert before.split("---\n", 2)[2] == after.split("---\n", 2)[2]  # the text is kept
    memory = fm(sample_dir, cli, NEOVIM)
    assert memory["status"] == "retired" and memory["path"].endswith("editor-neovim.md")
    # One commit: the memory and the proposal, named in the message.
    assert git(sample_dir, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    message = git(sample_dir, "log", "-1", "--format=%B")
    assert message.startswith(f"Approve {pid}: retire Editor: Neovim")
    assert f"target: {NEOVIM} Editor: Neovim" in message and "note: Helix for good" in message
    changed = git(sample_dir, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([f"proposals/{pid}.md", memory["path"]])
    assert status(sample_dir) == ""
    # Retired memories leave search, and the proposal leaves the queue.
    assert NEOVIM not in {m["id"] for m in cli(*v(sample_dir), "search", "Neovim", "--json").json()}
    assert pid not in {p["id"] for p in pending(cli, sample_dir)}


def test_declining_leaves_the_memory_untouched_and_the_trigger_never_proposes_it_again(
    sample_dir, cli
):
    path = sample_dir / "memories/personal/food/likes-mangoes.md"
    before = path.read_bytes()
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    [pid] = [p["id"] for p in pending(cli, sample_dir) if p["targets"][0]["id"] == LIKES_MANGOES]
    result = cli(*v(sample_dir), "review", "decline", pid, "--note", "I still like them")
    assert result.code == 0, result.err
    assert path.read_bytes() == before
    assert subjects(sample_dir)[0] == f"Decline {pid}: retire Likes mangoes"
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    assert LIKES_MANGOES not in {p["targets"][0]["id"] for p in pending(cli, sample_dir)}
    # A new trigger (a newer statement) is a new proposal.
    write_note(
        sample_dir,
        "memories/personal/food/off-mangoes-again.md",
        "mango00002",
        "Off mangoes again",
        subject="user",
        predicate="dislikes",
        value="mangoes",
        created="2026-11-28T10:00:00Z",
    )
    report = cli(*v(sample_dir), "check", "--now", "2026-11-29", "--json").json()
    assert [(p["targets"], p["origin"]["ref"]) for p in report["proposed"]] == [
        ([LIKES_MANGOES], "mango00002")
    ]


def test_approving_a_decided_proposal_explains_its_state(sample_dir, cli):
    pid = cli(*v(sample_dir), "propose", "retire", NEOVIM, "--reason", "Helix").out.strip()
    cli(*v(sample_dir), "review", "decline", pid, "--note", "not yet")
    again = cli(*v(sample_dir), "review", "approve", pid)
    assert again.code == 1
    assert f"{pid} was already declined on " in again.err
    assert "(not yet)" in again.err and f"memoryctl review undo {pid} reopens it" in again.err
    assert fm(sample_dir, cli, NEOVIM)["status"] == "active"


def test_approve_all_of_one_origin_leaves_the_others_pending(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    result = cli(
        *v(sample_dir), "review", "approve", "--all", "--origin", "rule", "--yes", "--json"
    )
    assert result.code == 0, result.err
    approved = {o["proposal"]["targets"][0] for o in result.json()["approved"]}
    assert approved == {LIKES_MANGOES, OWNS_BIKE, LISBON}
    assert found(pending(cli, sample_dir)) == {
        ("retire", NEOVIM, "explicit"),
        ("retire", DINNER, "expiry"),
        ("needs_review", SIGNING, "anchor"),
    }
    retired = {m["id"] for m in cli(*v(sample_dir), "list", "--status", "retired", "--json").json()}
    assert retired == {LIKES_MANGOES, OWNS_BIKE, LISBON}
    assert status(sample_dir) == ""


def test_origin_given_before_the_action_limits_it_as_after_it(sample_dir, cli):
    """`memoryctl review --help` offers --origin on `review` itself: named before the
    action, it limits approve --all (and the list) just as it does after the action."""
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    result = cli(
        *v(sample_dir), "review", "--origin", "expiry", "approve", "--all", "--yes", "--json"
    )
    assert result.code == 0, result.err
    assert [o["proposal"]["targets"][0] for o in result.json()["approved"]] == [DINNER]
    listed = cli(*v(sample_dir), "review", "--origin", "rule", "list", "--json").json()
    assert found(listed["proposals"]) == {
        ("retire", LIKES_MANGOES, "rule"),
        ("retire", OWNS_BIKE, "rule"),
        ("retire", LISBON, "rule"),
    }
    assert len(pending(cli, sample_dir)) == 5
    everything = cli(*v(sample_dir), "review", "--state", "all", "list", "--json").json()
    assert len(everything["proposals"]) == 6


def test_review_show_gives_the_target_the_reason_and_the_change_as_a_diff(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    [pid] = [p["id"] for p in pending(cli, sample_dir) if p["targets"][0]["id"] == LISBON]
    shown = cli(*v(sample_dir), "review", "show", pid)
    assert shown.code == 0, shown.err
    assert f"target:  {LISBON}  Lives in Lisbon" in shown.out
    assert "reason:  lives_in holds one value for user" in shown.out
    assert "-status: active\n+status: retired\n" in shown.out
    data = cli(*v(sample_dir), "review", "show", pid, "--json").json()
    assert "+status: retired" in data["diff"][LISBON]
    assert cli(*v(sample_dir), "show", LISBON, "--json").json()["status"] == "active"


def test_holding_for_review_keeps_the_memory_out_until_it_is_confirmed(sample_dir, cli):
    pid = cli(
        *v(sample_dir), "propose", "review", "kb8hsavyr7", "--reason", "moved to Porto"
    ).out.strip()
    result = cli(*v(sample_dir), "review", "approve", pid)
    assert result.code == 0, result.err
    assert "is pinned" in result.err  # the timezone note is a pin
    memory = fm(sample_dir, cli, "kb8hsavyr7")
    assert memory["status"] == "needs_review"
    confirmed = cli(*v(sample_dir), "confirm", "kb8hsavyr7", "--note", "still Lisbon time")
    assert confirmed.code == 0, confirmed.err
    memory = fm(sample_dir, cli, "kb8hsavyr7")
    assert memory["status"] == "active"
    assert memory["checked"] > "2026-06-02"
    text = (sample_dir / memory["path"]).read_text()
    assert "needs_review:" not in text
    log = cli(*v(sample_dir), "review", "log", "--json").json()
    assert sorted(e["action"] for e in log) == ["confirm", "needs_review"]


def test_a_proposal_for_a_pinned_memory_says_so_at_the_moment_of_decision(sample_dir, cli):
    pid = cli(*v(sample_dir), "propose", "retire", PEANUTS, "--reason", "test").out.strip()
    listed = cli(*v(sample_dir), "review")
    assert "targets a pinned memory" in listed.out
    declined = cli(*v(sample_dir), "review", "decline", pid)
    assert "is pinned: it stays as it is" in declined.err
    cli(*v(sample_dir), "review", "undo", pid)
    result = cli(*v(sample_dir), "review", "approve", pid)
    assert result.code == 0
    assert f"note: {PEANUTS} (Severe peanut allergy) is pinned" in result.err
    assert "left out of the agent's context" in result.err


# --- undo ---------------------------------------------------------------------------------


def test_undo_reverses_an_approval_and_reopens_the_proposal(sample_dir, cli):
    path = sample_dir / "memories/work/preferences/editor-neovim.md"
    before = path.read_text()
    pid = cli(*v(sample_dir), "propose", "retire", NEOVIM, "--reason", "Helix").out.strip()
    cli(*v(sample_dir), "review", "approve", pid)
    result = cli(*v(sample_dir), "review", "undo", pid)
    assert result.code == 0, result.err
    assert path.read_text() == before
    assert pid in [p["id"] for p in pending(cli, sample_dir)]
    assert subjects(sample_dir)[0] == f"Undo {pid}: retire Editor: Neovim"
    # Declined, then undone: pending again; a pending one has nothing to undo.
    cli(*v(sample_dir), "review", "decline", pid)
    assert cli(*v(sample_dir), "review", "undo", pid).code == 0
    nothing = cli(*v(sample_dir), "review", "undo", pid)
    assert nothing.code == 1 and "no decision to undo" in nothing.err
    log = cli(*v(sample_dir), "review", "log", "--json").json()
    states = [e["decision"] for e in log if e["proposal"] == pid]
    assert states == ["reopened", "declined", "reopened", "approved"]


def test_undoing_a_direct_retirement_restores_the_memory_and_withdraws_it(sample_dir, cli):
    result = cli(*v(sample_dir), "retire", NEOVIM, "--reason", "Helix", "--json").json()
    record = result["proposal"]["id"]
    assert result["proposal"]["origin"] == {"kind": "user", "ref": "direct"}
    assert cli(*v(sample_dir), "review", "undo", record).code == 0
    assert fm(sample_dir, cli, NEOVIM)["status"] == "active"
    assert pending(cli, sample_dir, "--origin", "user") == []
    states = cli(*v(sample_dir), "review", "--state", "withdrawn", "--json").json()
    withdrawn = [p["id"] for p in states["proposals"] if p["origin"]["kind"] == "user"]
    assert withdrawn == [record]
    again = cli(*v(sample_dir), "review", "undo", record)
    assert again.code == 1 and "run the command again" in again.err


# --- direct decisions and the audit -------------------------------------------------------


def test_retire_restore_and_confirm_are_decisions_recorded_and_committed(sample_dir, cli):
    retired = cli(*v(sample_dir), "retire", NEOVIM, "--reason", "switched to Helix")
    assert retired.code == 0, retired.err
    assert fm(sample_dir, cli, NEOVIM)["status"] == "retired"
    assert subjects(sample_dir)[0] == "Retire Editor: Neovim"
    audit = cli(*v(sample_dir), "retired", "--json").json()
    assert [(r["id"], r["reason"]) for r in audit] == [(NEOVIM, "switched to Helix")]
    assert audit[0]["decision"]["origin"] == {"kind": "user", "ref": "direct"}
    again = cli(*v(sample_dir), "retire", NEOVIM, "--reason", "twice")
    assert again.code == 1 and "already retired" in again.err
    restored = cli(*v(sample_dir), "restore", NEOVIM)
    assert restored.code == 0, restored.err
    assert fm(sample_dir, cli, NEOVIM)["status"] == "active"
    assert cli(*v(sample_dir), "retired", "--json").json() == []
    assert "is not retired" in cli(*v(sample_dir), "restore", NEOVIM).err
    log = cli(*v(sample_dir), "review", "log", "--json").json()
    # The direct retirement also withdrew the pending proposal from Helix's `retires`.
    assert sorted((e["action"], e["decision"]) for e in log) == [
        ("restore", "approved"),
        ("retire", "approved"),
        ("retire", "withdrawn"),
    ]
    assert "--reason" in cli(*v(sample_dir), "retire", NEOVIM).err
    assert status(sample_dir) == ""


def test_retired_lists_every_retirement_with_its_reason_and_decision(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    cli(
        *v(sample_dir),
        "review",
        "approve",
        "--all",
        "--origin",
        "expiry",
        "--yes",
        "--note",
        "over",
    )
    # A memory retired by hand in an editor is listed too, with no decision on record.
    path = sample_dir / "memories/personal/preferences/coffee.md"
    path.write_text(path.read_text().replace("status: active", "status: retired"))
    result = cli(*v(sample_dir), "retired")
    assert result.code == 0, result.err
    assert f"{DINNER}  " in result.out and "why: plan expired on 2026-11-21" in result.out
    assert "(expiry scarjk0h83), approved" in result.out and ": over" in result.out
    assert "retired by hand" in result.out
    since = cli(*v(sample_dir), "retired", "--since", "2026-01-01", "--json").json()
    assert [r["id"] for r in since] == [DINNER]
    assert cli(*v(sample_dir), "retired", "--since", "2999-01-01", "--json").json() == []
    assert cli(*v(sample_dir), "retired", "--since", "soon").code == 2  # a usage error


# --- bad input ----------------------------------------------------------------------------


def test_a_malformed_proposal_is_reported_with_its_path_and_never_deleted(sample_dir, cli):
    folder = sample_dir / "proposals"
    folder.mkdir()
    bad = folder / "broken.md"
    bad.write_text("---\naction: retire\ntargets: [unclosed\n---\n")
    wrong = folder / "wrong-action.md"
    wrong.write_text(f"---\naction: delete\ntargets: [{NEOVIM}]\n---\n")
    cli(*v(sample_dir), "propose", "retire", NEOVIM, "--reason", "Helix")
    result = cli(*v(sample_dir), "review")
    assert result.code == 0
    assert "warning: proposals/broken.md: malformed YAML frontmatter" in result.err
    assert "warning: proposals/wrong-action.md: action: 'delete' is not one of" in result.err
    assert len(pending(cli, sample_dir, "--origin", "user")) == 1
    assert bad.read_text() == "---\naction: retire\ntargets: [unclosed\n---\n"
    assert cli(*v(sample_dir), "check", "--now", "2026-11-29").code == 0
    assert bad.exists() and wrong.exists()
    doctor = cli(*v(sample_dir), "doctor")
    assert "error: proposals/broken.md: malformed YAML frontmatter" in doctor.out
    shown = cli(*v(sample_dir), "review", "show", "broken")
    assert shown.code == 1 and "proposals/broken.md cannot be read" in shown.err


def test_a_target_changed_since_proposed_is_flagged_and_approval_waits(sample_dir, cli):
    pid = cli(*v(sample_dir), "propose", "retire", NEOVIM, "--reason", "Helix").out.strip()
    path = sample_dir / "memories/work/preferences/editor-neovim.md"
    path.write_text(path.read_text() + "\nAlso: I still use it for git commit messages.\n")
    listed = cli(*v(sample_dir), "review")
    assert "! changed since proposed: review again" in listed.out
    refused = cli(*v(sample_dir), "review", "approve", pid)
    assert refused.code == 1 and "changed since proposed: review again" in refused.err
    assert fm(sample_dir, cli, NEOVIM)["status"] == "active"
    forced = cli(*v(sample_dir), "review", "approve", pid, "--force")
    assert forced.code == 0, forced.err
    assert "git commit messages" in path.read_text()  # the edit was kept


def test_a_proposal_whose_target_is_gone_is_shown_unresolved_never_dropped(sample_dir, cli):
    pid = cli(*v(sample_dir), "propose", "retire", NEOVIM, "--reason", "Helix").out.strip()
    (sample_dir / "memories/work/preferences/editor-neovim.md").unlink()
    listed = cli(*v(sample_dir), "review")
    assert f"unresolved: {NEOVIM} no longer exists" in listed.out
    [mine] = [p for p in pending(cli, sample_dir) if p["id"] == pid]
    assert mine["unresolved"] is True
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    assert pid in {p["id"] for p in pending(cli, sample_dir)}
    refused = cli(*v(sample_dir), "review", "approve", pid)
    assert refused.code == 1 and "unresolved" in refused.err
    assert "unresolved" in cli(*v(sample_dir), "doctor").out
    assert cli(*v(sample_dir), "review", "decline", pid).code == 0


def test_proposals_are_never_memories_even_when_ignore_leaves_them_out(sample_dir, cli):
    config = sample_dir / "memoryctl.toml"
    config.write_text(config.read_text().replace('"proposals/", ', ""))
    before = len(cli(*v(sample_dir), "list", "--json").json())
    cli(*v(sample_dir), "propose", "retire", NEOVIM, "--reason", "Helix")
    assert len(cli(*v(sample_dir), "list", "--json").json()) == before
    assert cli(*v(sample_dir), "doctor").code == 0


def test_a_check_withdraws_what_it_no_longer_finds(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    [pid] = [p["id"] for p in pending(cli, sample_dir) if p["targets"][0]["id"] == DINNER]
    path = sample_dir / "memories/personal/plans/dinner-with-sam.md"
    path.write_text(path.read_text().replace("expires: 2026-11-21", "expires: 2026-12-21"))
    report = cli(*v(sample_dir), "check", "--now", "2026-11-29", "--json").json()
    assert [p["id"] for p in report["withdrawn"]] == [pid]
    assert DINNER not in {p["targets"][0]["id"] for p in pending(cli, sample_dir)}
    # Retiring a memory another way withdraws the proposals it makes moot.
    [rule] = [p["id"] for p in pending(cli, sample_dir) if p["targets"][0]["id"] == LISBON]
    result = cli(*v(sample_dir), "retire", LISBON, "--reason", "moved", "--json").json()
    assert result["withdrawn"] == [rule]


def test_usage_errors_are_clear(sample_dir, cli):
    assert (
        "give proposal ids or --all" in cli(*v(sample_dir), "review", "approve", "x", "--all").err
    )
    assert "give a proposal id" in cli(*v(sample_dir), "review", "approve").err
    missing = cli(*v(sample_dir), "review", "show", "zzzz")
    assert missing.code == 1 and "no proposal with id 'zzzz'" in missing.err
    assert cli(*v(sample_dir), "check", "--now", "soon").code == 2  # a usage error
    assert cli(*v(sample_dir), "propose", "delete", NEOVIM).code == 2


def test_predicates_lists_the_registry(sample_dir, cli):
    rows = {r["name"]: r for r in cli(*v(sample_dir), "predicates", "--json").json()}
    assert rows["lives_in"]["cardinality"] == "single"
    assert "dislikes" in rows["likes"]["excludes"]


def test_note_text_helper_writes_readable_memories(vault_dir, cli):
    text = note_text("abcdefghjk", "A note", tags=["x", "y"])
    assert "tags: [x, y]" in text


# --- deciding every pending proposal at once -----------------------------------------------


def _at_a_terminal(root: Path, *args: str, answer: str) -> tuple[int, str]:
    """Run `memoryctl ARGS` as its own process on a terminal (a pseudo-terminal), type
    `answer` and Enter when it asks, and return its exit code and all it wrote."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "memoryctl", "--vault", str(root), *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    written = b""
    answered = False
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the process ended and closed the terminal
            break
        if not chunk:
            break
        written += chunk
        if not answered and b"? [y/N]" in written:
            os.write(leader, answer.encode() + b"\n")
            answered = True
    os.close(leader)
    return process.wait(timeout=60), written.decode(errors="replace")


def test_approve_all_off_a_terminal_needs_yes_and_decides_nothing_without_it(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    before = pending(cli, sample_dir)
    for command in ("approve", "decline"):
        refused = cli(*v(sample_dir), "review", command, "--all", "--origin", "rule")
        assert refused.code == 2, command
        assert f"review {command} --all decides every pending proposal at once" in refused.err
        assert "add --yes" in refused.err
        assert refused.out == ""
    assert pending(cli, sample_dir) == before
    assert status(sample_dir) == ""


def test_decline_all_of_one_origin_declines_each_and_touches_no_memory(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    memories = {p: p.read_bytes() for p in (sample_dir / "memories").rglob("*.md")}
    result = cli(
        *v(sample_dir), "review", "decline", "--all", "--origin", "rule", "--yes", "--note", "no"
    )
    assert result.code == 0, result.err
    assert result.out.count("Declined ") == 3
    assert {p["targets"][0]["id"] for p in pending(cli, sample_dir)} == {NEOVIM, DINNER, SIGNING}
    declined = pending(cli, sample_dir, "--state", "declined")
    assert {p["targets"][0]["id"] for p in declined} == {LIKES_MANGOES, OWNS_BIKE, LISBON}
    assert {p: p.read_bytes() for p in (sample_dir / "memories").rglob("*.md")} == memories
    assert status(sample_dir) == ""
    again = cli(*v(sample_dir), "review", "decline", "--all", "--origin", "rule", "--yes")
    assert again.code == 0 and again.out == "No pending proposals from rule.\n"


def test_approve_all_on_a_terminal_asks_and_a_no_leaves_every_proposal_pending(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    before = pending(cli, sample_dir)
    code, shown = _at_a_terminal(
        sample_dir, "review", "approve", "--all", "--origin", "rule", answer="n"
    )
    assert code == 1
    assert "3 pending proposals from rule:" in shown
    assert f"{LISBON} Lives in Lisbon" in shown
    assert "Approve all 3? [y/N]" in shown and "nothing approved" in shown
    assert pending(cli, sample_dir) == before


def test_decline_all_on_a_terminal_asks_and_a_yes_declines_them(sample_dir, cli):
    cli(*v(sample_dir), "check", "--now", "2026-11-29")
    code, shown = _at_a_terminal(
        sample_dir, "review", "decline", "--all", "--origin", "expiry", answer="y"
    )
    assert code == 0, shown
    assert "Decline all 1? [y/N]" in shown
    assert "Declined " in shown
    assert DINNER not in {p["targets"][0]["id"] for p in pending(cli, sample_dir)}
    assert fm(sample_dir, cli, DINNER)["status"] == "active"
