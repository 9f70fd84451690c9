"""Each source's reader, by the name `memoryctl import` takes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from memoryctl.importers import (
    NAMES,
    basic_memory,
    claude_code,
    cline,
    cursor_rules,
    instruction_files,
    letta,
    mem0,
)
from memoryctl.importers.base import Item

Reader = Callable[[Path], Iterator[Item]]

SOURCES: dict[str, Reader] = {
    "claude-code": claude_code.read,
    "claude-md": partial(instruction_files.read, "claude-md"),
    "agents-md": partial(instruction_files.read, "agents-md"),
    "gemini-md": partial(instruction_files.read, "gemini-md"),
    "cursor-rules": cursor_rules.read,
    "cline": cline.read,
    "basic-memory": basic_memory.read,
    "mem0": mem0.read,
    "letta": letta.read,
}
assert tuple(SOURCES) == NAMES

Where = Callable[[Path], tuple[Path, tuple[Path, ...]]]
# For a source one PATH or another may name (a project or its memory bank, a memory
# folder or its MEMORY.md): the path its refs are named from, whichever was given, and
# the other paths an earlier import may have named it by. For the rest, PATH itself.
WHERE: dict[str, Where] = {
    "claude-code": claude_code.where,
    "cline": cline.where,
    "letta": letta.where,
}
