"""A vault's settings, from `memoryctl.toml` at its root, with defaults for every key."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_NAME = "memoryctl.toml"
DEFAULT_IGNORE = ("README.md", "proposals/", "node_modules/")
# Folders that are never memories, whatever the settings say.
ALWAYS_IGNORED_DIRS = frozenset({".git", ".memoryctl", ".obsidian", ".trash"})

DEFAULT_CONFIG_TEXT = """\
# memoryctl settings for this vault. Every key is optional.

[vault]
# Paths (relative to the vault) that are not memories. A trailing / means a folder.
ignore = ["README.md", "proposals/"]

[git]
# Commit every change made through memoryctl, with a message that says what and why.
autocommit = true

[corrections]
# A deprecated string that would reach more memories than this needs --force.
guard = 2000
"""


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Profile:
    name: str
    namespaces: tuple[str, ...] = ("*",)
    visibility: str = "private"
    budget: int = 4000
    recall: int = 20
    format: str = "markdown"


@dataclass(frozen=True)
class VaultConfig:
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    autocommit: bool = True
    correction_guard: int = 2000
    anchors_repo: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    def is_ignored(self, relpath: str) -> bool:
        return any(
            relpath.startswith(pattern) if pattern.endswith("/") else relpath == pattern
            for pattern in self.ignore
        )


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{CONFIG_NAME}: [{name}] must be a table")
    return value


def load_config(root: Path) -> VaultConfig:
    path = root / CONFIG_NAME
    if not path.exists():
        return VaultConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: {error}") from None
    vault = _section(data, "vault")
    git = _section(data, "git")
    corrections = _section(data, "corrections")
    anchors = _section(data, "anchors")
    ignore = vault.get("ignore", list(DEFAULT_IGNORE))
    if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
        raise ConfigError(f"{path}: [vault] ignore must be a list of paths")
    guard = corrections.get("guard", 2000)
    if not isinstance(guard, int) or guard < 1:
        raise ConfigError(f"{path}: [corrections] guard must be a positive whole number")
    return VaultConfig(
        ignore=tuple(ignore),
        autocommit=bool(git.get("autocommit", True)),
        correction_guard=guard,
        anchors_repo=anchors.get("repo"),
        raw=data,
    )
