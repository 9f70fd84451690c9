"""What git knows about the vault's files stays true through a sync: the remote's
branches as they are now, each file's mode, and which files are sealed (only memories
and proposals, by the vault's own definition, never a template or a README)."""

from __future__ import annotations

import pytest

from memoryctl.storage import seal
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
    assert "origin/junk" in devices.git(devices.desktop, "branch", "-r")
    git(devices.remote, "branch", "-D", "junk")
    assert devices.sync(devices.desktop).code == 0
    assert "origin/junk" not in devices.git(devices.desktop, "branch", "-r")
    # A new branch of this vault is pushed: the deleted branch no longer says the
    # remote holds something else.
    devices.git(devices.desktop, "checkout", "-q", "-b", "phone")
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
    devices.git(devices.laptop, "commit", "-q", "-a", "-m", "Copied from the stick")
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
    assert devices.git(devices.desktop, "status", "--porcelain") == ""
    assert git(devices.remote, "ls-tree", "main", "--", relpath).split()[0] == "100755"


TEMPLATE = "templates/secret-note.md"
TEMPLATE_TEXT = "---\ntitle: {{title}}\nvisibility: secret\n---\n\n{text}\n"


def test_a_template_that_says_secret_is_not_sealed_and_merges_as_text(devices):
    """An Obsidian vault's template for secret notes carries `visibility: secret` for
    the notes made from it; it is not a memory (FORMAT.md), so it reaches the remote as
    it is and merges as the person's text, while a secret memory is still sealed."""
    settings = devices.laptop / "memoryctl.toml"
    settings.write_text(
        settings.read_text().replace("[vault]\n", '[vault]\ntemplates = ["templates"]\n')
    )
    (devices.laptop / "templates").mkdir()
    (devices.laptop / TEMPLATE).write_text(TEMPLATE_TEXT.format(text="Write it here."))
    devices.git(devices.laptop, "add", "-A")
    devices.git(devices.laptop, "commit", "-q", "-m", "A template for secret notes")
    secret_id = devices.add(devices.laptop, "The safe's code is 9317", "--visibility", "secret")
    assert devices.sync(devices.laptop).code == 0
    stored = git(devices.remote, "show", f"main:{TEMPLATE}").encode()
    assert not seal.is_sealed(stored) and b"Write it here." in stored
    secret_path = devices.path(devices.laptop, secret_id).relative_to(devices.laptop)
    assert seal.is_sealed(git(devices.remote, "show", f"main:{secret_path}").encode())
    assert devices.git(devices.laptop, "status", "--porcelain") == ""
    # Both devices change the template's one line: it is the person's text to merge.
    assert devices.sync(devices.desktop).code == 0
    for device, words in ((devices.laptop, "From the laptop."), (devices.desktop, "Desk.")):
        (device / TEMPLATE).write_text(TEMPLATE_TEXT.format(text=words))
        devices.git(device, "commit", "-q", "-a", "-m", "Template wording")
    assert devices.sync(devices.laptop).code == 0
    result = devices.sync(devices.desktop)
    assert result.code == 1
    assert f"both devices changed the same lines of {TEMPLATE}" in result.err
    assert (
        devices.run(devices.desktop, "--json", "review", "--origin", "sync").json()["proposals"]
        == []
    )
