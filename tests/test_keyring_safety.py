"""A keyring that keeps agent tokens unencrypted is named as such, with the one that
would keep them safe on the person's operating system."""

from __future__ import annotations

from keyring.backends import fail, null
from keyrings.alt.file import PlaintextKeyring

from memoryctl.mcp.keyring_safety import safe_backend, unsafe_keyring, unsafe_warning


def test_the_plaintext_file_keyring_is_named_with_its_file_and_a_safe_backend() -> None:
    unsafe = unsafe_keyring(PlaintextKeyring(), platform="linux")
    assert unsafe is not None
    assert unsafe.backend == "keyrings.alt.file.PlaintextKeyring"
    assert unsafe.where is not None and unsafe.where.endswith("keyring_pass.cfg")
    warning = unsafe_warning(unsafe)
    assert "UNENCRYPTED" in warning and unsafe.where in warning
    assert "keyring.backends.SecretService.Keyring" in warning


def test_the_keyring_in_use_is_the_one_checked() -> None:
    # The test suite's own keyring (tests/conftest.py) is keyrings.alt's plain file.
    unsafe = unsafe_keyring()
    assert unsafe is not None and unsafe.backend == "keyrings.alt.file.PlaintextKeyring"


def test_a_keyring_that_stores_nothing_is_not_called_unencrypted() -> None:
    for backend in (fail.Keyring(), null.Keyring()):
        assert unsafe_keyring(backend) is None


def test_each_operating_system_is_told_its_own_safe_backend() -> None:
    assert "macOS Keychain" in safe_backend("darwin")
    assert "Windows Credential Locker" in safe_backend("win32")
    assert "Secret Service" in safe_backend("linux")
