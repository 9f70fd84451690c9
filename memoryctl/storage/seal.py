"""Sealing secret memories: what a `secret` memory looks like in the repository.

A memory whose frontmatter says `visibility: secret` is stored in git as a *sealed*
file: a small frontmatter that names the format and the key, and the whole original
file encrypted with AES-SIV (RFC 5297, AES-256), base64 below it. The working file
stays plain. AES-SIV is authenticated (a wrong key or a changed byte is detected, and
nothing is decrypted to garbage) and deterministic: the same file and key always give
the same ciphertext, so git never sees a change that did not happen. What this gives
away is only whether two versions of a file are identical, which git's own object ids
show anyway. docs/SYNC.md has the threat model.

This module holds no key and touches no disk: `keys.py` keeps the key in the keyring.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

FORMAT = "memoryctl-v1"
_HEADER = b"---\nsealed: " + FORMAT.encode() + b"\nkey: "
_ASSOCIATED = b"memoryctl sealed memory v1"
KEY_BYTES = 64  # AES-256-SIV takes two 256-bit keys
SEALED_TITLE = "sealed: import the key to read it"
# `visibility: secret` as a top-level key of the frontmatter, quoted or not.
_SECRET = re.compile(rb"""^visibility[ \t]*:[ \t]*["']?secret["']?[ \t]*(?:#.*)?\r?$""", re.M)
_CLOSE = re.compile(rb"^(?:---|\.\.\.)[ \t]*\r?$", re.M)


class SealError(Exception):
    """A sealed file cannot be opened; the message says why."""


class WrongKey(SealError):
    def __init__(self, sealed_with: str, have: str) -> None:
        super().__init__(
            f"sealed with key {sealed_with}, but this device holds key {have}: "
            "import the vault's key (memoryctl keys import)"
        )
        self.sealed_with = sealed_with
        self.have = have


class Corrupt(SealError):
    def __init__(self, reason: str) -> None:
        super().__init__(f"the sealed text is corrupt ({reason}); it was not decrypted")
        self.reason = reason


def key_id(key: bytes) -> str:
    """A short name for a key that tells keys apart and gives nothing of it away."""
    return hashlib.sha256(b"memoryctl seal key id\0" + key).hexdigest()[:16]


def is_sealed(raw: bytes) -> bool:
    return raw.startswith(_HEADER)


def is_secret(raw: bytes) -> bool:
    """Whether a plain memory file says `visibility: secret` in its frontmatter."""
    text = raw.removeprefix(b"\xef\xbb\xbf")
    if not text.startswith(b"---"):
        return False
    first = text.find(b"\n")
    if first < 0:
        return False
    close = _CLOSE.search(text, first + 1)
    front = text[first + 1 : close.start() if close else len(text)]
    return bool(_SECRET.search(front))


def seal(plain: bytes, key: bytes) -> bytes:
    """The sealed form of a file: the same bytes for the same file and key."""
    from cryptography.hazmat.primitives.ciphers.aead import AESSIV

    box = AESSIV(key).encrypt(plain, [_ASSOCIATED])
    encoded = base64.encodebytes(box)
    return _HEADER + key_id(key).encode() + b"\n---\n" + encoded


def sealed_key_id(sealed: bytes) -> str:
    end = sealed.find(b"\n", len(_HEADER))
    return sealed[len(_HEADER) : end].decode("ascii", errors="replace")


def unseal(sealed: bytes, key: bytes) -> bytes:
    """The plain file a sealed one holds; WrongKey or Corrupt when it cannot be read."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESSIV

    if not is_sealed(sealed):
        raise Corrupt("it does not start with the sealed header")
    sealed_with, have = sealed_key_id(sealed), key_id(key)
    if sealed_with != have:
        raise WrongKey(sealed_with, have)
    end = sealed.find(b"\n---\n", len(_HEADER))
    if end < 0:
        raise Corrupt("the header has no end")
    try:
        box = base64.decodebytes(sealed[end + 5 :])
    except (binascii.Error, ValueError):
        raise Corrupt("not base64") from None
    try:
        return AESSIV(key).decrypt(box, [_ASSOCIATED])
    except InvalidTag:
        raise Corrupt("it does not authenticate under the key") from None
    except ValueError as error:
        raise Corrupt(str(error)) from None
