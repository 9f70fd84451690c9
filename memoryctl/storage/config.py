"""A vault's settings, from `memoryctl.toml` at its root, with defaults for every key."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

CONFIG_NAME = "memoryctl.toml"
# Top-level files an agent reads (an export may write them into the vault) are not memories.
DEFAULT_IGNORE = ("README.md", "AGENTS.md", "CLAUDE.md", "proposals/", "node_modules/")
# memoryctl's own folder in a vault (the vault's id, the write lock without git).
OWN_DIR = ".memoryctl"
# Folders that are never memories, whatever the settings say.
ALWAYS_IGNORED_DIRS = frozenset({".git", OWN_DIR, ".obsidian", ".trash"})
# The review queue's folder at the vault's root: its files are proposals, never memories,
# even when a vault's own `ignore` list leaves it out.
PROPOSALS_DIR = "proposals"

DEFAULT_CONFIG_TEXT = """\
# memoryctl settings for this vault. Every key is optional.

[vault]
# Paths (relative to the vault) that are not memories. A trailing / means a folder.
ignore = ["README.md", "AGENTS.md", "CLAUDE.md", "proposals/", "node_modules/"]

[git]
# Commit every change made through memoryctl, with a message that says what and why.
autocommit = true

[corrections]
# A deprecated string that would reach more memories than this needs --force,
guard = 2000
# and so does one that would reach more than this share of the vault, once that is
# more than guard_floor memories.
guard_share = 0.1
guard_floor = 10
"""


class ConfigError(Exception):
    pass


FORMATS = ("markdown", "json", "agents-md", "claude-md", "cursor-rules", "gemini-md")
VISIBILITY_LEVELS = ("public", "shared", "private", "secret")


@dataclass(frozen=True)
class Profile:
    """What one agent may see: namespaces, the most private visibility, and a budget."""

    name: str
    namespaces: tuple[str, ...] = ("*",)
    visibility: str = "private"
    budget: int = 4000
    recall: int = 20
    format: str = "markdown"

    def sees_namespace(self, namespace: str) -> bool:
        return "*" in self.namespaces or namespace in self.namespaces

    def sees_visibility(self, visibility: str) -> bool:
        if visibility not in VISIBILITY_LEVELS:
            return False
        return VISIBILITY_LEVELS.index(visibility) <= VISIBILITY_LEVELS.index(self.visibility)


DEFAULT_PROFILE = Profile(name="default")


def _profile(path: Path, name: str, table: object) -> Profile:
    where = f"{path}: [profiles.{name}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = set(table) - {"namespaces", "visibility", "budget", "recall", "format"}
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    namespaces = table.get("namespaces", ["*"])
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        raise ConfigError(f"{where} namespaces must be a list of names")
    visibility = table.get("visibility", "private")
    if visibility not in VISIBILITY_LEVELS:
        raise ConfigError(f"{where} visibility must be one of {', '.join(VISIBILITY_LEVELS)}")
    for key in ("budget", "recall"):
        value = table.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{where} {key} must be a whole number above 0")
    fmt = table.get("format", "markdown")
    if fmt not in FORMATS:
        raise ConfigError(f"{where} format must be one of {', '.join(FORMATS)}")
    return Profile(
        name=name,
        namespaces=tuple(namespaces),
        visibility=visibility,
        budget=table.get("budget", DEFAULT_PROFILE.budget),
        recall=table.get("recall", DEFAULT_PROFILE.recall),
        format=fmt,
    )


@dataclass(frozen=True)
class VaultConfig:
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    # Folders of templates (`[vault] templates`, and the one Obsidian's settings name):
    # their files are not memories.
    templates: tuple[str, ...] = ()
    autocommit: bool = True
    correction_guard: int = 2000
    correction_guard_share: float = 0.1
    correction_guard_floor: int = 10
    anchors_repo: str | None = None
    anchor_age_days: int = 2
    profiles: dict[str, Profile] = field(default_factory=lambda: {"default": DEFAULT_PROFILE})
    raw: dict[str, Any] = field(default_factory=dict)

    def profile(self, name: str | None) -> Profile:
        """The named profile, or a clear error that lists the valid ones."""
        key = name or "default"
        if key not in self.profiles:
            valid = ", ".join(sorted(self.profiles))
            raise ConfigError(f"unknown profile {key!r}; valid profiles: {valid}")
        return self.profiles[key]

    @cached_property
    def _ignored_folders(self) -> tuple[str, ...]:
        folders = (p for p in self.ignore if p.endswith("/"))
        return (f"{PROPOSALS_DIR}/", *folders, *self.templates)

    @cached_property
    def _ignored_files(self) -> frozenset[str]:
        return frozenset(p for p in self.ignore if not p.endswith("/"))

    def is_ignored(self, relpath: str) -> bool:
        return relpath in self._ignored_files or relpath.startswith(self._ignored_folders)


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{CONFIG_NAME}: [{name}] must be a table")
    return value


def _folder(text: str) -> str | None:
    folder = text.strip().strip("/")
    return f"{folder}/" if folder and folder != "." else None


# Where Obsidian keeps the templates folder it is told to use: the core Templates
# plugin, and the Templater plugin.
OBSIDIAN_TEMPLATE_SETTINGS = (
    (".obsidian/templates.json", "folder"),
    (".obsidian/plugins/templater-obsidian/data.json", "templates_folder"),
)


def obsidian_templates(root: Path) -> tuple[str, ...]:
    """The templates folders named in the vault's Obsidian settings, if any.

    A settings file that cannot be read names no folder: Obsidian's own files are not
    memoryctl's to complain about.
    """
    found = []
    for relpath, key in OBSIDIAN_TEMPLATE_SETTINGS:
        try:
            settings = json.loads((root / relpath).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        value = settings.get(key) if isinstance(settings, dict) else None
        folder = _folder(value) if isinstance(value, str) else None
        if folder:
            found.append(folder)
    return tuple(dict.fromkeys(found))


def load_config(root: Path) -> VaultConfig:
    path = root / CONFIG_NAME
    if not path.exists():
        return VaultConfig(templates=obsidian_templates(root))
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
    templates = vault.get("templates", [])
    if not isinstance(templates, list) or not all(isinstance(p, str) for p in templates):
        raise ConfigError(f"{path}: [vault] templates must be a list of folders")
    folders = [f for f in map(_folder, templates) if f]
    bundle = _section(data, "bundle")
    age = bundle.get("anchor_age_days", 2)
    if not isinstance(age, int) or isinstance(age, bool) or age < 0:
        raise ConfigError(f"{path}: [bundle] anchor_age_days must be a whole number")
    profiles = {"default": DEFAULT_PROFILE}
    for name, table in _section(data, "profiles").items():
        profiles[name] = _profile(path, name, table)
    autocommit = git.get("autocommit", True)
    if not isinstance(autocommit, bool):
        raise ConfigError(f"{path}: [git] autocommit must be true or false (without quotes)")
    guard = corrections.get("guard", 2000)
    if not isinstance(guard, int) or isinstance(guard, bool) or guard < 1:
        raise ConfigError(f"{path}: [corrections] guard must be a positive whole number")
    share = corrections.get("guard_share", 0.1)
    if not isinstance(share, int | float) or isinstance(share, bool) or not 0 < share <= 1:
        raise ConfigError(
            f"{path}: [corrections] guard_share must be a number above 0 and at most 1"
        )
    floor = corrections.get("guard_floor", 10)
    if not isinstance(floor, int) or isinstance(floor, bool) or floor < 0:
        raise ConfigError(f"{path}: [corrections] guard_floor must be a whole number")
    return VaultConfig(
        ignore=tuple(ignore),
        templates=tuple(dict.fromkeys([*folders, *obsidian_templates(root)])),
        autocommit=autocommit,
        correction_guard=guard,
        correction_guard_share=float(share),
        correction_guard_floor=floor,
        anchors_repo=anchors.get("repo"),
        anchor_age_days=age,
        profiles=profiles,
        raw=data,
    )
