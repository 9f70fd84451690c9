"""What git knows about the vault's files stays true through a sync: the remote's
branches as they are now, each file's mode, and which files are sealed (only memories
and proposals, by the vault's own definition, never a template or a README)."""

from __future__ import annotations

import pytest

from tests.sync_support import Devices, git, make_devices


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


def test_a_branch_deleted_on_the_remote_is_gone_here_and_no_longer_in_the_way(devices, tmp_path):
    # Someone pushes an unrelated project to the remote as a branch, then deletes it.
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", "junk", str(other))
    (other / "notes.txt").write_text("not a vault\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "Not a vault")
    git(other, "push", "-q", str(devices.remote), "junk")
    assert devices.sync(devices.desktop).code == 0
    assert "origin/junk" in git(devices.desktop, "branch", "-r")
    git(devices.remote, "branch", "-D", "junk")
    assert devices.sync(devices.desktop).code == 0
    assert "origin/junk" not in git(devices.desktop, "branch", "-r")
    # A new branch of this vault is pushed: the deleted branch no longer says the
    # remote holds something else.
    git(devices.desktop, "checkout", "-q", "-b", "phone")
    devices.add(devices.desktop, "Call the plumber", "--title", "Plumber")
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert "phone" in git(devices.remote, "branch")


def mode(device, relpath: str) -> str:
    return git(device, "ls-files", "-s", "--", relpath).split()[0]


def test_a_file_merged_key_by_key_keeps_its_executable_mode(devices):
    """A note copied from a disk that marks every file executable (a USB stick, a
    Windows share) is committed as 100755; merging it keeps that mode, so git sees no
    change of mode and the working tree stays clean."""
    memory_id = devices.on_both("Buy oat milk", "Milk")
    relpath = str(devices.path(devices.laptop, memory_id).relative_to(devices.laptop))
    (devices.laptop / relpath).chmod(0o755)
    git(devices.laptop, "commit", "-q", "-a", "-m", "Copied from the stick")
    assert devices.sync(devices.laptop).code == 0
    assert devices.sync(devices.desktop).code == 0
    assert mode(devices.desktop, relpath) == "100755"
    # A pin on one device and a retirement on the other: the file merges key by key.
    assert devices.run(devices.laptop, "pin", memory_id).code == 0
    assert devices.sync(devices.laptop).code == 0
    assert devices.run(devices.desktop, "retire", memory_id, "--reason", "moved").code == 0
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    merged = (devices.desktop / relpath).read_text()
    assert "pinned: true" in merged and "status: retired" in merged
    assert mode(devices.desktop, relpath) == "100755"
    assert git(devices.desktop, "status", "--porcelain") == ""
    assert git(devices.remote, "ls-tree", "main", "--", relpath).split()[0] == "100755"
