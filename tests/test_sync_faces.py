"""Sync beside the other faces: a merge is one write, and an `add` or an agent's
`remember` made meanwhile waits for it, in real processes, through a bare remote on
local disk."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.sync_support import Devices, both_change_many, git, make_devices


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


def memoryctl(devices: Devices, device, *args: str, **env: str) -> subprocess.CompletedProcess:
    """A memoryctl command in a process of its own, as that device."""
    return subprocess.run(
        [sys.executable, "-m", "memoryctl", "--vault", str(device), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_DATA_HOME": str(devices.base / f"data-{device.name}"), **env},
    )


# A commit hook that, while sync's merge is being committed, has another process add a
# memory (waiting at most a second for the vault) and writes down what it was told.
DURING_THE_MERGE = textwrap.dedent(
    """\
    #!{python}
    import os, subprocess, sys
    if os.path.exists(".git/MERGE_HEAD") and not os.path.exists("{said}"):
        env = {{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}}
        env["MEMORYCTL_LOCK_TIMEOUT"] = "1"
        done = subprocess.run(
            [sys.executable, "-m", "memoryctl", "--vault", ".", "add", "Written during the merge"],
            capture_output=True, text=True, env=env,
        )
        with open("{said}", "w") as said:
            said.write(done.stderr)
    """
)


def test_an_add_while_sync_merges_waits_for_the_merge_and_is_told_who_holds_the_vault(
    devices, tmp_path
):
    both_change_many(devices, 3)  # three files to merge key by key, so a merge commit
    said = tmp_path / "said.txt"
    hook = devices.desktop / ".git" / "hooks" / "pre-commit"
    hook.write_text(DURING_THE_MERGE.format(python=sys.executable, said=said))
    hook.chmod(0o755)
    synced = memoryctl(devices, devices.desktop, "sync")
    assert synced.returncode == 0, synced.stderr
    # The add did not reach the vault halfway through the merge: it was told who held it.
    told = said.read_text()
    assert "the vault is busy (held by memoryctl sync" in told and "nothing was written" in told
    assert git(devices.desktop, "status", "--porcelain") == ""
    assert not git(devices.desktop, "grep", "-l", "Written during the merge", check=False)
    merge = git(devices.desktop, "log", "-1", "--format=%s", "--grep", "Sync with").strip()
    assert merge == "Sync with origin/main"
    # Once the sync is done, the same add goes through, as a commit of its own.
    added = memoryctl(devices, devices.desktop, "add", "Written after the merge")
    assert added.returncode == 0, added.stderr
    assert git(devices.desktop, "log", "-1", "--format=%s").startswith("Add ")
    assert git(devices.desktop, "status", "--porcelain") == ""
