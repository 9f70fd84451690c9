"""A vault deleted and made again at the same path is a new vault: its index (kept in a
cache folder named after the path) is built again, and the live checks file what they
find on its first open, as for any fresh vault, even where its files are the old ones.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from conftest import SAMPLE_VAULT, copy_sample
from review_helpers import git, write_note

from memoryctl.actions import init_vault
from memoryctl.storage.vault import Vault, index_path

LISBON, PORTO = "hafbhwmj2s", "aghaak5xqn"  # Porto replaces Lisbon (`lives_in`)
HOME = "memories/personal/home"


def pending(cli, root: Path) -> set[tuple[str, ...]]:
    """The pending proposals, each as its action and targets."""
    result = cli("--vault", str(root), "review", "--json")
    assert result.code == 0, result.err
    return {(p["action"], *(t["id"] for t in p["targets"])) for p in result.json()["proposals"]}


def test_a_vault_made_again_from_the_same_files_files_its_proposals_on_first_open(tmp_path, cli):
    root = copy_sample(tmp_path / "vault")
    first = pending(cli, root)
    assert first  # the sample's facts and retires propose
    shutil.rmtree(root)
    copy_sample(root)  # the same files, with the same sizes and times
    assert index_path(root).exists()  # the old vault's index is still in the cache
    result = cli("--vault", str(root), "list")
    assert "built for another vault at this path" in result.err
    assert pending(cli, root) == first


def test_a_different_vault_at_the_same_path_files_what_its_own_facts_propose(tmp_path, cli):
    root = copy_sample(tmp_path / "vault")
    assert ("retire", LISBON) in pending(cli, root)
    shutil.rmtree(root)
    init_vault(root)
    for name in ("lives-in-lisbon.md", "lives-in-porto.md"):  # copied as they were
        (root / HOME).mkdir(parents=True, exist_ok=True)
        shutil.copy2(SAMPLE_VAULT / HOME / name, root / HOME / name)
    write_note(root, "memories/old-editor.md", "oldeditor1", "Uses Emacs")
    write_note(root, "memories/new-editor.md", "neweditor1", "Uses Zed", retires=["oldeditor1"])
    assert pending(cli, root) == {("retire", LISBON), ("retire", "oldeditor1")}


def test_an_index_kept_for_the_same_vault_is_not_built_again(tmp_path):
    root = copy_sample(tmp_path / "vault")
    for _ in range(2):
        vault = Vault(root)
        vault.index.count()
        vault.close()
    vault = Vault(root)
    try:
        assert not vault.index.built_fresh
        assert vault.notices == []
    finally:
        vault.close()


def test_an_index_made_before_vaults_had_ids_is_kept_and_takes_the_vaults(tmp_path):
    root = copy_sample(tmp_path / "vault")
    vault = Vault(root)
    count = vault.index.count()
    vault.close()
    (root / ".memoryctl" / "vault-id").unlink()
    with sqlite3.connect(index_path(root)) as db:
        db.execute("DELETE FROM meta WHERE key = 'vault'")
    vault = Vault(root)
    try:
        assert vault.notices == [] and vault.index.count() == count
        assert (root / ".memoryctl" / "vault-id").is_file()
    finally:
        vault.close()
    assert git(root, "status", "--porcelain") == ""  # git ignores the id
