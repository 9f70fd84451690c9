"""Which vault a folder holds, so that an index kept for a path knows its vault.

The index lives in a cache folder named after the vault's path, so a vault deleted and
made again at that path would find the old vault's index, with its rows and the live
checks' mark, and take files it already knew (the same bytes) as checked. Each vault
holds a random id of its own in `.memoryctl/vault-id` (a folder memoryctl never reads
as memories, and that `memoryctl init` tells git to ignore); the index records the id
it was built for, and an index built for another is built again.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from memoryctl.storage.atomic import ChangedOnDisk, write_atomic

IDENTITY_FILE = Path(".memoryctl") / "vault-id"


def vault_identity(root: Path) -> str | None:
    """This vault's id, made on first asking; None when the vault has none and cannot
    be given one (a folder memoryctl cannot write to)."""
    path = root / IDENTITY_FILE
    found = _read(path)
    if found is not None:
        return found or None
    try:
        # Not flushed to disk: an id a power cut loses costs one build of the index.
        token = f"{secrets.token_hex(8)}\n".encode("ascii")
        write_atomic(path, token, None, durable=False)
    except ChangedOnDisk:  # another process gave it one first
        pass
    except OSError:
        return None
    return _read(path) or None


def _read(path: Path) -> str | None:
    """The id in the file, "" for one that cannot be read, None when there is no file."""
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return ""
