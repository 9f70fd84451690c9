"""Which vault a command means: an explicit folder, $MEMORYCTL_VAULT, the user's default
vault (from the user config file), or the vault that holds the current folder."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from memoryctl.storage.config import CONFIG_NAME
from memoryctl.storage.vault import is_vault

ENV_VAULT = "MEMORYCTL_VAULT"


class VaultNotFound(Exception):
    """No vault could be found; each subclass carries what was tried."""


@dataclass
class NoSuchFolder(VaultNotFound):
    path: str
    origin: str  # "explicit" or "environment"

    def __str__(self) -> str:
        return f"{self.path}: no such folder"


@dataclass
class NotAFolder(VaultNotFound):
    path: str
    origin: str  # "explicit", "environment" or "default"

    def __str__(self) -> str:
        return f"{self.path} is a file, not a folder"


@dataclass
class NotAVault(VaultNotFound):
    """A folder with no memoryctl.toml: never read as a vault, so nothing in it is indexed."""

    path: Path
    origin: str  # "explicit", "environment" or "default"

    def __str__(self) -> str:
        return f"{self.path} is not a vault (it has no {CONFIG_NAME})"


@dataclass
class DefaultVaultMissing(VaultNotFound):
    path: Path
    config: Path

    def __str__(self) -> str:
        return f"the default vault {self.path} (from {self.config}) is missing"


@dataclass
class UnreadableUserConfig(VaultNotFound):
    config: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.config}: {self.reason}"


class NoVaultHere(VaultNotFound):
    def __str__(self) -> str:
        return "no vault in this folder or above it"


def user_config_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("memoryctl")) / "config.toml"


def default_vault() -> Path | None:
    path = user_config_path()
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError) as error:
        raise UnreadableUserConfig(path, str(error)) from None
    value = data.get("vault")
    return Path(value).expanduser() if isinstance(value, str) else None


def vault_at(candidate: str, origin: str) -> Path:
    """The vault a person named: an existing folder that holds memoryctl.toml."""
    path = Path(candidate).expanduser()
    if path.is_file():
        raise NotAFolder(candidate, origin)
    if not path.is_dir():
        raise NoSuchFolder(candidate, origin)
    if not is_vault(path):
        raise NotAVault(path, origin)
    return path


def find_vault(explicit: str | None, cwd: Path | None = None) -> Path:
    """The explicit folder, then $MEMORYCTL_VAULT, then the user's default, then the
    nearest folder at or above `cwd` that is a vault."""
    for candidate, origin in ((explicit, "explicit"), (os.environ.get(ENV_VAULT), "environment")):
        if candidate:
            return vault_at(candidate, origin)
    configured = default_vault()
    if configured is not None:
        if not configured.exists():
            raise DefaultVaultMissing(configured, user_config_path())
        return vault_at(str(configured), "default")
    here = cwd or Path.cwd()
    for folder in (here, *here.parents):
        if is_vault(folder):
            return folder
    raise NoVaultHere()
