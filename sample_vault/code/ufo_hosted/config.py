"""Settings for the release tooling.

Environment variables win over the settings file, so CI can override anything
without writing a file to disk.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

ENV_PREFIX = "UFO_HOSTED_"
DEFAULT_PATH = Path.home() / ".config" / "ufo-hosted" / "settings.toml"


@dataclass(frozen=True)
class Settings:
    registry_url: str
    staging_registry_url: str
    signing_key_ref: str
    channel: str = "stable"


def load_settings(path: Path | None = None) -> Settings:
    """Read settings from the TOML file, then let UFO_HOSTED_* variables override them."""
    values: dict[str, str] = {}
    settings_path = path or DEFAULT_PATH
    if settings_path.exists():
        with settings_path.open("rb") as handle:
            values.update(tomllib.load(handle).get("release", {}))
    for name in ("registry_url", "staging_registry_url", "signing_key_ref", "channel"):
        override = os.environ.get(ENV_PREFIX + name.upper())
        if override:
            values[name] = override
    required = ("registry_url", "staging_registry_url", "signing_key_ref")
    missing = [name for name in required if name not in values]
    if missing:
        raise RuntimeError(f"missing release settings: {', '.join(missing)}")
    return Settings(**values)
