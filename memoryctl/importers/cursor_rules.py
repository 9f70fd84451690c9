"""`cursor-rules`: Cursor's project rules, `.cursor/rules/*.mdc`.

Each rule file has frontmatter with `description`, `globs` and `alwaysApply`, then the
rule's text. A rule that always applies is in every chat, which is what a pin is, so
`alwaysApply: true` becomes a pin. memoryctl's own export (`memoryctl.mdc`) is the
vault's bundle and is skipped. A legacy `.cursorrules` file at the project's root is
read by sections.

PATH is the project (holding `.cursor/rules/`) or the rules folder itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memoryctl.bundle_formats import CURSOR_DESCRIPTION
from memoryctl.export import DEFAULT_PATHS
from memoryctl.importers.base import (
    Found,
    ImportSourceError,
    Item,
    Skipped,
    UnreadableFile,
    files_under,
    folder_of_source,
    note_dates,
    read_note,
    relative,
)
from memoryctl.importers.sections import file_memories

OWN_EXPORT = Path(DEFAULT_PATHS["cursor-rules"]).name
LEGACY = ".cursorrules"
# Cursor reads these as the text of their line, and writes `globs: *.tsx, src/**`.
TEXT_KEYS = ("description", "globs")


def _rules_folder(path: Path) -> Path | None:
    """The folder of rule files: the project's `.cursor/rules`, else PATH itself when it
    is not a project with only a legacy `.cursorrules` (whose other Markdown files, its
    README and docs, are no rules)."""
    candidate = folder_of_source(folder_of_source(path / ".cursor") / "rules")
    if candidate.is_dir():
        return candidate
    return None if (path / LEGACY).is_file() else path


def _always_applies(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def read(path: Path) -> Iterator[Item]:
    if not path.is_dir():
        raise ImportSourceError(f"{path}: no such folder")
    folder = _rules_folder(path)
    legacy = path / LEGACY
    if legacy.is_file():
        yield from file_memories(LEGACY, legacy)
    for file in files_under(folder, (".mdc", ".md")) if folder else ():
        name = relative(file, path)
        try:
            data, body = read_note(file, TEXT_KEYS)
        except UnreadableFile as error:
            yield Skipped(name, str(error))
            continue
        if file.name == OWN_EXPORT or data.get("description") == CURSOR_DESCRIPTION:
            yield Skipped(name, "memoryctl's own export")
            continue
        if not body.strip():
            yield Skipped(name, "empty")
            continue
        created, updated = note_dates(file, data)
        description = data.get("description")
        extra = {}
        globs = data.get("globs")
        if globs:
            extra["globs"] = globs if isinstance(globs, list) else str(globs)
        yield Found(
            name,
            body.strip(),
            title=str(description).strip() if description else file.stem,
            kind="constraint",
            pinned=_always_applies(data.get("alwaysApply")),
            created=created,
            updated=updated,
            extra=extra,
        )
