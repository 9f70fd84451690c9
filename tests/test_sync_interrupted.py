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
    memory_id = devices.on_both("Buy oat milk", "Milk")
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


STOPPED_WHILE_SAVING = """
import os, sys, time
from pathlib import Path

from memoryctl import sync
from memoryctl.storage import gitdriver


def stop_here(*args, **kwargs):
    print("stopped", flush=True)
    time.sleep(60)


root = Path(sys.argv[1])
os.replace = stop_here  # the temporary file is written; the rename is not done
if sys.argv[2] == "state":
    sync._write_state(root, "origin", "main", "0" * 40, "2026-01-01T00:00:00Z")
else:
    os.chdir(root)
    gitdriver._record(root, {"path": "memories/milk.md", "kind": "conflict"})
"""


def killed_while_saving(device, what: str) -> None:
    """A sync (or the merge driver it runs) killed with SIGKILL while saving a file."""
    child = subprocess.Popen(
        [sys.executable, "-c", STOPPED_WHILE_SAVING, str(device), what],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "stopped"
    child.kill()
    child.wait()


def test_doctor_finds_what_a_killed_sync_left_in_the_git_folder_and_fix_removes_it(devices):
    device = devices.desktop
    state = device / ".git" / "memoryctl"
    killed_while_saving(device, "state")
    killed_while_saving(device, "conflict")
    (state / "sync.tmp").write_text("{}")  # as an earlier memoryctl named it
    left = sorted(p for p in state.rglob("*.tmp"))
    assert len(left) == 3
    fresh = doctor_lines(devices)
    assert not [line for line in fresh if ".git/memoryctl/" in line]  # it may still be writing
    two_minutes_ago = time.time() - 125
    for path in left:
        os.utime(path, (two_minutes_ago, two_minutes_ago))
    (state / "notes.tmp").write_text("the person's own\n")
    os.utime(state / "notes.tmp", (two_minutes_ago, two_minutes_ago))

    named = [line for line in doctor_lines(devices) if ".git/memoryctl/" in line]
    assert len(named) == 3
    for line in named:
        assert line.startswith("warning: .git/memoryctl/")
        assert line.endswith(
            ": a temporary file left by a sync that stopped (memoryctl doctor --fix)"
        )
    assert "notes.tmp" not in " ".join(named)
    asked = devices.run(device, "doctor", "--fix")
    assert asked.code == 1 and "confirm with --yes" in asked.err
    assert all(path.exists() for path in left)

    fixed = devices.run(device, "doctor", "--fix", "--yes")
    assert fixed.code == 0, fixed.err
    for path in left:
        assert f"Removed {path.relative_to(device).as_posix()}." in fixed.out
        assert not path.exists()
    assert (state / "notes.tmp").exists() and (state / "sync.json").exists()
    assert devices.sync(device).code == 0


def doctor_lines(devices: Devices) -> list[str]:
    return devices.run(devices.desktop, "doctor").out.splitlines()
