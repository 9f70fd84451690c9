"""Files in a vault that are not memories (its README, notes in a folder the vault
ignores) are the person's: sync and a merge made by hand merge them as git merges text,
never key by key and never by keeping one device's lines."""

from __future__ import annotations

import pytest

from tests.sync_support import Devices, git, make_devices


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


def change_line(device, relpath: str, old: str, new: str, message: str) -> None:
    path = device / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(text.replace(old, new) if old else new, encoding="utf-8")
    git(device, "add", relpath)
    git(device, "commit", "-q", "-m", message)


def both_change_the_first_line(devices: Devices, relpath: str) -> None:
    """The laptop's "# Laptop vault" is on the remote; the desktop's "# Desktop vault"
    is committed on the desktop and not yet synced."""
    change_line(devices.laptop, relpath, "# Memory vault", "# Laptop vault", "Laptop title")
    assert devices.sync(devices.laptop).code == 0
    change_line(devices.desktop, relpath, "# Memory vault", "# Desktop vault", "Desktop title")


def conflicts_recorded(device) -> list[str]:
    folder = device / ".git" / "memoryctl" / "conflicts"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_git_pull_by_hand_leaves_both_devices_lines_of_the_readme_between_markers(devices):
    memory_id = devices.on_both("Buy oat milk", "Milk")
    assert devices.run(devices.laptop, "pin", memory_id).code == 0
    assert devices.run(devices.desktop, "retire", memory_id, "--reason", "moved").code == 0
    both_change_the_first_line(devices, "README.md")
    devices.on(devices.desktop)
    result = git(devices.desktop, "pull", "--no-rebase", "--no-edit", check=False)
    assert "CONFLICT (content): Merge conflict in README.md" in result
    readme = (devices.desktop / "README.md").read_text(encoding="utf-8")
    assert "<<<<<<<" in readme and "# Desktop vault" in readme and "# Laptop vault" in readme
    assert git(devices.desktop, "diff", "--name-only", "--diff-filter=U").split() == ["README.md"]
    # The memory in the same merge still merges key by key, with nothing to decide.
    memory = devices.path(devices.desktop, memory_id).read_text(encoding="utf-8")
    assert "pinned: true" in memory and "status: retired" in memory
    assert conflicts_recorded(devices.desktop) == []


def test_a_note_in_a_folder_the_vault_ignores_merges_by_hand_like_any_text(devices):
    settings = devices.laptop / "memoryctl.toml"
    change_line(
        devices.laptop,
        "memoryctl.toml",
        'ignore = ["README.md",',
        'ignore = ["drafts/", "README.md",',
        "Drafts are not memories",
    )
    assert 'ignore = ["drafts/"' in settings.read_text(encoding="utf-8")
    change_line(devices.laptop, "drafts/plan.md", "", "# Memory vault\n\nplan\n", "A draft")
    assert devices.sync(devices.laptop).code == 0
    assert devices.sync(devices.desktop).code == 0
    both_change_the_first_line(devices, "drafts/plan.md")
    devices.on(devices.desktop)
    result = git(devices.desktop, "pull", "--no-rebase", "--no-edit", check=False)
    assert "Merge conflict in drafts/plan.md" in result
    draft = (devices.desktop / "drafts" / "plan.md").read_text(encoding="utf-8")
    assert "# Desktop vault" in draft and "# Laptop vault" in draft and ">>>>>>>" in draft
    assert conflicts_recorded(devices.desktop) == []


def test_sync_merges_a_readme_both_devices_changed_on_different_lines(devices):
    change_line(devices.laptop, "README.md", "# Memory vault", "# Laptop vault", "Title")
    assert devices.sync(devices.laptop).code == 0
    change_line(devices.desktop, "README.md", "Settings live", "The settings live", "Settings")
    devices.add(devices.desktop, "Walk at noon", "--title", "Walk")
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    readme = (devices.desktop / "README.md").read_text(encoding="utf-8")
    assert "# Laptop vault" in readme and "The settings live" in readme
    assert "<<<<<<<" not in readme
    assert "README.md" not in result.out  # nothing to report about it


def test_sync_stops_when_both_devices_changed_the_same_lines_of_the_readme_and_says_how_to_merge(
    devices,
):
    both_change_the_first_line(devices, "README.md")
    devices.add(devices.desktop, "Walk at noon", "--title", "Walk")
    head = git(devices.desktop, "rev-parse", "HEAD")
    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert "README.md" in line and "not a memory" in line and "git merge origin/main" in line
    # Nothing changed: no merge in progress, this device's lines, no markers.
    assert git(devices.desktop, "rev-parse", "HEAD") == head
    assert not (devices.desktop / ".git" / "MERGE_HEAD").exists()
    readme = (devices.desktop / "README.md").read_text(encoding="utf-8")
    assert "# Desktop vault" in readme and "<<<<<<<" not in readme
    assert git(devices.desktop, "status", "--porcelain") == ""
    # Done as it says, the merge is the person's, and the next sync sends it.
    git(devices.desktop, "merge", "--no-edit", "origin/main", check=False)
    (devices.desktop / "README.md").write_text(readme.replace("Desktop", "Shared"))
    git(devices.desktop, "commit", "-q", "-a", "--no-edit")
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    remote_readme = git(devices.remote, "show", "main:README.md")
    assert "# Shared vault" in remote_readme and "<<<<<<<" not in remote_readme


def test_an_untracked_file_where_the_remote_adds_one_is_named_untracked_not_an_edit(devices):
    change_line(devices.laptop, "notes.txt", "", "the laptop's list\n", "A list")
    assert devices.sync(devices.laptop).code == 0
    (devices.desktop / "notes.txt").write_text("the desktop's own list\n")
    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert "an untracked file of yours is in the way at notes.txt" in line
    assert "editing" not in line
    # --include-edits commits only memories, so it is not offered for this file.
    assert "Move it aside or commit it, then sync again" in line
    assert "--include-edits" not in line
    assert (devices.desktop / "notes.txt").read_text() == "the desktop's own list\n"


def test_an_untracked_memory_where_the_remote_adds_one_can_be_kept_beside_it(devices):
    memory = "---\nid: tea-laptop\ntitle: Tea\n---\nGreen tea in the morning\n"
    change_line(devices.laptop, "tea.md", "", memory, "Tea")
    assert devices.sync(devices.laptop).code == 0
    mine = "---\nid: tea-desktop\ntitle: Tea\n---\nBlack tea after lunch\n"
    (devices.desktop / "tea.md").write_text(mine)
    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    assert "an untracked file of yours is in the way at tea.md" in stopped.err
    assert "--include-edits" in stopped.err
    result = devices.sync(devices.desktop, "--include-edits")
    assert result.code == 0, result.err
    texts = sorted(p.read_text() for p in devices.desktop.glob("tea*.md"))
    assert len(texts) == 2 and mine in texts


def test_sync_does_not_offer_include_edits_for_a_readme_it_would_not_commit(devices):
    change_line(devices.laptop, "README.md", "# Memory vault", "# Laptop vault", "Title")
    assert devices.sync(devices.laptop).code == 0
    readme = devices.desktop / "README.md"
    readme.write_text(readme.read_text().replace("Settings live", "The settings live"))
    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert "changed 1 file you are editing and have not committed (README.md)" in line
    assert "--include-edits" not in line and "Commit it, then sync again" in line
