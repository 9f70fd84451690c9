"""What every importer yields: memories found in a source, and what it skipped and why.

An importer only reads. It never writes, moves or touches a file of the source; it
turns what it finds into `Found` values that the import plan (`memoryctl.importing`)
compares with the vault.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import YAMLHandler

from memoryctl.actions import slug
from memoryctl.moments import CREATED_KEYS, UPDATED_KEYS, dated_by, parse_moment
from memoryctl.storage import notefile, yamlsubset
from memoryctl.storage.notefile import yaml_reason, yaml_type


class ImportSourceError(Exception):
    """The source cannot be read at all (a missing folder, a file that is not JSON)."""


@dataclass(frozen=True)
class Found:
    """One memory in a source. `ref` (FILE#part) is its identity across imports."""

    ref: str
    body: str
    title: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    pinned: bool = False
    created: str | None = None  # memoryctl's ISO text
    updated: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys kept as the source had them
    # The list a part is an item of (FILE#section), when it is one: an item whose text
    # was edited takes over the memory of the item its list no longer has.
    group: str | None = None
    # Why the source holds the memory out of use (`paused in mem0`): it comes in retired,
    # with this reason and, when the source says, since when (memoryctl's ISO text).
    retired: str | None = None
    retired_at: str | None = None


@dataclass(frozen=True)
class Skipped:
    ref: str
    reason: str


Item = Found | Skipped
_FAST_YAML: YAMLHandler


# The files and folders a reader looked at, so that the next import of the same source
# can tell from their sizes and times alone that nothing changed.
_looked_at: ContextVar[set[Path] | None] = ContextVar("looked_at", default=None)


@contextmanager
def watching() -> Iterator[set[Path]]:
    seen: set[Path] = set()
    token = _looked_at.set(seen)
    try:
        yield seen
    finally:
        _looked_at.reset(token)


# The files and folders a reader's walk passed over (not of the source's kind, hidden),
# with the reason, so that the report names every file the import did not read.
_passed_over: ContextVar[list[tuple[Path, str]] | None] = ContextVar("passed_over", default=None)


@contextmanager
def passing_over() -> Iterator[list[tuple[Path, str]]]:
    passed: list[tuple[Path, str]] = []
    token = _passed_over.set(passed)
    try:
        yield passed
    finally:
        _passed_over.reset(token)


def _pass_over(path: Path, reason: str) -> None:
    passed = _passed_over.get()
    if passed is not None:
        passed.append((path, reason))


def _saw(path: Path) -> None:
    seen = _looked_at.get()
    if seen is not None:
        seen.add(path)


def read_bytes(path: Path) -> bytes:
    _saw(path)
    return path.read_bytes()


class UnreadableFile(Exception):
    """A source file that cannot be read as a text of memories (not UTF-8, binary, too
    large, or, below, broken frontmatter): the file is skipped with the reason, as
    `doctor` words it for a memory, and never touched, so the person can mend it and
    import again. Nothing is imported half read."""


def read_text(path: Path) -> str:
    """A source file's text, without a BOM and with LF line endings (nothing is written).

    Raises UnreadableFile for a file that cannot be read or is no regular file, one
    larger than the vault's limit, one that is not UTF-8, and one that holds NUL bytes
    (a binary file saved under a text name)."""
    _saw(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a pipe would never end, a device neither
            raise UnreadableFile("not a regular file")
        if info.st_size > notefile.MAX_FILE_BYTES:
            raise UnreadableFile(f"file is larger than {notefile.MAX_FILE_BYTES // 2**20} MB")
        raw = path.read_bytes()
    except OSError as error:  # a dangling symlink, a file without read permission
        raise UnreadableFile(f"cannot read: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"not valid UTF-8 (byte {error.start})") from None
    if "\x00" in text:
        raise UnreadableFile("a binary file, not text")
    return text.removeprefix(notefile.BOM).replace("\r\n", "\n")


class _FastYAML(YAMLHandler):
    """YAML frontmatter read by memoryctl's fast reader (PyYAML for the rest), so an
    impossible date stays text as it does in the vault."""

    def load(self, fm: str, **kwargs: object) -> Any:
        # The frontmatter as split begins with the newline after the fence; without
        # it, an error's line is counted as the vault's own reader counts it.
        data = yamlsubset.load(fm.removeprefix("\n"))
        if data is not None and not isinstance(data, dict):
            # python-frontmatter would drop a list silently, and the file's keys with it.
            raise UnreadableFrontmatter(
                f"its frontmatter is not a mapping of keys (it is a {yaml_type(data)})"
            )
        return data


_FAST_YAML = _FastYAML()


class UnreadableFrontmatter(UnreadableFile):
    """A source file's frontmatter cannot be read: the file is skipped, with the reason,
    rather than imported as text that begins with broken YAML."""


def read_note(path: Path, text_keys: tuple[str, ...] = ()) -> tuple[dict[str, Any], str]:
    """A source file's frontmatter and body; raises UnreadableFile, with the reason.

    `text_keys` are the keys the source's own tool reads line by line, as their text,
    rather than as YAML: Cursor's `globs: *.py` (YAML takes `*` for an alias) and a
    model's `description: Merge freeze: mobile cut` (YAML refuses the second colon).
    When YAML refuses the frontmatter, each such line whose value is plain text is read
    as that text and the rest as YAML again; any other fault still skips the file."""
    text = read_text(path)
    try:
        return split_frontmatter(text)
    except UnreadableFrontmatter:
        lines = text.split("\n")
        fence = next((n for n, line in enumerate(lines[1:], 1) if _CLOSE.fullmatch(line)), 0)
        changed = False
        for number in range(1, fence):
            match = _PLAIN_LINE.fullmatch(lines[number])
            if match and match.group(1) in text_keys:
                lines[number] = f"{match.group(1)}: {json.dumps(match.group(2))}"
                changed = True
        if changed:
            with contextlib.suppress(UnreadableFrontmatter):
                return split_frontmatter("\n".join(lines))
        raise


_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")
# A top-level `key: value` whose value is neither quoted nor a flow or block collection.
_PLAIN_LINE = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:[ \t]+([^\s\"'\[{|>#].*?)[ \t]*")


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Frontmatter and body of a foreign file, split by python-frontmatter (which also
    knows the other fences Hugo sites use, when their readers are installed).

    Raises UnreadableFrontmatter, with the reason and its line, when there is a
    frontmatter and it cannot be read."""
    handler = frontmatter.detect_format(text, frontmatter.handlers)
    if isinstance(handler, YAMLHandler):
        handler = _FAST_YAML
    try:
        post = frontmatter.loads(text, handler=handler)
    except yaml.YAMLError as error:
        reason = yaml_reason(error, text.split("\n", 1)[-1])
        raise UnreadableFrontmatter(f"its frontmatter could not be read ({reason})") from error
    except (ValueError, TypeError, LookupError, AttributeError) as error:
        raise UnreadableFrontmatter(f"its frontmatter could not be read ({error})") from error
    metadata = post.metadata if isinstance(post.metadata, dict) else {}
    return {str(k): v for k, v in metadata.items()}, post.content


def item_key(text: str, used: dict[str, int]) -> str:
    """An item of a list known by its first words, not its place (a second item with the
    same first words gets `-2`): an item put in above it adds one memory and leaves the
    others as they were. `used` counts the keys given so far in the same list."""
    key = slug(text, 40)
    used[key] = used.get(key, 0) + 1
    return key if used[key] == 1 else f"{key}-{used[key]}"


def moment_or_none(value: Any) -> str | None:
    if value is None or value == "":
        return None
    try:
        return parse_moment(value)
    except ValueError:
        return None


def file_dates(path: Path) -> tuple[str, str]:
    """(created, updated) of a file from its modification time: the best date a source
    without dates of its own has."""
    stamp = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)
    text = parse_moment(stamp)
    return text, text


def note_dates(path: Path, data: dict[str, Any]) -> tuple[str, str]:
    """(created, updated) of a source note: from the keys its tools date it by, as the
    vault reads them (`created`, Obsidian's `date created`, `date`, ...), else from the
    file's modification time."""
    created, updated = file_dates(path)
    created_key, updated_key = dated_by(data, CREATED_KEYS), dated_by(data, UPDATED_KEYS)
    if created_key is not None:
        created = parse_moment(data[created_key])
    if updated_key is not None:
        updated = parse_moment(data[updated_key])
    return created, updated


def files_under(root: Path, suffixes: tuple[str, ...] = (".md",)) -> Iterator[Path]:
    """Every file under root whose name ends in one of `suffixes` (in any case), in path
    order; folders whose names start with a dot below root are never entered, nor are
    symlinked folders (as in the vault). Each file and folder passed over, and each
    folder that cannot be listed, is told to `passing_over` with the reason."""
    kinds = " or ".join(suffixes)

    def unlisted(error: OSError) -> None:
        _pass_over(Path(error.filename or root), f"cannot list: {error.strerror or error}")

    for folder, dirs, files in os.walk(root, onerror=unlisted):
        _saw(Path(folder))
        entered = []
        for name in sorted(dirs):
            if name.startswith("."):
                _pass_over(Path(folder) / name, "a hidden folder, not read")
            elif os.path.islink(Path(folder) / name):
                _pass_over(Path(folder) / name, "a symlink to a folder, not followed")
            else:
                entered.append(name)
        dirs[:] = entered
        for name in sorted(files):
            path = Path(folder) / name
            if name.lower().endswith(suffixes):
                yield path
            else:
                _pass_over(path, _broken_link(path) or f"not a {kinds} file")


def _broken_link(path: Path) -> str | None:
    """Why a symlink cannot be followed (it leads nowhere, or round in a loop); None for
    anything else. Told rather than called a file of another kind: it may have been a
    folder of the source."""
    if not os.path.islink(path):  # False also for a path too long to ask about
        return None
    try:
        path.stat()
    except OSError as error:
        return f"a symlink to {os.readlink(path)} that cannot be followed ({error.strerror})"
    return None


def folder_of_source(path: Path) -> Path:
    """`path`, which a source's layout names as its folder (a project's `memory-bank/`),
    when it is one or is not there at all; ImportSourceError, with the reason, when
    something else stands in its place (a file, a symlink that leads nowhere), so that
    the import neither reads the folder above it nor says nothing."""
    if path.is_dir() or not os.path.lexists(path):
        return path
    reason = _broken_link(path) or "a file, not a folder"
    raise ImportSourceError(f"{path}: {reason}")


def markdown_files(root: Path) -> Iterator[Path]:
    return files_under(root, (".md",))


def relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name
