"""No secret memory reaches a remote in clear, whatever commit first held it: the
vault's first commit, a file the person committed by hand, or a history made before
sealing existed. Driven through the CLI, against a bare remote on local disk."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import keyring.core
from keyring.backends import fail

from tests.conftest import SAMPLE_VAULT
from tests.sync_support import git

MEDICATION = b"levothyroxine"  # the text of sample_vault's one secret memory
SECRET_NOTE = """\
---
id: safe0code1
title: Safe code
visibility: secret
---

The safe's code is 9317-AXOLOTL
"""


def remote_objects(remote: Path) -> bytes:
    """Every object the remote holds, packed or loose, as raw bytes."""
    git(remote, "repack", "-a", "-d", "-q")
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=remote,
        capture_output=True,
        check=True,
    ).stdout


def bare_remote(tmp_path: Path, vault: Path) -> Path:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(vault, "checkout", "-q", "-B", "main")
    git(vault, "remote", "add", "origin", str(remote))
    return remote


def test_init_of_a_folder_holding_a_secret_memory_never_sends_it_in_clear(tmp_path, cli):
    vault = tmp_path / "demo"
    shutil.copytree(SAMPLE_VAULT, vault)
    assert cli("init", str(vault)).code == 0
    remote = bare_remote(tmp_path, vault)
    synced = cli("--vault", str(vault), "sync")
    assert synced.code == 0, synced.err
    objects = remote_objects(remote)
    assert b"Daily medication" in (vault / "memories/personal/health/medication.md").read_bytes()
    assert MEDICATION not in objects
    assert b"Daily medication" not in objects
    assert b"sealed: memoryctl-v1" in objects
    # Nothing looks changed: the working file is plain and seals to what git holds.
    assert git(vault, "status", "--porcelain", "--untracked-files=no").strip() == ""
    first = git(vault, "rev-list", "--max-parents=0", "HEAD").strip()
    assert "medication.md" not in git(vault, "ls-tree", "-r", "--name-only", first)


def test_init_by_a_relative_path_as_make_demo_does_seals_the_secret_and_leaves_git_clean(
    tmp_path, cli, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(SAMPLE_VAULT, tmp_path / "demo")
    made = cli("init", "demo")
    assert made.code == 0, made.err
    vault = tmp_path / "demo"
    assert "Committed 1 secret memory sealed" in made.out
    assert git(vault, "status", "--porcelain", "--untracked-files=no").strip() == ""
    assert git(vault, "log", "--format=%s").splitlines() == [
        "Add 1 secret memory, sealed",
        "Initialize memoryctl vault",
    ]


def test_init_of_every_file_commits_the_secret_memory_sealed_after_the_first_commit(tmp_path, cli):
    vault = tmp_path / "copy"
    shutil.copytree(SAMPLE_VAULT, vault)
    made = cli("--json", "init", "--all-files", str(vault))
    assert made.code == 0, made.err
    assert made.json()["sealed"] == ["memories/personal/health/medication.md"]
    assert any("sealing key" in notice for notice in made.json()["notices"])
    remote = bare_remote(tmp_path, vault)
    assert cli("--vault", str(vault), "sync").code == 0
    objects = remote_objects(remote)
    assert MEDICATION not in objects
    assert git(vault, "status", "--porcelain") == ""  # every file committed, none changed
    assert b"Daily medication" not in git(vault, "log", "--format=%B").encode()


def test_init_with_no_keyring_leaves_the_secret_memory_uncommitted_and_says_why(
    tmp_path, cli, monkeypatch
):
    # keyring's own backend for a machine with none (a headless server).
    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())
    vault = tmp_path / "demo"
    shutil.copytree(SAMPLE_VAULT, vault)
    made = cli("init", str(vault))
    assert made.code == 0, made.err
    assert "Left 1 secret memory uncommitted (memories/personal/health/medication.md)" in made.out
    assert "keyring" in made.out
    assert MEDICATION not in remote_objects(vault)  # not even a loose object
    assert git(vault, "ls-files", "--", "memories/personal/health/medication.md") == ""
    # The vault works from its files: the memory is there for the person.
    shown = cli("--vault", str(vault), "--json", "show", "p99nr5r054")
    assert shown.code == 0, shown.err


def test_a_secret_memory_committed_by_hand_in_a_new_vault_is_sealed_or_refused(tmp_path, cli):
    vault = tmp_path / "vault"
    assert cli("init", str(vault)).code == 0
    (vault / "safe.md").write_text(SECRET_NOTE)
    # No key yet: git refuses to store it, rather than store it in clear.
    git(vault, "add", "safe.md", check=False)
    assert git(vault, "ls-files", "--", "safe.md") == ""
    assert cli("--vault", str(vault), "keys", "new").code == 0
    git(vault, "add", "safe.md")
    git(vault, "commit", "-q", "-m", "My safe")
    remote = bare_remote(tmp_path, vault)
    assert cli("--vault", str(vault), "sync").code == 0
    assert b"9317-AXOLOTL" not in remote_objects(remote)


UNSEALED = ["-c", "filter.memoryctl.process=", "-c", "filter.memoryctl.required=false"]


def commit_in_clear(vault: Path, name: str, text: str, message: str) -> str:
    """A file committed where sealing is not set up (a vault made before it existed, or
    a clone memoryctl never ran in); the commit's id."""
    (vault / name).write_text(text)
    git(vault, *UNSEALED, "add", name)
    git(vault, *UNSEALED, "commit", "-q", "-m", message)
    return git(vault, "rev-parse", "HEAD").strip()


def test_sync_refuses_to_push_a_history_holding_a_secret_in_clear_and_names_it(tmp_path, cli):
    vault = tmp_path / "vault"
    assert cli("init", str(vault)).code == 0
    remote = bare_remote(tmp_path, vault)
    assert cli("--vault", str(vault), "sync").code == 0
    commit = commit_in_clear(vault, "safe.md", SECRET_NOTE, "My safe")
    later = "---\nid: later00001\ntitle: Later\n---\n\nA later note\n"
    commit_in_clear(vault, "later.md", later, "A later note")
    synced = cli("--vault", str(vault), "sync")
    assert synced.code == 1
    assert f"safe.md is a secret memory stored in clear in commit {commit[:12]}" in synced.err
    assert "nothing was pushed" in synced.err and "--seal-history" in synced.err
    assert b"9317-AXOLOTL" not in remote_objects(remote)
    assert b"A later note" not in remote_objects(remote)  # nothing of that push went


def test_a_clone_where_memoryctl_never_ran_cannot_send_a_secret_committed_by_hand(tmp_path, cli):
    laptop = tmp_path / "laptop"
    assert cli("init", str(laptop)).code == 0
    remote = bare_remote(tmp_path, laptop)
    assert cli("--vault", str(laptop), "sync").code == 0
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(remote), str(desktop))
    # git reads the attribute but knows no such filter here, so it stores the file as is.
    (desktop / "safe.md").write_text(SECRET_NOTE)
    git(desktop, "add", "safe.md")
    git(desktop, "commit", "-q", "-m", "My safe")
    synced = cli("--vault", str(desktop), "sync")
    assert synced.code == 1 and "safe.md is a secret memory stored in clear" in synced.err
    assert b"9317-AXOLOTL" not in remote_objects(remote)


def test_seal_history_rewrites_the_unpushed_commits_sealed_and_then_syncs(tmp_path, cli):
    vault = tmp_path / "vault"
    assert cli("init", str(vault)).code == 0
    remote = bare_remote(tmp_path, vault)
    assert cli("--vault", str(vault), "sync").code == 0
    pushed = git(vault, "rev-parse", "HEAD").strip()
    commit_in_clear(vault, "safe.md", SECRET_NOTE, "My safe")
    later = "---\nid: later00001\ntitle: Later\n---\n\nA later note\n"
    commit_in_clear(vault, "later.md", later, "A later note")
    assert cli("--vault", str(vault), "sync").code == 1
    synced = cli("--vault", str(vault), "sync", "--seal-history")
    assert synced.code == 0, synced.err
    assert "Rewrote 2 commits origin did not have, with safe.md sealed" in synced.out
    objects = remote_objects(remote)
    assert b"9317-AXOLOTL" not in objects and b"A later note" in objects
    log = git(remote, "log", "--format=%s %an", "main").splitlines()
    assert log[:2] == ["A later note Test Person", "My safe Test Person"]
    assert git(remote, "rev-parse", "main~2").strip() == pushed  # what was pushed stays
    assert git(vault, "status", "--porcelain", "--untracked-files=no") == ""
    assert (vault / "safe.md").read_text() == SECRET_NOTE
    assert cli("--vault", str(vault), "sync").code == 0


def test_seal_history_of_a_vault_whose_first_commit_holds_a_secret_files_the_key_anew(
    tmp_path, cli
):
    """A vault made before sealing existed: its first commit holds the secret memory."""
    vault = tmp_path / "old"
    vault.mkdir()
    git(vault, "init", "-q", "-b", "main")
    (vault / "memoryctl.toml").write_text("")
    commit_in_clear(vault, "safe.md", SECRET_NOTE, "Initialize memoryctl vault")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(vault, "remote", "add", "origin", str(remote))
    refused = cli("--vault", str(vault), "sync")
    assert refused.code == 1 and "safe.md is a secret memory stored in clear" in refused.err
    synced = cli("--vault", str(vault), "sync", "--seal-history")
    assert synced.code == 0, synced.err
    assert "its id changed" in synced.out
    assert b"9317-AXOLOTL" not in remote_objects(remote)
    # The key is filed under the new first commit, so it opens the vault on another device.
    exported = cli("--vault", str(vault), "keys", "export")
    assert exported.code == 0, exported.err
    root = git(vault, "rev-list", "--max-parents=0", "HEAD").strip()
    assert f":{root[:16]}:" in exported.out
