"""What a person does with the sealing key: make it, carry it to another device, and
open the sealed memories once it is there. The faces call these and word the results.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import Any

from memoryctl.storage import gitsync, reseal, seal, sealkey
from memoryctl.storage.atomic import ChangedOnDisk, write_atomic
from memoryctl.storage.notefile import sha256
from memoryctl.storage.vault import Vault


@dataclass
class Opened:
    """Sealed working files this device opened, and those it could not (path, why)."""

    opened: list[str] = field(default_factory=list)
    unopened: list[tuple[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "opened": self.opened,
            "unopened": [{"path": p, "reason": r} for p, r in self.unopened],
        }


def sealed_files(vault: Vault) -> list[str]:
    """Memory files in the working tree that are still sealed."""
    result = subprocess.run(
        ["git", "grep", "-l", "-z", "-F", f"sealed: {seal.FORMAT}", "--", "*.md"],
        cwd=vault.root,
        capture_output=True,
    )
    names = result.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return [n for n in names if n and seal.is_sealed((vault.root / n).read_bytes())]


def open_sealed(vault: Vault) -> Opened:
    """Open every sealed working file with this device's key, never writing a file that
    changed meanwhile; a wrong key or a corrupt file is reported and left as it is."""
    found = Opened()
    key = sealkey.load_key(vault.root)
    paths = sealed_files(vault)
    if key is None:
        found.unopened = [(p, seal.SEALED_TITLE) for p in paths]
        return found
    for relpath in paths:
        path = vault.root / relpath
        raw = path.read_bytes()
        try:
            plain = seal.unseal(raw, key.secret)
        except seal.SealError as error:
            found.unopened.append((relpath, str(error)))
            continue
        try:
            write_atomic(path, plain, sha256(raw))
        except ChangedOnDisk as error:
            found.unopened.append((relpath, str(error)))
            continue
        found.opened.append(relpath)
    if found.opened:
        # The opened files seal back to the blobs git has, but git takes a file whose
        # size changed for a changed file: adding them again only records their stat.
        subprocess.run(["git", "add", "--", *found.opened], cwd=vault.root, capture_output=True)
        vault.index.sync_paths(found.opened)
    return found


def new_key(vault: Vault) -> sealkey.Key:
    gitsync.install(vault.root)
    return sealkey.new_key(vault.root)


def export_key(vault: Vault) -> str:
    return sealkey.export_key(vault.root)


class KeyDoesNotOpen(sealkey.SealingKeyError):
    def __init__(self, path: str, offered: str, sealed_with: str) -> None:
        super().__init__(
            f"wrong key: {path} is sealed with key {sealed_with}, this key is {offered}; "
            "nothing was imported"
        )
        self.path = path
        self.offered = offered
        self.sealed_with = sealed_with


def import_key(vault: Vault, text: str) -> tuple[sealkey.Key, Opened]:
    """Keep a key from another device, if it opens this vault's sealed memories."""
    offered = sealkey.parse_export(text)
    vault_id = sealkey.vault_id(vault.root)
    if offered.vault != vault_id:
        raise sealkey.NotThisVault(offered.vault, vault_id)
    for relpath in sealed_files(vault)[:1]:
        try:
            seal.unseal((vault.root / relpath).read_bytes(), offered.secret)
        except seal.WrongKey as error:
            raise KeyDoesNotOpen(relpath, error.have, error.sealed_with) from None
        except seal.Corrupt:
            continue  # one damaged file says nothing about the key
    key = sealkey.import_key(vault.root, text)
    gitsync.install(vault.root)
    return key, open_sealed(vault)


def seal_history(vault: Vault, remote: str) -> reseal.Resealed:
    """Rewrite the commits `remote` does not have yet with each secret memory in them
    sealed (this vault's key, made when it has none), so that sync can push them."""
    from functools import partial

    from memoryctl.storage.merge import merges_by_key

    key = sealkey.load_key(vault.root)
    if key is None:
        if gitsync.has_sealed(vault.root):
            raise sealkey.SealingKeyError(
                "this vault has sealed memories but this device has no key for them; "
                "import the key first (memoryctl keys import)"
            )
        key = new_key(vault)
    sealable = partial(merges_by_key, config=vault.config)
    branch = gitsync.current_branch(vault.root)
    done = reseal.reseal(vault.root, branch, [f"--remotes={remote}"], sealable, key.secret)
    if done.new_root:
        sealkey.refile(vault.root, key)
    return done
