"""Signing release bundles with cosign.

The key never touches disk: cosign reads it from 1Password through `op://` refs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def sign_bundle(bundle: Path, key_ref: str) -> Path:
    """Sign a bundle and return the path of the detached signature."""
    signature = bundle.with_suffix(bundle.suffix + ".sig")
    subprocess.run(
        [
            "cosign",
            "sign-blob",
            "--yes",
            "--key",
            key_ref,
            "--output-signature",
            str(signature),
            str(bundle),
        ],
        check=True,
    )
    return signature
