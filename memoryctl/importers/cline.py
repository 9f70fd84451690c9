"""`cline`: Cline's memory bank, a `memory-bank/` folder of Markdown files.

The bank's core files (projectbrief.md, productContext.md, activeContext.md,
systemPatterns.md, techContext.md, progress.md) and any others the person adds are
read by sections; each memory is tagged with the file it came from.

PATH is the project (holding `memory-bank/`) or the memory-bank folder itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryctl.importers.base import ImportSourceError, Item, markdown_files, relative
from memoryctl.importers.sections import file_memories

FOLDER = "memory-bank"


def read(path: Path) -> Iterator[Item]:
    folder = path / FOLDER if (path / FOLDER).is_dir() else path
    if not folder.is_dir():
        raise ImportSourceError(f"{path}: no such folder")
    for file in markdown_files(folder):
        name = relative(file, folder)
        yield from file_memories(name, file, tags=(file.stem,))
