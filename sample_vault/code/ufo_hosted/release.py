"""Build, sign and publish a UFO hosted release."""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from ufo_hosted.config import Settings, load_settings
from ufo_hosted.registry import RegistryClient
from ufo_hosted.signing import sign_bundle

BUNDLE_NAME = "ufo-hosted"


def _require_clean_tree() -> None:
    status = subprocess.run(
        ["git", "status", "--porcelain"], capture_output=True, text=True, check=True
    )
    if status.stdout.strip():
        raise RuntimeError("refusing to publish from a dirty working tree")


def build_bundle(source: Path, version: str, out_dir: Path) -> Path:
    """Pack the built service into a versioned tarball."""
    out_dir.mkdir(parents=True, exist_ok=True)
    bundle = out_dir / f"{BUNDLE_NAME}-{version}.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(source, arcname=f"{BUNDLE_NAME}-{version}")
    return bundle


def publish(
    version: str,
    source: Path,
    token: str,
    *,
    promote: bool = False,
    settings: Settings | None = None,
) -> str:
    """Upload a signed bundle to staging; copy it to production only when promote is set.

    Returns the digest of the uploaded bundle.
    """
    _require_clean_tree()
    settings = settings or load_settings()
    bundle = build_bundle(source, version, Path("dist"))
    signature = sign_bundle(bundle, settings.signing_key_ref)

    staging = RegistryClient(settings.staging_registry_url, token)
    digest = staging.push(BUNDLE_NAME, version, bundle.read_bytes())
    staging.push(BUNDLE_NAME, version + ".sig", signature.read_bytes())
    if not promote:
        return digest

    production = RegistryClient(settings.registry_url, token)
    production.push(BUNDLE_NAME, version, bundle.read_bytes())
    production.push(BUNDLE_NAME, version + ".sig", signature.read_bytes())
    production.promote(BUNDLE_NAME, digest, settings.channel)
    return digest
