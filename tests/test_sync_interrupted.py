"""Sync meeting a git operation left unfinished: its own merge, stopped by a kill, or the
person's own merge or rebase. Real processes, real git, a bare remote on local disk."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.sync_support import Devices, both_change_many, git, make_devices


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


def test_a_sync_killed_in_the_middle_of_its_merge_is_made_again_by_the_next_sync(devices):
    both_change_many(devices, 120)
    env = {**os.environ, "XDG_DATA_HOME": str(devices.base / f"data-{devices.desktop.name}")}
    merge_head = devices.desktop / ".git" / "MERGE_HEAD"
    process = subprocess.Popen(
        [sys.executable, "-m", "memoryctl", "--vault", str(devices.desktop), "sync"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not merge_head.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert merge_head.exists(), "the sync was meant to be stopped while it merged"

    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    assert "A sync stopped before it finished its merge" in result.out
    assert not merge_head.exists()
    # Nothing is lost: this device's text is in each file, the laptop's in a proposal.
    text = (devices.desktop / "memories" / "default" / "note-7.md").read_text()
    assert "desktop" in text and "<<<<<<<" not in text
    pending = devices.run(devices.desktop, "--json", "review", "list").json()
    assert len(pending["proposals"]) == 120
    assert devices.run(devices.desktop, "doctor").code == 0
    assert git(devices.desktop, "status", "--porcelain") == ""
    # And the laptop receives the merge.
    assert devices.sync(devices.laptop).code == 0
    assert git(devices.laptop, "rev-parse", "HEAD") == git(devices.desktop, "rev-parse", "HEAD")


def test_sync_leaves_your_own_unfinished_merge_alone_and_says_how_to_finish_it(devices):
    git(devices.desktop, "checkout", "-q", "-b", "side")
    (devices.desktop / "notes.txt").write_text("from the side branch\n")
    git(devices.desktop, "add", "notes.txt")
    git(devices.desktop, "commit", "-q", "-m", "Side")
    git(devices.desktop, "checkout", "-q", "main")
    (devices.desktop / "notes.txt").write_text("from main\n")
    git(devices.desktop, "add", "notes.txt")
    git(devices.desktop, "commit", "-q", "-m", "Main")
    git(devices.desktop, "merge", "side", check=False)
    head = git(devices.desktop, "rev-parse", "HEAD")

    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert "a merge is in progress" in line and "git merge --abort" in line
    # The person's merge is exactly as they left it.
    assert (devices.desktop / ".git" / "MERGE_HEAD").exists()
    assert git(devices.desktop, "rev-parse", "HEAD") == head
    assert git(devices.desktop, "status", "--porcelain").split() == ["AA", "notes.txt"]


def test_sync_during_your_rebase_says_a_rebase_is_in_progress_not_a_detached_head(devices):
    memory_id = devices.add(devices.laptop, "Buy oat milk", "--title", "Milk")
    devices.sync(devices.laptop)
    devices.sync(devices.desktop)
    path = devices.path(devices.desktop, memory_id)
    relpath = str(path.relative_to(devices.desktop))
    git(devices.desktop, "checkout", "-q", "-b", "side")
    path.write_text(path.read_text().replace("oat", "soy"))
    git(devices.desktop, "commit", "-q", "-a", "-m", "Soy")
    git(devices.desktop, "checkout", "-q", "main")
    path.write_text(path.read_text().replace("oat", "rice"))
    git(devices.desktop, "commit", "-q", "-a", "-m", "Rice")
    git(devices.desktop, "checkout", "-q", "side")
    git(devices.desktop, "-c", "merge.memoryctl.driver=false", "rebase", "main", check=False)
    assert (devices.desktop / ".git" / "rebase-merge").exists()

    stopped = devices.sync(devices.desktop)
    assert stopped.code == 1
    [line] = stopped.err.strip().splitlines()
    assert "a rebase is in progress" in line and "git rebase --abort" in line
    assert "detached" not in line
    assert (devices.desktop / ".git" / "rebase-merge").exists()
    assert relpath in git(devices.desktop, "diff", "--name-only", "--diff-filter=U")


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("{base}/gone.git", "does not appear to be a git repository"),
        ("ssh://host.invalid/vault.git", "host.invalid"),
    ],
)
def test_a_remote_out_of_reach_is_named_with_gits_first_reason_not_its_advice(devices, url, cause):
    devices.add(devices.laptop, "Offline note", "--title", "Offline")
    head = git(devices.laptop, "rev-parse", "HEAD")
    git(devices.laptop, "remote", "set-url", "origin", url.format(base=devices.base))
    if url.startswith("ssh:") and shutil.which("ssh") is None:
        pytest.skip("no ssh client on this machine")
    result = devices.sync(devices.laptop)
    assert result.code == 1
    [line] = result.err.strip().splitlines()
    assert line.startswith("memoryctl: could not reach origin: ") and cause in line
    assert "repository exists" not in line and ".;" not in line
    assert git(devices.laptop, "rev-parse", "HEAD") == head
