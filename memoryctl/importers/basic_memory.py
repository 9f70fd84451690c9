"""`basic-memory`: a Basic Memory project folder.

A Basic Memory note is Markdown with frontmatter (`title`, `type`, `tags`,
`permalink`). Anywhere in its text, an observation is a list item
`- [category] text #tag (context)` and a relation is `- relation_type [[Target]]`.
Each observation becomes a memory of its own, tagged with its category and its
`#tags`, and known by its first words (so an observation put in above it adds one
memory, and one whose words changed proposes a replace); the note's other text, with
its relations, becomes one memory that keeps the relations as
`relations: ["relation_type Target", ...]`. As Basic Memory reads them, a Markdown task
(`- [ ] text`, `- [x] text`) and a line in a fenced code block are text, not observations.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memoryctl.export import outside_code
from memoryctl.importers.base import (
    Found,
    ImportSourceError,
    Item,
    Skipped,
    UnreadableFile,
    item_key,
    markdown_files,
    note_dates,
    read_note,
    relative,
)

_OBSERVATION = re.compile(r"[ \t]*[-*][ \t]+\[([^\]\[]+)\][ \t]+(.+)")
_RELATION = re.compile(r"[ \t]*[-*][ \t]+([A-Za-z_][\w-]*)[ \t]+\[\[([^\]]+)\]\](.*)")
_TASK_MARKS = {"", "x", "X", "-"}
_TAG = re.compile(r"(?:^|\s)#([\w/-]+)")
# What a category says about the kind of memory it holds; any other is a fact.
_KINDS = {
    "preference": "preference",
    "decision": "fact",
    "constraint": "constraint",
    "requirement": "constraint",
    "plan": "plan",
    "todo": "plan",
    "goal": "plan",
    "method": "procedure",
    "technique": "procedure",
    "procedure": "procedure",
    "event": "event",
}


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if isinstance(value, list):
        return tuple(str(t).strip() for t in value if t is not None and str(t).strip())
    return ()


def read(path: Path) -> Iterator[Item]:
    if not path.is_dir():
        raise ImportSourceError(f"{path}: no such folder")
    for file in markdown_files(path):
        name = relative(file, path)
        try:
            data, body = read_note(file)
        except UnreadableFile as error:
            yield Skipped(name, str(error))
            continue
        title = str(data.get("title") or file.stem).strip()
        tags = _tags(data.get("tags"))
        created, updated = note_dates(file, data)
        prose: list[str] = []
        relations: list[str] = []
        observations = 0
        keys: dict[str, int] = {}
        group = f"{name}#observations"
        lines = body.split("\n")
        for line, outside in zip(lines, outside_code(lines), strict=True):
            observation = _OBSERVATION.fullmatch(line) if outside else None
            if observation and observation.group(1).strip() in _TASK_MARKS:
                observation = None  # a Markdown task (`- [ ]`, `- [x]`), not an observation
            if observation:
                observations += 1
                category, text = observation.group(1).strip(), observation.group(2).strip()
                found_tags = tuple(dict.fromkeys(_TAG.findall(text)))
                clean = _TAG.sub("", text).strip()
                yield Found(
                    f"{group}:{item_key(clean or text, keys)}",
                    clean or text,
                    kind=_KINDS.get(category.lower(), "fact"),
                    tags=tuple(dict.fromkeys((category, *found_tags, *tags))),
                    created=created,
                    updated=updated,
                    extra={"about": title},
                    group=group,
                )
                continue
            relation = _RELATION.fullmatch(line) if outside else None
            if relation:
                # `[[Target|shown text]]`: the relation is to the target.
                target = relation.group(2).split("|", 1)[0].strip()
                relations.append(f"{relation.group(1)} {target}")
            prose.append(line)
        text = "\n".join(prose).strip()
        lines = [ln for ln in text.split("\n") if ln.strip()]
        headings_only = all(ln.lstrip().startswith("#") for ln in lines)
        if not text or (headings_only and not relations):
            if not observations:
                yield Skipped(name, "empty")
            continue
        extra: dict[str, Any] = {}
        if relations:
            extra["relations"] = relations
        if data.get("permalink"):
            extra["permalink"] = str(data["permalink"])
        yield Found(
            name, text, title=title, tags=tags, created=created, updated=updated, extra=extra
        )
