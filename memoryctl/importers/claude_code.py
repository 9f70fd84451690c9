"""`claude-code`: Claude Code's auto-memory folder.

The folder (`~/.claude/projects/PROJECT/memory/`) holds `MEMORY.md`, an index that
Claude Code loads at the start of every session, and topic files, one fact each, whose
frontmatter carries `name` (a short title), `description` (one line) and `type`
(`user`, `feedback`, `project` or `reference`). Each topic file becomes one memory with
those keys. MEMORY.md is read by sections, without its index entries: a line that only
points at a topic file is skipped, since the topic file is imported itself, while a line
that states something and also links to a topic is a memory of its own (`index_entry`
holds the rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    read_text,
    relative,
)
from memoryctl.importers.sections import document_memories, told_if_empty
from memoryctl.memory import kind_of_claude_type

INDEX = "MEMORY.md"
# Written by a model, often with a colon inside (`description: Freeze: mobile cut`).
TEXT_KEYS = ("name", "description")
# A Markdown link to a Markdown file: `[Build](build.md)`, `[Build](<./build.md> "title")`.
_LINK = re.compile(r"\[([^\]]*)\]\(<?([^)\s>]+\.md)>?(?:[ \t]+\"[^\"]*\")?\)")
# What may come before a line's first word: a list marker, an arrow.
_LEAD = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?:(?:→|->|=>)[ \t]*)?")
# What may follow a link that opens its line, before the topic's hook.
_HOOK = re.compile(r"[ \t]*(?:[—–:;,(-].*)?")
# The words a line may hold besides its links and still only point at them.
POINTER_WORDS = frozenset((
    "see", "also", "details", "detail", "more", "full", "notes", "note", "info", "read",
    "refer", "to", "in", "at", "on", "for", "the", "a", "and", "or", "here", "steps", "how",
))  # fmt: skip


def memory_folder(path: Path) -> Path:
    """The auto-memory folder PATH names: itself, the folder of its MEMORY.md, or the
    `memory/` folder of a project's folder (`~/.claude/projects/PROJECT/`, which also
    holds the session transcripts)."""
    if path.is_file():
        return path.parent
    if not (path / INDEX).is_file():
        inner = folder_of_source(path / "memory")
        if inner.is_dir():
            return inner
    return path


def where(path: Path) -> tuple[Path, tuple[Path, ...]]:
    """The folder the refs are named from, and the other PATH an import may have been
    given for it (its MEMORY.md)."""
    folder = memory_folder(path)
    return folder, (folder / INDEX,)


def read(path: Path) -> Iterator[Item]:
    folder = memory_folder(path)
    if not folder.is_dir():
        raise ImportSourceError(f"{path}: no such folder")
    named = ((p, relative(p, folder)) for p in markdown_files(folder))
    topics = [(p, name) for p, name in named if name != INDEX]
    linked = {name for _, name in topics}
    index = folder / INDEX
    if index.is_file():
        yield from _index_memories(index, linked)
    for topic, name in topics:
        try:
            data, body = read_note(topic, TEXT_KEYS)
        except UnreadableFile as error:
            yield Skipped(name, str(error))
            continue
        if not body.strip() and not data.get("description"):
            yield Skipped(name, "empty")
            continue
        created, updated = note_dates(topic, data)
        extra: dict[str, Any] = {}
        if isinstance(data.get("description"), str) and data["description"].strip():
            extra["description"] = data["description"].strip()
        kind = kind_of_claude_type(data)
        if isinstance(data.get("metadata"), dict) and data["metadata"]:
            extra["metadata"] = data["metadata"]  # newer versions keep `type` in it
        yield Found(
            name,
            body.strip() or extra.get("description", ""),
            title=str(data["name"]).strip() if data.get("name") else None,
            kind=kind,
            created=created,
            updated=updated,
            extra=extra,
        )


def _index_memories(index: Path, linked: set[str]) -> Iterator[Item]:
    """MEMORY.md by sections, without its lines that only link to a topic file (each
    is reported: the topic file is imported itself)."""
    try:
        text = read_text(index)
    except UnreadableFile as error:
        yield Skipped(INDEX, str(error))
        return
    kept = []
    for line in text.split("\n"):
        targets = index_entry(line, linked)
        for target in targets:
            yield Skipped(f"{INDEX}#{target}", f"an index line for {target}, imported from it")
        if not targets:
            kept.append(line)
    rest = "\n".join(kept)
    if len(kept) < len(text.split("\n")):  # it indexes topic files: that is its text
        yield from document_memories(INDEX, rest)
    else:
        yield from told_if_empty(INDEX, rest, document_memories(INDEX, rest))


def index_entry(line: str, topics: set[str]) -> list[str]:
    """The topic files a MEMORY.md line is an index entry for; none when it states
    something of its own.

    A line is an index entry when it links to a topic file and the link is all it says:
    the line opens with the link (after a list marker or an arrow), whatever hook
    follows it as Claude Code writes them (`- [Build](build.md) — the CI steps`), or
    its other words only point (`See [Build](build.md) for the steps`) or name the
    topic. Any other word makes the line a fact that also links, kept as a memory.
    """
    links = [
        (match, match.group(2).removeprefix("./"))
        for match in _LINK.finditer(line)
        if match.group(2).removeprefix("./") in topics
    ]
    if not links:
        return []
    targets = list(dict.fromkeys(target for _, target in links))
    first = links[0][0]
    opens = _LEAD.match(line)
    if opens is not None and opens.end() == first.start() and _HOOK.fullmatch(line, first.end()):
        return targets
    outside = _LINK.sub(" ", line)
    naming = set()
    for match, target in links:
        naming.update(_words(match.group(1)))
        naming.update(_words(target.removesuffix(".md").replace("_", " ")))
    if all(word in POINTER_WORDS or word in naming for word in _words(outside)):
        return targets
    return []


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())
