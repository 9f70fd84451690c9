"""`cline`: Cline's memory bank, a `memory-bank/` folder of Markdown files.

The bank's core files (projectbrief.md, productContext.md, activeContext.md,
systemPatterns.md, techContext.md, progress.md) and any others the person adds are
read by sections; each memory is tagged with the file it came from.

PATH is the project (holding `memory-bank/`) or the memory-bank folder itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryctl.importers.base import (
    ImportSourceError,
    Item,
    folder_of_source,
    markdown_files,
    relative,
)
from memoryctl.importers.sections import file_memories

FOLDER = "memory-bank"


def bank_folder(path: Path) -> Path:
    bank = folder_of_source(path / FOLDER)
    return bank if bank.is_dir() else path


def where(path: Path) -> tuple[Path, tuple[Path, ...]]:
    """The bank the refs are named from, and the other PATH an import may have been
    given for it (the project that holds it)."""
    folder = bank_folder(path)
    return folder, (folder.parent,) if folder.name == FOLDER else ()


def read(path: Path) -> Iterator[Item]:
    folder = bank_folder(path)
    if not folder.is_dir():
        raise ImportSourceError(f"{path}: no such folder")
    for file in markdown_files(folder):
        name = relative(file, folder)
        yield from file_memories(name, file, tags=(file.stem,))
