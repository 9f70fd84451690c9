"""`mem0`: a JSON export of mem0 memories.

mem0's `get_all` (and the export built on it) gives a list of memories, bare or under
`results` (or `memories`); each has an `id`, the text in `memory`, `created_at`,
`updated_at`, often `categories`, `metadata` and the `user_id`, `agent_id` or `run_id`
it belongs to; `metadata` (whatever the app attached) is kept as the key `metadata`.
OpenMemory's export names the text `content` and gives each memory a `state`: one
`deleted` or `archived` there is skipped, and said. The id makes the ref, so a
re-export of the same memories matches; a memory without an id is known by its first
words instead (never by its place, so one put in above it adds one memory and one
whose words changed proposes a replace).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memoryctl.importers.base import (
    Found,
    ImportSourceError,
    Item,
    Skipped,
    item_key,
    moment_or_none,
    read_bytes,
)


def _records(data: Any) -> list[Any]:
    if isinstance(data, dict):
        for key in ("results", "memories", "data"):
            if isinstance(data.get(key), list):
                return data[key]
        raise ImportSourceError("no list of memories (expected `results` or a list)")
    if isinstance(data, list):
        return data
    raise ImportSourceError("no list of memories (expected `results` or a list)")


# OpenMemory's states of a memory its person took out: kept out of the vault, and said.
_GONE = {"deleted", "archived"}


def _categories(value: Any) -> tuple[str, ...]:
    """A memory's categories as tags: a list, or one category as text."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(str(c).strip() for c in value if isinstance(c, str | int) and str(c).strip())


def read(path: Path) -> Iterator[Item]:
    if not path.is_file():
        raise ImportSourceError(f"{path}: no such file")
    try:
        data = json.loads(read_bytes(path).decode("utf-8-sig"))  # a BOM from Windows
    except (UnicodeDecodeError, ValueError) as error:
        raise ImportSourceError(f"{path}: not a JSON file ({error})") from None
    try:
        records = _records(data)
    except ImportSourceError as error:
        raise ImportSourceError(f"{path}: {error}") from None
    keys: dict[str, int] = {}
    group = f"{path.name}#memories"
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            yield Skipped(f"{path.name}#{number}", "not a memory object")
            continue
        rid = record.get("id")
        text = record.get("memory") or record.get("text") or record.get("content")
        if not isinstance(text, str) or not text.strip():
            yield Skipped(f"{path.name}#{rid if rid else number}", "no text in `memory`")
            continue
        ref = f"{path.name}#{rid}" if rid else f"{group}:{item_key(text.strip(), keys)}"
        state = record.get("state")
        if isinstance(state, str) and state.lower() in _GONE:
            yield Skipped(ref, f"{state.lower()} in mem0")
            continue
        tags = _categories(record.get("categories"))
        owners = tuple(
            f"{key.removesuffix('_id')}:{record[key]}"
            for key in ("user_id", "agent_id", "run_id")
            if record.get(key)
        )
        # What the person's app attached to the memory, kept as mem0 held it.
        metadata = record.get("metadata")
        extra = {"metadata": metadata} if metadata not in (None, {}, [], "") else {}
        yield Found(
            ref,
            text.strip(),
            tags=tags + owners,
            extra=extra,
            created=moment_or_none(record.get("created_at") or record.get("createdAt")),
            updated=moment_or_none(record.get("updated_at") or record.get("updatedAt")),
            group=None if rid else group,
        )
