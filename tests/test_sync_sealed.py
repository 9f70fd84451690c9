"""Secret memories sealed before they leave the device, driven through the CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from memoryctl.storage import seal
from tests.sync_support import Devices, git, make_devices

PLAIN = "The safe's code is 9317-AXOLOTL"


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


def secret(devices: Devices, body: str = PLAIN, title: str = "Safe code") -> str:
    memory_id = devices.add(devices.laptop, body, "--title", title, "--visibility", "secret")
    assert devices.sync(devices.laptop).code == 0
    return memory_id


def carry_key(devices: Devices) -> None:
    exported = devices.run(devices.laptop, "keys", "export")
    assert exported.code == 0, exported.err
    imported = devices.run(devices.desktop, "keys", "import", stdin=exported.out)
    assert imported.code == 0, imported.err


def test_the_remote_holds_no_secret_plaintext_in_any_object(devices):
    ids = [
        secret(devices, PLAIN, "Safe code"),
        secret(devices, "My doctor is Dr. Quillfeather", "Doctor"),
    ]
    objects = devices.remote_objects()
    for needle in (b"9317-AXOLOTL", b"Quillfeather", b"Safe code", b"Doctor"):
        assert needle not in objects, needle
    # The working file stays plain for the person and their editor.
    assert PLAIN in devices.path(devices.laptop, ids[0]).read_text()
    log = git(devices.remote, "log", "-p", "--all")
    assert "sealed: memoryctl-v1" in log and "AXOLOTL" not in log
    # Sealing is deterministic: nothing looks changed after the commit.
    assert devices.git(devices.laptop, "status", "--porcelain").strip() == ""


def test_a_device_without_the_key_sees_the_memory_sealed_never_broken(devices):
    memory_id = secret(devices)
    assert devices.sync(devices.desktop).code == 0
    sealed = [
        m for m in devices.run(devices.desktop, "--json", "list").json() if "sealed" in m["title"]
    ]
    [shown] = sealed
    assert shown["title"] == seal.SEALED_TITLE
    assert shown["broken"] is None if "broken" in shown else True
    path = devices.desktop / shown["path"]
    before = path.read_bytes()
    assert seal.is_sealed(before) and b"AXOLOTL" not in before
    # memoryctl never writes over it, and a sync on this device keeps it as it is.
    assert devices.run(devices.desktop, "pin", shown["id"]).code == 1
    devices.add(devices.desktop, "An open note", "--title", "Open")
    assert devices.sync(devices.desktop).code == 0
    assert path.read_bytes() == before
    assert devices.sync(devices.laptop).code == 0
    assert PLAIN in devices.path(devices.laptop, memory_id).read_text()


def test_export_and_import_carry_the_key_and_open_the_sealed_memories(devices):
    memory_id = secret(devices)
    devices.sync(devices.desktop)
    carry_key(devices)
    assert PLAIN in devices.path(devices.desktop, memory_id).read_text()
    assert devices.git(devices.desktop, "status", "--porcelain").strip() == ""
    # Both devices can now change the secret memory; the change merges and stays sealed.
    assert devices.run(devices.desktop, "pin", memory_id).code == 0
    assert devices.sync(devices.desktop).code == 0
    assert devices.sync(devices.laptop).code == 0
    assert devices.run(devices.laptop, "--json", "show", memory_id).json()["pinned"] is True
    assert b"AXOLOTL" not in devices.remote_objects()


def test_the_key_is_never_written_in_clear_in_the_vault(devices):
    secret(devices)
    exported = devices.run(devices.laptop, "keys", "export").out.strip()
    encoded = exported.rsplit(":", 1)[1]
    for path in devices.laptop.rglob("*"):
        if path.is_file():
            assert encoded.encode() not in path.read_bytes(), path


def test_a_key_of_another_vault_is_refused(devices, tmp_path):
    secret(devices)
    other = tmp_path / "other"
    devices.on(devices.laptop)
    devices.cli("init", str(other))
    devices.cli("--vault", str(other), "keys", "new")
    foreign = devices.cli("--vault", str(other), "keys", "export").out
    devices.sync(devices.desktop)
    refused = devices.run(devices.desktop, "keys", "import", stdin=foreign)
    assert refused.code == 1 and "another vault" in refused.err


def test_a_wrong_key_is_named_and_nothing_is_imported(devices):
    memory_id = secret(devices)
    devices.sync(devices.desktop)
    good = devices.run(devices.laptop, "keys", "export").out.strip()
    prefix, vault, _ = good.split(":")
    wrong = f"{prefix}:{vault}:{'A' * 86}"
    refused = devices.run(devices.desktop, "keys", "import", stdin=wrong)
    assert refused.code == 1 and "wrong key" in refused.err
    relpath = devices.path(devices.laptop, memory_id).relative_to(devices.laptop)
    assert seal.is_sealed((devices.desktop / relpath).read_bytes())


def test_a_corrupt_sealed_file_is_reported_and_never_decrypted(devices):
    secret(devices)
    secret(devices, "Locker 42 holds the spare", "Locker")
    devices.sync(devices.desktop)
    files = sorted(p for p in devices.desktop.rglob("*.md") if seal.is_sealed(p.read_bytes()))
    damaged = files[0]
    raw = bytearray(damaged.read_bytes())
    raw[-5] = ord("B") if raw[-5] != ord("B") else ord("C")
    damaged.write_bytes(bytes(raw))
    exported = devices.run(devices.laptop, "keys", "export").out
    result = devices.run(devices.desktop, "keys", "import", stdin=exported)
    assert result.code == 0, result.err
    assert "corrupt" in result.err
    assert damaged.read_bytes() == bytes(raw)
    opened = files[1].read_bytes()
    assert not seal.is_sealed(opened) and b"visibility: secret" in opened


def test_making_a_memory_secret_seals_it_from_the_next_commit(devices):
    memory_id = devices.add(devices.laptop, "Plain for now: HERON-7", "--title", "Heron")
    devices.sync(devices.laptop)
    path = devices.path(devices.laptop, memory_id)
    relpath = str(path.relative_to(devices.laptop))
    path.write_text(path.read_text().replace("namespace:", "visibility: secret\nnamespace:"))
    assert devices.sync(devices.laptop, "--include-edits").code == 0
    stored = git(devices.remote, "show", f"main:{relpath}")
    assert stored.startswith("---\nsealed: ") and "HERON" not in stored
    path.write_text(path.read_text().replace("visibility: secret\n", ""))
    assert devices.sync(devices.laptop, "--include-edits").code == 0
    assert "HERON-7" in git(devices.remote, "show", f"main:{relpath}")


def test_a_commit_message_never_names_a_secret_memory(devices):
    secret(devices, PLAIN, "Safe code")
    assert "Safe code" not in git(devices.remote, "log", "--format=%B", "--all")


def _relpath(devices: Devices, device, memory_id: str) -> str:
    return str(devices.path(device, memory_id).relative_to(device))


def test_memoryctl_seals_its_own_commit_without_starting_the_filter(devices, tmp_path, monkeypatch):
    secret(devices)
    for number in range(5):
        devices.add(devices.laptop, f"Plain fact number {number}", "--title", f"Fact {number}")
    # git looks again at any file changed in the same second as its index was written:
    # these files are a second older than what follows.
    time.sleep(1.1)
    devices.git(devices.laptop, "status")
    trace = tmp_path / "trace.txt"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    memory_id = devices.add(
        devices.laptop, "The locker code is 4471-EGRET", "--visibility", "secret"
    )
    monkeypatch.delenv("GIT_TRACE")
    assert "gitdriver filter" not in trace.read_text()
    relpath = _relpath(devices, devices.laptop, memory_id)
    stored = devices.git(devices.laptop, "show", f"HEAD:{relpath}")
    assert stored.startswith("---\nsealed: ") and "EGRET" not in stored
    # git looks again at the file memoryctl just committed, and at no other.
    status = subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=devices.laptop,
        env={**os.environ, "GIT_TRACE_PACKET": "1"},
        capture_output=True,
        text=True,
    )
    assert status.stdout == ""
    assert set(re.findall(r"pathname=(\S+)", status.stderr)) <= {relpath}


def test_a_secret_memory_is_committed_sealed_beside_what_the_person_staged(devices):
    secret(devices)
    (devices.laptop / "mine.txt").write_text("staged by the person\n")
    devices.git(devices.laptop, "add", "mine.txt")
    memory_id = devices.add(devices.laptop, "The gate code is 5521-IBIS", "--visibility", "secret")
    relpath = _relpath(devices, devices.laptop, memory_id)
    assert devices.git(devices.laptop, "show", "--name-only", "--format=", "HEAD").split() == [
        relpath
    ]
    assert devices.git(devices.laptop, "diff", "--cached", "--name-only").split() == ["mine.txt"]
    assert "IBIS" not in devices.git(devices.laptop, "show", f"HEAD:{relpath}")
    assert devices.git(devices.laptop, "status", "--porcelain").split() == ["A", "mine.txt"]


def test_a_proposal_about_a_secret_memory_never_names_it_in_the_remotes_log(devices):
    memory_id = secret(devices, PLAIN, "Safe code")
    proposed = devices.run(
        devices.laptop,
        "propose",
        "replace",
        memory_id,
        "The safe's code is now 2204-PLOVER",
        "--reason",
        "it changed: The safe's code is 9317-AXOLOTL",
    )
    assert proposed.code == 0, proposed.err
    assert devices.sync(devices.laptop).code == 0
    log = git(devices.remote, "log", "--format=%B", "--all")
    assert f"secret memory {memory_id}" in log
    for needle in ("Safe code", "AXOLOTL"):
        assert needle not in log, needle


def test_a_python_gone_from_the_git_set_up_is_named_then_set_up_again_by_any_command(devices):
    memory_id = secret(devices)
    laptop = devices.laptop
    path = devices.path(laptop, memory_id)
    for key in ("merge.memoryctl.driver", "filter.memoryctl.process"):
        value = git(laptop, "config", key).strip()
        git(laptop, "config", key, value.replace(sys.executable, "/gone/venv/bin/python"))
    path.write_text(path.read_text() + "A line added in an editor.\n")
    # git refuses the secret file rather than store it in clear, and says what to do.
    refused = subprocess.run(["git", "add", "-A"], cwd=laptop, capture_output=True, text=True)
    assert refused.returncode != 0
    assert "/gone/venv/bin/python is gone" in refused.stderr
    assert "memoryctl doctor" in refused.stderr
    # Any memoryctl command sets it up again with its own Python, and says so.
    listed = devices.run(laptop, "list")
    assert listed.code == 0
    assert "/gone/venv/bin/python is gone" in listed.err and sys.executable in listed.err
    assert sys.executable in git(laptop, "config", "filter.memoryctl.process")
    git(laptop, "add", "-A")
    assert "AXOLOTL" not in git(laptop, "show", f":{path.relative_to(laptop)}")
