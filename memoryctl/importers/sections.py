"""Instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, a memory bank) as memories.

A section under a heading becomes one memory. A section that is nothing but a list
becomes one memory per item, since each item of "## Conventions" is a fact of its own.
memoryctl's own block (between its markers) is skipped: it is the vault's bundle, not
the person's text. So are Claude Code's `@path` import lines, which name other files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryctl.bundle_formats import END
from memoryctl.export import BEGIN_PREFIX, outside_code
from memoryctl.importers.base import (
    Found,
    Item,
    Skipped,
    UnreadableFile,
    UnreadableFrontmatter,
    item_key,
    read_text,
    split_frontmatter,
)

_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")
_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)")
_IMPORT = re.compile(r"[ \t]*@[^\s]+[ \t]*")


@dataclass
class Section:
    headings: tuple[str, ...]
    lines: list[str]

    @property
    def name(self) -> str:
        return " > ".join(self.headings)


def split_sections(text: str) -> tuple[list[Section], list[str]]:
    """The sections of a Markdown text, without memoryctl's block and `@` imports, and
    the lines that were left out for being one of those."""
    lines = text.split("\n")
    live = outside_code(lines)
    sections = [Section((), [])]
    stack: list[tuple[int, str]] = []
    left_out: list[str] = []
    in_block = False
    for line, outside in zip(lines, live, strict=True):
        if outside and line.lstrip().startswith(BEGIN_PREFIX):
            in_block = True
            continue
        if in_block:
            if outside and line.strip() == END:
                in_block = False
            continue
        match = _HEADING.fullmatch(line) if outside else None
        if match:
            level = len(match.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, match.group(2).strip()))
            sections.append(Section(tuple(h for _, h in stack), []))
            continue
        if outside and _IMPORT.fullmatch(line):
            left_out.append(line.strip())
            continue
        sections[-1].lines.append(line)
    return sections, left_out


def _items(lines: list[str]) -> list[str] | None:
    """The items of a section that is only a list; None when it holds anything else."""
    items: list[list[str]] = []
    for line in lines:
        if not line.strip():
            if items:
                items[-1].append("")
            continue
        match = _ITEM.fullmatch(line)
        if match and not line[:1].isspace():
            items.append([match.group(1)])
        elif items and line[:1].isspace():
            items[-1].append(line.strip())
        else:
            return None
    texts = [" ".join(part for part in item if part).strip() for item in items]
    return [t for t in texts if t] or None


def document_memories(label: str, text: str, *, tags: tuple[str, ...] = ()) -> Iterator[Item]:
    """Memories of one instruction file; `label` is the FILE part of every ref."""
    sections, left_out = split_sections(text)
    for line in left_out:
        yield Skipped(f"{label}#{line}", "an import of another file, not a memory")
    used: dict[str, int] = {}
    for section in sections:
        body = "\n".join(section.lines).strip("\n")
        if not body.strip():
            continue
        name = section.name or "(top)"
        used[name] = used.get(name, 0) + 1
        if used[name] > 1:
            name = f"{name} ({used[name]})"
        title = section.headings[-1] if section.headings else None
        items = _items(section.lines)
        if items is None:
            yield Found(f"{label}#{name}", body, title=title, tags=tags)
            continue
        keys: dict[str, int] = {}
        group = f"{label}#{name}"
        for item in items:
            yield Found(f"{group}:{item_key(item, keys)}", item, tags=tags, group=group)


def file_memories(label: str, path: Path, *, tags: tuple[str, ...] = ()) -> Iterator[Item]:
    """Memories of one instruction file read from disk. A file that cannot be read, and
    one that gives no memory at all, is reported by its name with the reason, so that no
    file of the source goes unmentioned; so is its frontmatter, which is left out."""
    try:
        text = read_text(path)
    except UnreadableFile as error:
        yield Skipped(label, str(error))
        return
    try:
        data, body = split_frontmatter(text)
    except UnreadableFrontmatter:  # no frontmatter: a `---` rule that opens the text
        data, body = {}, text
    if data:  # keys about the file (`description`, `applyTo`), not text of its memories
        yield Skipped(f"{label}#frontmatter", f"its frontmatter ({', '.join(data)}), not a memory")
        text = body
    yield from told_if_empty(label, text, document_memories(label, text, tags=tags))


def told_if_empty(label: str, text: str, items: Iterator[Item]) -> Iterator[Item]:
    """`items`, and then, when none of them is a memory, the file by its name with why."""
    found = False
    for item in items:
        found = found or isinstance(item, Found)
        yield item
    if not found:
        yield Skipped(label, "empty" if not text.strip() else _NOTHING_OF_ITS_OWN)


_NOTHING_OF_ITS_OWN = "no text of its own (only headings, imports or memoryctl's block)"
