"""memoryctl sync: two devices and a bare remote on local disk, driven through the CLI."""

from __future__ import annotations

import json

import pytest

from memoryctl.storage.vault import Vault
from tests.sync_support import Devices, both_change_many, git, make_devices


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


def no_markers(device) -> None:
    for path in device.rglob("*.md"):
        if ".git" not in path.parts:
            text = path.read_text(encoding="utf-8", errors="replace")
            assert "<<<<<<<" not in text and ">>>>>>>" not in text, path


def test_a_memory_added_on_the_laptop_reaches_the_desktop(devices):
    memory_id = devices.add(devices.laptop, "Buy oat milk", "--title", "Milk")
    sent = devices.sync(devices.laptop, "--json")
    assert sent.code == 0, sent.err
    assert sent.json()["sent"] >= 1
    received = devices.sync(devices.desktop)
    assert received.code == 0, received.err
    shown = devices.run(devices.desktop, "--json", "show", memory_id)
    assert shown.code == 0 and shown.json()["title"] == "Milk"


def test_sync_with_nothing_to_do_says_so_and_changes_nothing(devices):
    head = git(devices.laptop, "rev-parse", "HEAD")
    result = devices.sync(devices.laptop)
    assert result.code == 0
    assert "Up to date" in result.out
    assert git(devices.laptop, "rev-parse", "HEAD") == head


def test_a_pin_on_one_device_and_a_retirement_on_the_other_both_hold(devices):
    memory_id = devices.on_both("Buy oat milk", "Milk")
    assert devices.run(devices.laptop, "pin", memory_id).code == 0
    assert devices.run(devices.desktop, "retire", memory_id, "--reason", "moved").code == 0
    assert devices.sync(devices.laptop).code == 0
    result = devices.sync(devices.desktop, "--json")
    assert result.code == 0, result.err
    assert result.json()["conflicts"] == []
    for device in (devices.desktop,):
        shown = devices.run(device, "--json", "show", memory_id).json()
        assert shown["pinned"] is True and shown["status"] == "retired"
    assert devices.sync(devices.laptop).code == 0
    shown = devices.run(devices.laptop, "--json", "show", memory_id).json()
    assert shown["pinned"] is True and shown["status"] == "retired"
    no_markers(devices.laptop)


def test_the_same_line_changed_on_both_devices_becomes_a_conflict_proposal(devices):
    memory_id, laptop_file, desktop_file = devices.same_line_changed()
    result = devices.sync(devices.desktop, "--json")
    assert result.code == 0, result.err
    [conflict] = result.json()["conflicts"]
    assert conflict["path"] == str(desktop_file.relative_to(devices.desktop))
    # The file keeps this device's version, with no conflict markers.
    assert "Buy rice milk" in desktop_file.read_text()
    no_markers(devices.desktop)
    # The other version is in git and in a pending proposal.
    assert "Buy soy milk" in git(devices.desktop, "log", "-p", "--all")
    queue = devices.run(devices.desktop, "--json", "review", "list").json()
    [proposal] = [p for p in queue["proposals"] if p["action"] == "conflict"]
    assert [t["id"] for t in proposal["targets"]] == [memory_id]
    assert "conflict from sync" in proposal["reason"]
    assert "Buy soy milk" in proposal["body"]
    # Showing it gives both versions and their diff.
    shown = devices.run(devices.desktop, "--json", "review", "show", proposal["id"]).json()
    [diff] = shown["diff"].values()
    assert "-Buy rice milk" in diff and "+Buy soy milk" in diff
    # The laptop receives the decision to make, with the same file.
    assert devices.sync(devices.laptop).code == 0
    assert laptop_file.read_bytes() == desktop_file.read_bytes()
    queue = devices.run(devices.laptop, "--json", "review", "list").json()
    assert proposal["id"] in [p["id"] for p in queue["proposals"]]


def test_taking_the_other_version_of_a_conflict_writes_it_and_declining_keeps_this_one(devices):
    one = devices.add(devices.laptop, "Buy oat milk", "--title", "Milk")
    two = devices.add(devices.laptop, "Walk at noon", "--title", "Walk")
    devices.sync(devices.laptop)
    devices.sync(devices.desktop)
    for memory_id, old, laptop_text, desktop_text in (
        (one, "oat", "soy", "rice"),
        (two, "noon", "dawn", "dusk"),
    ):
        path = devices.path(devices.laptop, memory_id)
        path.write_text(path.read_text().replace(old, laptop_text))
        path = devices.path(devices.desktop, memory_id)
        path.write_text(path.read_text().replace(old, desktop_text))
    devices.sync(devices.laptop, "--include-edits")
    result = devices.sync(devices.desktop, "--json", "--include-edits")
    by_path = {c["path"]: c["proposal"] for c in result.json()["conflicts"]}
    first = by_path[str(devices.path(devices.desktop, one).relative_to(devices.desktop))]
    second = by_path[str(devices.path(devices.desktop, two).relative_to(devices.desktop))]
    assert devices.run(devices.desktop, "review", "approve", first).code == 0
    assert "Buy soy milk" in devices.path(devices.desktop, one).read_text()
    assert devices.run(devices.desktop, "review", "decline", second).code == 0
    assert "Walk at dusk" in devices.path(devices.desktop, two).read_text()
    # A person or an agent cannot propose a conflict by hand.
    refused = devices.run(devices.desktop, "propose", "conflict", one, "--reason", "x")
    assert refused.code == 2
    assert devices.sync(devices.desktop).code == 0
    assert devices.sync(devices.laptop).code == 0
    assert "Buy soy milk" in devices.path(devices.laptop, one).read_text()


def test_two_devices_adding_memories_with_the_same_title_keep_both(devices):
    laptop_id = devices.add(devices.laptop, "Call the bank about the card", "--title", "Bank")
    desktop_id = devices.add(devices.desktop, "Bank opens at nine", "--title", "Bank")
    assert devices.sync(devices.laptop).code == 0
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert "kept as" in result.out
    for memory_id in (laptop_id, desktop_id):
        assert devices.run(devices.desktop, "show", memory_id).code == 0
    no_markers(devices.desktop)


def test_decisions_made_on_two_devices_never_collide(devices):
    one = devices.add(devices.laptop, "Tea is green", "--title", "Tea")
    two = devices.add(devices.laptop, "Coffee is black", "--title", "Coffee")
    devices.sync(devices.laptop)
    devices.sync(devices.desktop)
    assert devices.run(devices.laptop, "retire", one, "--reason", "no longer").code == 0
    assert devices.run(devices.desktop, "retire", two, "--reason", "no longer").code == 0
    assert devices.run(devices.desktop, "confirm", one).code == 0
    assert devices.sync(devices.laptop).code == 0
    result = devices.sync(devices.desktop, "--json")
    assert result.code == 0, result.err
    assert result.json()["conflicts"] == []
    log = devices.run(devices.desktop, "--json", "review", "log").json()
    assert len({entry["proposal"] for entry in log}) == 3


def test_offline_gives_one_line_and_exit_1_and_keeps_local_commits(devices, tmp_path):
    devices.add(devices.laptop, "Offline note", "--title", "Offline")
    head = git(devices.laptop, "rev-parse", "HEAD")
    git(devices.laptop, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    result = devices.sync(devices.laptop)
    assert result.code == 1
    assert result.err.count("\n") == 1 and "could not reach origin" in result.err
    assert git(devices.laptop, "rev-parse", "HEAD") == head


def test_a_remote_that_refuses_the_push_is_reported_and_commits_stay(devices):
    hook = devices.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n")
    hook.chmod(0o755)
    devices.add(devices.laptop, "Refused note", "--title", "Refused")
    head = git(devices.laptop, "rev-parse", "HEAD")
    result = devices.sync(devices.laptop)
    assert result.code == 1
    assert result.err.count("\n") == 1 and "refused" in result.err
    assert git(devices.laptop, "rev-parse", "HEAD") == head
    hook.unlink()
    assert devices.sync(devices.laptop).code == 0
    assert git(devices.remote, "rev-parse", "main") == head


def test_a_remote_that_is_not_a_memoryctl_vault_is_refused(devices, tmp_path):
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(other))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(other), str(work))
    (work / "notes.txt").write_text("not a vault\n")
    git(work, "add", ".")
    git(work, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "x")
    git(work, "push", "-q", "origin", "main")
    git(devices.laptop, "remote", "add", "other", str(other))
    head = git(devices.laptop, "rev-parse", "HEAD")
    result = devices.sync(devices.laptop, "--remote", "other")
    assert result.code == 1
    assert "is not a memoryctl vault" in result.err
    assert git(devices.laptop, "rev-parse", "HEAD") == head


def test_a_vault_made_on_its_own_under_another_branch_name_is_not_pushed_beside_the_remotes(
    devices, tmp_path
):
    device = tmp_path / "tablet"
    devices.on(device)
    assert devices.cli("init", str(device)).code == 0
    git(device, "checkout", "-q", "-B", "master")
    git(device, "remote", "add", "origin", str(devices.remote))
    devices.add(device, "A tablet's own fact", "--title", "Tablet")
    result = devices.sync(device)
    assert result.code == 1
    [line] = result.err.strip().splitlines()
    assert "origin/main shares no history with this vault" in line and "nothing changed" in line
    assert git(devices.remote, "branch", "--format=%(refname:short)").split() == ["main"]


def test_a_new_branch_of_the_same_vault_is_pushed_as_a_branch(devices):
    git(devices.desktop, "checkout", "-q", "-b", "trip")
    devices.add(devices.desktop, "Pack the tent", "--title", "Tent")
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert "trip" in git(devices.remote, "branch", "--format=%(refname:short)").split()


def test_a_rewritten_remote_history_is_refused_unless_force_with_lease(devices):
    devices.add(devices.laptop, "Kept note", "--title", "Kept")
    assert devices.sync(devices.laptop).code == 0
    devices.sync(devices.desktop)
    # The desktop rewrites the remote's history by hand.
    git(devices.desktop, "reset", "-q", "--hard", "HEAD~1")
    git(devices.desktop, "push", "-q", "--force", "origin", "main")
    rewritten = git(devices.remote, "rev-parse", "main")
    head = git(devices.laptop, "rev-parse", "HEAD")
    refused = devices.sync(devices.laptop)
    assert refused.code == 1
    assert "rewritten" in refused.err and "--force-with-lease" in refused.err
    assert git(devices.laptop, "rev-parse", "HEAD") == head
    forced = devices.sync(devices.laptop, "--force-with-lease")
    assert forced.code == 0, forced.err
    assert git(devices.remote, "rev-parse", "main") == head
    kept = git(devices.laptop, "for-each-ref", "--format=%(objectname)", "refs/memoryctl/")
    assert kept.strip() == rewritten.strip()


def test_a_device_missing_the_merge_driver_is_told_and_still_merges_by_key(devices):
    memory_id = devices.on_both("Buy oat milk", "Milk")
    git(devices.desktop, "config", "--remove-section", "merge.memoryctl")
    assert devices.run(devices.laptop, "pin", memory_id).code == 0
    assert devices.run(devices.desktop, "retire", memory_id, "--reason", "gone").code == 0
    devices.sync(devices.laptop)
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert "merge driver was missing" in result.out
    shown = devices.run(devices.desktop, "--json", "show", memory_id).json()
    assert shown["pinned"] is True and shown["status"] == "retired"
    assert git(devices.desktop, "config", "merge.memoryctl.driver").strip()


def test_a_conflict_from_a_git_pull_by_hand_names_the_other_devices_commit_after_more_commits(
    devices,
):
    memory_id, _, desktop_file = devices.same_line_changed()
    laptops = git(devices.remote, "rev-parse", "main").strip()
    devices.on(devices.desktop)
    git(devices.desktop, "pull", "-q", "--no-rebase", "--no-edit")
    (devices.desktop / "mine.txt").write_text("a commit of the person's after the pull\n")
    git(devices.desktop, "add", "mine.txt")
    git(devices.desktop, "commit", "-q", "-m", "Mine")
    result = devices.sync(devices.desktop, "--json")
    assert result.code == 0, result.err
    [conflict] = result.json()["conflicts"]
    shown = devices.run(devices.desktop, "--json", "review", "show", conflict["proposal"]).json()
    assert shown["origin"] == {"kind": "sync", "ref": laptops[:12]}
    assert [t["id"] for t in shown["targets"]] == [memory_id]
    assert "Buy rice milk" in desktop_file.read_text()


def test_a_commit_hook_that_refuses_sync_s_merge_leaves_nothing_half_merged(devices):
    _, _, desktop_file = devices.same_line_changed()
    hook = devices.desktop / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(devices.desktop, "rev-parse", "HEAD")
    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert "no commits today" in line and "nothing changed" in line
    assert git(devices.desktop, "rev-parse", "HEAD") == head
    assert not (devices.desktop / ".git" / "MERGE_HEAD").exists()
    assert git(devices.desktop, "status", "--porcelain") == ""
    assert "Buy rice milk" in desktop_file.read_text()
    hook.unlink()
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert "A sync stopped" not in result.out and "Conflict in" in result.out


def test_a_rename_against_a_delete_names_both_paths_and_deletes_nothing(devices):
    memory_id = devices.on_both("Buy oat milk", "Milk")
    old = devices.path(devices.laptop, memory_id).relative_to(devices.laptop)
    new = old.with_name("groceries.md")
    git(devices.laptop, "mv", str(old), str(new))
    git(devices.laptop, "commit", "-q", "-m", "Rename milk")
    devices.sync(devices.laptop)
    git(devices.desktop, "rm", "-q", str(old))
    git(devices.desktop, "commit", "-q", "-m", "Drop milk")
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert str(old) in result.out and str(new) in result.out
    assert (devices.desktop / new).exists()
    assert devices.run(devices.desktop, "show", memory_id).code == 0


def test_after_sync_the_index_is_exact(devices, tmp_path):
    for n in range(5):
        devices.add(devices.laptop, f"Fact number {n} about owls", "--title", f"Owl {n}")
    devices.sync(devices.laptop)
    assert devices.sync(devices.desktop).code == 0
    listed = devices.run(devices.desktop, "--json", "search", "owls").json()
    assert len(listed) == 5
    vault = Vault(devices.desktop)
    try:
        report = vault.index.sync()
    finally:
        vault.close()
    assert (report.added, report.changed, report.removed) == (0, 0, 0)


def test_sync_json_reports_state(devices):
    result = devices.sync(devices.laptop, "--json")
    data = json.loads(result.out)
    assert data["remote"] == "origin" and data["branch"] == "main"


def test_sync_merges_around_your_uncommitted_edit_and_never_commits_it(devices):
    mine = devices.on_both("Buy oat milk", "Milk")
    path = devices.path(devices.desktop, mine)
    relpath = str(path.relative_to(devices.desktop))
    path.write_text(path.read_text().replace("oat", "goat"))
    other = devices.add(devices.laptop, "Walk at noon", "--title", "Walk")
    devices.sync(devices.laptop)
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert devices.run(devices.desktop, "show", other).code == 0
    # The edit stays in the file, uncommitted, and never leaves the device.
    assert "Buy goat milk" in path.read_text()
    assert git(devices.desktop, "status", "--porcelain").split() == ["M", relpath]
    assert "goat" not in git(devices.remote, "log", "-p", "--all")


def test_sync_stops_naming_the_file_when_the_other_device_changed_what_you_are_editing(devices):
    memory_id = devices.on_both("Buy oat milk", "Milk")
    assert devices.run(devices.laptop, "pin", memory_id).code == 0
    devices.sync(devices.laptop)
    path = devices.path(devices.desktop, memory_id)
    relpath = str(path.relative_to(devices.desktop))
    path.write_text(path.read_text().replace("oat", "goat"))
    head = git(devices.desktop, "rev-parse", "HEAD")
    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert relpath in line and "--include-edits" in line
    # Nothing is lost: the edit is in the file, and nothing was merged or committed.
    assert "Buy goat milk" in path.read_text()
    assert git(devices.desktop, "rev-parse", "HEAD") == head
    # Asked to, sync commits the edit as the person's own, and both changes hold.
    result = devices.sync(devices.desktop, "--include-edits")
    assert result.code == 0, result.err
    shown = devices.run(devices.desktop, "--json", "show", memory_id).json()
    assert shown["pinned"] is True and "Buy goat milk" in shown["body"]
    subjects = git(devices.remote, "log", "--format=%s", "main")
    assert "Your own edits to 1 file, committed as you asked" in subjects
    no_markers(devices.desktop)


def test_sync_stops_when_something_is_staged_and_a_merge_is_needed(devices):
    memory_id = devices.on_both("Buy oat milk", "Milk")
    devices.add(devices.laptop, "Walk at noon", "--title", "Walk")
    devices.sync(devices.laptop)
    assert devices.run(devices.desktop, "pin", memory_id).code == 0
    (devices.desktop / "mine.txt").write_text("staged by the person\n")
    git(devices.desktop, "add", "mine.txt")
    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert "mine.txt" in line and "staged" in line
    assert git(devices.desktop, "diff", "--cached", "--name-only").split() == ["mine.txt"]


def test_many_conflicts_name_the_first_ten_and_say_where_the_rest_are_listed(devices):
    both_change_many(devices, 14)
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert len([line for line in lines if line.startswith("Conflict in ")]) == 10
    assert (
        "…and 4 more conflicts like these to decide; memoryctl review --origin sync lists "
        "them all." in lines
    )
    listed = devices.run(devices.desktop, "--json", "review", "--origin", "sync").json()
    assert len(listed["proposals"]) == 14


def test_sync_json_lists_every_conflict_however_many(devices):
    both_change_many(devices, 14)
    result = devices.sync(devices.desktop, "--json")
    assert result.code == 0, result.err
    conflicts = result.json()["conflicts"]
    assert len(conflicts) == 14 and all(c["proposal"] for c in conflicts)
