"""The key that seals a vault's secret memories, held in the OS keyring.

One key per vault, shared by every device that syncs it. The keyring entry is named
after the vault's first commit, which every clone has, so the same key serves the
vault wherever it is checked out. The key is never written to the vault, the index or
a log; `export_key` returns it for the person to carry to another device once, and
`import_key` takes it from them.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from dataclasses import dataclass
from pathlib import Path

from memoryctl.storage import gitsync, seal
from memoryctl.storage.vault import VaultError

SERVICE = "memoryctl"
EXPORT_PREFIX = "memoryctl-seal-key-v1"

NO_KEYRING = """\
No usable OS keyring was found, and memoryctl keeps the sealing key only in a keyring.
Install or unlock one (the Secret Service on a Linux desktop, the system keychain on
macOS and Windows, or keyrings.alt on a headless server with
PYTHON_KEYRING_BACKEND=keyrings.alt.file.PlaintextKeyring), then run the command again."""


class SealingKeyError(VaultError):
    """The sealing key cannot be read, made or imported; the message says why."""


class NoKeyring(SealingKeyError):
    pass


class NotThisVault(SealingKeyError):
    def __init__(self, key_vault: str, vault: str) -> None:
        super().__init__(
            f"this key belongs to another vault ({key_vault}, this vault is {vault}); "
            "nothing was imported"
        )
        self.key_vault = key_vault
        self.vault = vault


@dataclass(frozen=True)
class Key:
    vault: str
    secret: bytes

    @property
    def id(self) -> str:
        return seal.key_id(self.secret)


def _backend():
    import keyring
    from keyring.backends import chainer, fail, null
    from keyring.errors import KeyringError

    try:
        backend = keyring.get_keyring()
    except KeyringError as error:
        raise NoKeyring(f"{NO_KEYRING}\n({error})") from None
    if isinstance(backend, fail.Keyring | null.Keyring) or (
        isinstance(backend, chainer.ChainerBackend) and not backend.backends
    ):
        raise NoKeyring(NO_KEYRING)
    return backend


def _account(vault: str) -> str:
    return f"seal:{vault}"


def vault_id(root: Path) -> str:
    identity = gitsync.root_commit(root)
    if identity is None:
        raise SealingKeyError(f"{root} has no commit yet, so its sealing key has no name")
    return identity[:16]


# Keys this process has read, by vault: the keyring is slow to ask (it imports its
# backends), and a process that seals one commit often seals the next.
_READ: dict[Path, Key] = {}


def load_key(root: Path, *, cached: bool = False) -> Key | None:
    """This vault's key on this device, or None when it has none (or no keyring works).

    `cached` takes the key this process read before, without asking the keyring again."""
    if cached and root in _READ:
        return _READ[root]
    try:
        vault = vault_id(root)
        stored = _backend().get_password(SERVICE, _account(vault))
    except SealingKeyError:
        return None
    if not stored:
        return None
    try:
        key = Key(vault, base64.b64decode(stored, validate=True))
    except (binascii.Error, ValueError):
        return None
    _READ[root] = key
    return key


def new_key(root: Path) -> Key:
    """Make this vault's key; refuses when this device already holds one."""
    vault = vault_id(root)
    backend = _backend()
    if backend.get_password(SERVICE, _account(vault)):
        raise SealingKeyError(
            "this device already holds a sealing key for this vault; nothing changed"
        )
    key = Key(vault, secrets.token_bytes(seal.KEY_BYTES))
    backend.set_password(SERVICE, _account(vault), base64.b64encode(key.secret).decode())
    _READ[root] = key
    return key


def export_key(root: Path) -> str:
    """The key as one line of text, for the person to carry to another device."""
    key = load_key(root)
    if key is None:
        raise SealingKeyError(
            "this device has no sealing key for this vault (memoryctl keys new makes one)"
        )
    encoded = base64.urlsafe_b64encode(key.secret).decode().rstrip("=")
    return f"{EXPORT_PREFIX}:{key.vault}:{encoded}"


def parse_export(text: str) -> Key:
    parts = text.strip().split(":")
    if len(parts) != 3 or parts[0] != EXPORT_PREFIX:
        raise SealingKeyError(f"not a memoryctl sealing key (it starts with {EXPORT_PREFIX}:)")
    try:
        secret = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
    except (binascii.Error, ValueError):
        raise SealingKeyError("the key is damaged (not base64); copy it again") from None
    if len(secret) != seal.KEY_BYTES:
        raise SealingKeyError("the key is damaged (wrong length); copy it again")
    return Key(parts[1], secret)


def import_key(root: Path, text: str) -> Key:
    """Keep an exported key in this device's keyring, if it is this vault's."""
    key = parse_export(text)
    vault = vault_id(root)
    if key.vault != vault:
        raise NotThisVault(key.vault, vault)
    backend = _backend()
    existing = load_key(root)
    if existing is not None and existing.secret != key.secret:
        raise SealingKeyError(
            f"this device already holds another key ({existing.id}) for this vault; "
            "nothing was imported"
        )
    backend.set_password(SERVICE, _account(vault), base64.b64encode(key.secret).decode())
    _READ[root] = key
    return key


def refile(root: Path, key: Key) -> Key:
    """File a key under this vault's id as it is now: a history rewritten down to its
    first commit gives the vault a new id, and the same key seals it."""
    moved = Key(vault_id(root), key.secret)
    _backend().set_password(SERVICE, _account(moved.vault), base64.b64encode(key.secret).decode())
    _READ[root] = moved
    return moved
