"""Two devices and a bare remote on local disk, for the sync tests."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryctl.storage.vault import Vault


def git(cwd: Path, *args: str, check: bool = True) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


@dataclass
class Devices:
    """A laptop and a desktop syncing through one bare remote, each with its own keyring."""

    remote: Path
    laptop: Path
    desktop: Path
    cli: Callable
    monkeypatch: pytest.MonkeyPatch
    base: Path

    def on(self, device: Path) -> Devices:
        """Run the next commands as that device (its own keyring)."""
        self.monkeypatch.setenv("XDG_DATA_HOME", str(self.base / f"data-{device.name}"))
        return self

    def run(self, device: Path, *args: str, stdin: str | None = None):
        self.on(device)
        return self.cli("--vault", str(device), *args, stdin=stdin)

    def git(self, device: Path, *args: str) -> str:
        """git as the person runs it on that device: its sealing filter reads that
        device's keyring, whenever git looks at a secret memory's file again."""
        self.on(device)
        return git(device, *args)

    def sync(self, device: Path, *args: str):
        return self.run(device, "sync", *args)

    def add(self, device: Path, body: str, *args: str) -> str:
        result = self.run(device, "--json", "add", body, *args)
        assert result.code == 0, result.err
        return result.json()["id"]

    def on_both(self, body: str, title: str) -> str:
        """A memory added on the laptop and synced to the desktop; its id."""
        memory_id = self.add(self.laptop, body, "--title", title)
        self.sync(self.laptop)
        self.sync(self.desktop)
        return memory_id

    def path(self, device: Path, memory_id: str) -> Path:
        vault = Vault(device)
        try:
            return device / vault.resolve(memory_id).path
        finally:
            vault.close()

    def same_line_changed(self) -> tuple[str, Path, Path]:
        """A memory both devices change on the same line: "soy" on the laptop, already
        synced, and "rice" on the desktop, committed there by hand and not yet synced.
        Returns its id and both files."""
        memory_id = self.on_both("Buy oat milk", "Milk")
        laptop_file = self.path(self.laptop, memory_id)
        laptop_file.write_text(laptop_file.read_text().replace("oat", "soy"))
        assert self.sync(self.laptop, "--include-edits").code == 0
        desktop_file = self.path(self.desktop, memory_id)
        desktop_file.write_text(desktop_file.read_text().replace("oat", "rice"))
        self.git(self.desktop, "commit", "-q", "-a", "-m", "Rice, not oat")
        return memory_id, laptop_file, desktop_file

    def remote_objects(self) -> bytes:
        """Every object the remote holds, packed or loose, as raw bytes."""
        git(self.remote, "repack", "-a", "-d", "-q")
        return subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"],
            cwd=self.remote,
            capture_output=True,
            check=True,
        ).stdout


def make_devices(tmp_path: Path, cli: Callable, monkeypatch: pytest.MonkeyPatch) -> Devices:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    devices = Devices(remote, laptop, desktop, cli, monkeypatch, tmp_path)
    devices.on(laptop)
    assert cli("init", str(laptop)).code == 0
    git(laptop, "checkout", "-q", "-B", "main")
    git(laptop, "remote", "add", "origin", str(remote))
    first = devices.sync(laptop)
    assert first.code == 0, first.err
    git(tmp_path, "clone", "-q", str(remote), str(desktop))
    second = devices.sync(desktop)
    assert second.code == 0, second.err
    return devices


def both_change_many(devices: Devices, count: int) -> None:
    """`count` memories, each changed on the same line on both devices, so the desktop's
    sync has that many files to merge."""
    folder = devices.laptop / "memories" / "default"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"note-{n}.md").write_text(f"---\nid: note{n}\ntitle: Note {n}\n---\n\nplain\n")
    git(devices.laptop, "add", "-A")
    git(devices.laptop, "commit", "-q", "-m", "Many notes")
    assert devices.sync(devices.laptop).code == 0
    assert devices.sync(devices.desktop).code == 0
    for device, word in ((devices.laptop, "laptop"), (devices.desktop, "desktop")):
        for n in range(count):
            path = device / "memories" / "default" / f"note-{n}.md"
            path.write_text(path.read_text().replace("plain", word))
        git(device, "commit", "-q", "-a", "-m", f"Edited on the {word}")
    assert devices.sync(devices.laptop).code == 0
