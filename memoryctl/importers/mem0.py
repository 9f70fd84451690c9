"""`mem0`: a JSON export of mem0 memories.

mem0's `get_all` (and the export built on it) gives a list of memories, bare or under
`results` (or `memories`); each has an `id`, the text in `memory`, `created_at`,
`updated_at`, often `categories`, `metadata` and the `user_id`, `agent_id` or `run_id`
it belongs to; `metadata` (whatever the app attached) is kept as the key `metadata`.
OpenMemory's export names the text `content` and gives each memory a `state`. One its
person paused (turned off for their apps) or archived comes in retired, as history out
of every agent's context that `restore` turns on again; one deleted is skipped, and
said. The id makes the ref, so a
re-export of the same memories matches; a memory without an id is known by its first
words instead (never by its place, so one put in above it adds one memory and one
whose words changed proposes a replace).

OpenMemory's backup (`memories_export_USER.zip`) is read as it is: its `memories.json`
names each memory's categories and app by id, from tables of their own, and the person
by an inner id; each is given its name. A JSON Lines file (one memory a line, gzipped
or not) is read too. mem0's `expiration_date` is the memory's `expires`.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
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
from memoryctl.moments import moment


def _records(data: Any) -> list[Any]:
    if isinstance(data, dict):
        for key in ("results", "memories", "data"):
            if isinstance(data.get(key), list):
                return data[key]
        raise ImportSourceError("no list of memories (expected `results` or a list)")
    if isinstance(data, list):
        return data
    raise ImportSourceError("no list of memories (expected `results` or a list)")


# OpenMemory's states of a memory its person took out of use: deleted ones are kept out
# of the vault, and said; paused and archived ones come in retired.
_GONE = {"deleted"}
_OUT_OF_USE = {"paused", "archived"}


def _state_changes(data: Any) -> dict[tuple[str, str], str]:
    """When each memory of an OpenMemory backup last entered each state, from its
    `status_history`: {(memory id, state): ISO text}."""
    rows = data.get("status_history") if isinstance(data, dict) else None
    changes: dict[tuple[str, str], str] = {}
    for row in rows if isinstance(rows, list) else ():
        if not isinstance(row, dict) or not isinstance(row.get("new_state"), str):
            continue
        at = moment_or_none(row.get("changed_at"))
        key = (str(row.get("memory_id")), row["new_state"].lower())
        if at is not None and at > changes.get(key, ""):
            changes[key] = at
    return changes


def _categories(value: Any) -> tuple[str, ...]:
    """A memory's categories as tags: a list, or one category as text."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(str(c).strip() for c in value if isinstance(c, str | int) and str(c).strip())


# OpenMemory's backup is a zip of `memories.json` (the tables: memories, and the apps and
# categories they point to by id) and `memories.jsonl.gz` (one memory a line).
_ZIP_MEMBERS = ("memories.json", "memories.jsonl.gz", "memories.jsonl")
_MAX_UNPACKED = 256 * 2**20


def _unpacked(path: Path, raw: bytes) -> bytes:
    """The export's bytes, out of OpenMemory's zip and out of gzip, as it was written."""
    try:
        if raw.startswith(b"PK\x03\x04"):
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                members = {Path(m.filename).name: m for m in archive.infolist() if not m.is_dir()}
                chosen = next((members[n] for n in _ZIP_MEMBERS if n in members), None)
                if chosen is None:
                    raise ImportSourceError(f"{path}: no {_ZIP_MEMBERS[0]} in the zip")
                if chosen.file_size > _MAX_UNPACKED:
                    raise ImportSourceError(f"{path}: {chosen.filename} is too large to read")
                raw = archive.read(chosen)
        if raw.startswith(b"\x1f\x8b"):
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
                raw = unzipped.read(_MAX_UNPACKED + 1)
            if len(raw) > _MAX_UNPACKED:
                raise ImportSourceError(f"{path}: too large to read once unpacked")
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ImportSourceError(f"{path}: cannot unpack ({error})") from None
    return raw


def _json(text: str) -> Any:
    """A JSON document, or JSON Lines (one memory a line)."""
    try:
        return json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise
        try:
            return [json.loads(line) for line in lines]
        except ValueError:
            pass
        raise


def _names(data: Any, table: str) -> dict[str, str]:
    """The names of an OpenMemory backup's apps or categories, by their ids."""
    rows = data.get(table) if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return {}
    return {
        str(row["id"]): str(row["name"])
        for row in rows
        if isinstance(row, dict) and row.get("id") and isinstance(row.get("name"), str)
    }


def _owner_names(data: Any) -> dict[str, str]:
    """The person an OpenMemory backup is of: its memories name them by an inner id."""
    user = data.get("user") if isinstance(data, dict) else None
    if isinstance(user, dict) and user.get("id") and user.get("user_id"):
        return {str(user["id"]): str(user["user_id"])}
    return {}


def read(path: Path) -> Iterator[Item]:
    if not path.is_file():
        raise ImportSourceError(f"{path}: no such file")
    raw = _unpacked(path, read_bytes(path))
    try:
        data = _json(raw.decode("utf-8-sig"))  # a BOM from Windows
    except (UnicodeDecodeError, ValueError) as error:
        raise ImportSourceError(f"{path}: not a JSON file ({error})") from None
    try:
        records = _records(data)
    except ImportSourceError as error:
        raise ImportSourceError(f"{path}: {error}") from None
    apps, categories, users = _names(data, "apps"), _names(data, "categories"), _owner_names(data)
    changes = _state_changes(data)
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
        state = state.lower() if isinstance(state, str) else None
        if state in _GONE:
            yield Skipped(ref, f"{state} in mem0")
            continue
        tags = _categories(record.get("categories"))
        if not tags and isinstance(record.get("category_ids"), list):
            tags = tuple(categories[str(c)] for c in record["category_ids"] if str(c) in categories)
        owners = tuple(
            f"{key.removesuffix('_id')}:{users.get(str(record[key]), record[key])}"
            for key in ("user_id", "agent_id", "run_id")
            if record.get(key)
        )
        app = record.get("app") or record.get("app_name") or apps.get(str(record.get("app_id")))
        if isinstance(app, str) and app.strip():
            owners += (f"app:{app.strip()}",)
        # What the person's app attached to the memory, kept as mem0 held it.
        metadata = record.get("metadata")
        extra: dict[str, Any] = {"metadata": metadata} if metadata not in (None, {}, [], "") else {}
        expires = moment_or_none(record.get("expiration_date"))
        if expires is not None:
            extra["expires"] = moment(expires)
        yield Found(
            ref,
            text.strip(),
            tags=tags + owners,
            extra=extra,
            created=moment_or_none(record.get("created_at") or record.get("createdAt")),
            updated=moment_or_none(record.get("updated_at") or record.get("updatedAt")),
            group=None if rid else group,
            retired=f"{state} in mem0" if state in _OUT_OF_USE else None,
            retired_at=(
                changes.get((str(rid), state)) or moment_or_none(record.get(f"{state}_at"))
                if state in _OUT_OF_USE
                else None
            ),
        )
