"""Whether the keyring that holds agent tokens keeps them safe, and, when it does not,
which backend would on this operating system.

Python's keyring takes whatever backend is configured or installed. Some of them keep
secrets in a plain file that any program running as the person can read:
keyrings.alt's `PlaintextKeyring` writes each token base64-encoded, which is an
encoding, not a lock. That is fine for a test or a throwaway server, and a person must
know it; every face that adds or lists agents says so.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

# Backends that write secrets where any process of the person can read them.
PLAINTEXT_BACKENDS = frozenset(
    {
        "keyrings.alt.file.PlaintextKeyring",
        "keyrings.alt.pyfs.PlaintextKeyring",
    }
)


@dataclass(frozen=True)
class UnsafeKeyring:
    """A keyring that keeps tokens unencrypted: which one, where, and what would not."""

    backend: str  # module.Class
    where: str | None  # the file it writes, when it says
    safe: str  # the backend that keeps secrets encrypted on this operating system


def safe_backend(platform: str | None = None) -> str:
    """The keyring backend that keeps secrets encrypted on this operating system."""
    platform = platform or sys.platform
    if platform == "darwin":
        return "the macOS Keychain (keyring.backends.macOS.Keyring)"
    if platform.startswith("win"):
        return "the Windows Credential Locker (keyring.backends.Windows.WinVaultKeyring)"
    return "the Secret Service of GNOME Keyring or KWallet (keyring.backends.SecretService.Keyring)"


def class_path(backend: object) -> str:
    kind = type(backend)
    return f"{kind.__module__}.{kind.__qualname__}"


def writing_backend(backend: Any) -> Any:
    """The backend a new secret is written to: a chain writes to its first backend."""
    chained = getattr(backend, "backends", None)
    if class_path(backend) == "keyring.backends.chainer.ChainerBackend" and chained:
        return chained[0]
    return backend


def unsafe_keyring(backend: Any = None, platform: str | None = None) -> UnsafeKeyring | None:
    """How the keyring in use (or this one) leaves tokens unencrypted, or None."""
    if backend is None:
        import keyring

        backend = keyring.get_keyring()
    writer = writing_backend(backend)
    name = class_path(writer)
    if name not in PLAINTEXT_BACKENDS:
        return None
    where = getattr(writer, "file_path", None)
    return UnsafeKeyring(name, str(where) if where else None, safe_backend(platform))


def unsafe_warning(unsafe: UnsafeKeyring) -> str:
    """The warning, in words a person reads on any face."""
    where = f" in {unsafe.where}" if unsafe.where else ""
    return (
        f"Agent tokens are stored UNENCRYPTED{where} by {unsafe.backend}: any program "
        f"running as you can read them. To keep them safe here, use {unsafe.safe}: "
        "set PYTHON_KEYRING_BACKEND to it, or uninstall keyrings.alt."
    )
