"""`claude-md`, `agents-md` and `gemini-md`: an agent's instruction file, by sections.

PATH is the file, or the folder that holds it. Claude Code reads CLAUDE.md, Codex and
many others AGENTS.md, Gemini CLI GEMINI.md; all three are plain Markdown.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryctl.importers.base import ImportSourceError, Item
from memoryctl.importers.sections import file_memories

FILE_NAMES = {"claude-md": "CLAUDE.md", "agents-md": "AGENTS.md", "gemini-md": "GEMINI.md"}


def source_file(source: str, path: Path) -> Path:
    if path.is_dir():
        path = path / FILE_NAMES[source]
    if not path.is_file():
        raise ImportSourceError(f"{path}: no such file")
    return path


def read(source: str, path: Path) -> Iterator[Item]:
    file = source_file(source, path)
    yield from file_memories(file.name, file)
