"""`letta`: a Letta agent's memory filesystem (MemFS), a git-backed folder of Markdown.

Each file has frontmatter with a `description` and its text. Files under `system/` are
in the agent's system prompt on every turn, so they become pins; the rest are memories
an agent recalls when relevant. A skill (`skills/NAME/SKILL.md`) is a procedure. A
block's `limit` and `read_only` are kept in its memory as Letta wrote them. The
views Letta generates (`memory_filesystem.md`, `skills.md`, `loaded_skills.md`) are
skipped, and said.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryctl.importers.base import (
    Found,
    ImportSourceError,
    Item,
    Skipped,
    UnreadableFile,
    folder_of_source,
    markdown_files,
    note_dates,
    read_note,
    relative,
)

SYSTEM = "system/"
# Letta writes these itself, from the other files (the tree of the memory files, the
# skills it knows and has loaded): views, not memories, and rewritten on every change.
GENERATED = ("memory_filesystem.md", "skills.md", "loaded_skills.md")
# Written by the agent, often with a colon inside (`description: Persona: terse`).
TEXT_KEYS = ("name", "description")
# A block's settings, kept as Letta wrote them: `limit`, the characters the block may
# hold, and `read_only`, the agent may not edit it (no agent edits a memory in a vault:
# it only proposes, and the person decides, so a read-only block stays as it was meant).
KEPT_KEYS = ("limit", "read_only")


def memory_folder(path: Path) -> Path:
    """The MemFS folder PATH names: itself, or the `memory/` folder of an agent's folder
    (`~/.letta/agents/AGENT/`), whose `system/` holds the pins."""
    if (path / "system").is_dir():
        return path
    inner = folder_of_source(path / "memory")
    return inner if inner.is_dir() else path


def where(path: Path) -> tuple[Path, tuple[Path, ...]]:
    return memory_folder(path), ()


def read(path: Path) -> Iterator[Item]:
    if not path.is_dir():
        raise ImportSourceError(f"{path}: no such folder")
    path = memory_folder(path)
    for file in markdown_files(path):
        name = relative(file, path)
        if name.removeprefix(SYSTEM) in GENERATED:
            yield Skipped(name, "Letta writes it itself from the other files, not a memory")
            continue
        try:
            data, body = read_note(file, TEXT_KEYS)
        except UnreadableFile as error:
            yield Skipped(name, str(error))
            continue
        if not body.strip():
            yield Skipped(name, "empty")
            continue
        created, updated = note_dates(file, data)
        extra: dict[str, object] = {}
        if isinstance(data.get("description"), str) and data["description"].strip():
            extra["description"] = data["description"].strip()
        extra.update((key, data[key]) for key in KEPT_KEYS if data.get(key) is not None)
        skill = file.name == "SKILL.md" and name.startswith("skills/")
        yield Found(
            name,
            body.strip(),
            title=str(data.get("name") or name.removesuffix(".md")),
            kind="procedure" if skill else None,
            pinned=name.startswith(SYSTEM),
            created=created,
            updated=updated,
            extra=extra,
        )
