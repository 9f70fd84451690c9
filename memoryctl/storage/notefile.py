"""One memory file as bytes: read it, and change single keys without touching the rest.

A file that memoryctl did not change stays identical to the byte. When memoryctl does
change a file it edits only the frontmatter keys it means to change: every other key,
comment and blank line keeps its text and its place, the body keeps its bytes, and the
file keeps its BOM and its line endings.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from memoryctl.storage import yamlsubset

MAX_FILE_BYTES = 10 * 1024 * 1024
_UNSET = object()
BOM = "\ufeff"
_FENCE = re.compile(r"---[ \t]*")
_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")
# Where a file has no line break but "\n" (nearly every file), its frontmatter is found
# by these searches instead of splitting the whole file into lines.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CLOSE_LINE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_TOP_KEY = re.compile(
    r"""(?:"[^"]*"|'[^']*'|[^\s#\-?:][^:]*?|-[^\s:][^:]*?)[ \t]*:(?:[ \t\r\n]|$)"""
)


# A frontmatter value that is a template's placeholder: `{{date}}` (Obsidian, Hugo,
# Jinja), `<% tp.date.now() %>` (Templater), quoted or not, alone on its line.
_PLACEHOLDER_LINE = re.compile(
    r"""^[ \t]*(?:-[ \t]+|[^\s:#][^:\n]*:[ \t]+)"""
    r"""["']?(?:\{\{[^\n]*\}\}|<%[^\n]*%>)["']?[ \t]*\r?$""",
    re.MULTILINE,
)


class NoteError(Exception):
    """A file cannot be read as a memory; the message says why."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class NoteFile:
    """The parts of a memory file, kept as text so unchanged parts are written back as-is."""

    bom: bool
    newline: str
    has_frontmatter: bool
    open_fence: str = ""
    frontmatter: str = ""
    close_fence: str = ""
    body: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def segments(self) -> list[tuple[str | None, str]]:
        """The frontmatter split by top-level key (worked out only when writing)."""
        return _split_segments(self.frontmatter)

    def to_text(self) -> str:
        head = ""
        if self.has_frontmatter:
            head = self.open_fence + self.frontmatter + self.close_fence
        return (BOM if self.bom else "") + head + self.body

    def to_bytes(self) -> bytes:
        return self.to_text().encode("utf-8")

    def keys(self) -> list[str]:
        return [key for key, _ in self.segments if key is not None]

    def with_changes(self, changes: dict[str, Any], body: str | None = None) -> NoteFile:
        """A copy with these keys set (None removes a key) and, optionally, a new body.

        Keys that exist are rewritten where they stand; new keys go at the end, in the
        order given. Nothing else in the file changes.
        """
        nl = self.newline
        segments = list(self.segments)
        for key, value in changes.items():
            found = [i for i, (k, _) in enumerate(segments) if k == key]
            for extra in reversed(found[1 if value is not None else 0 :]):
                # Removed, or written twice (PyYAML reads the last one): drop all but one,
                # keeping the comments that stood between it and the next key.
                kept = _trailing_blank_lines(segments[extra][1])
                kept = kept[kept.find("#") :] if "#" in kept else ""
                segments[extra : extra + 1] = [(None, kept)] if kept else []
            index = found[0] if found and value is not None else None
            if value is None:
                continue
            text = yamlsubset.dump_item(key, value, nl)
            if index is None:
                if segments and not segments[-1][1].endswith(("\n", "\r")):
                    last_key, last_text = segments[-1]
                    segments[-1] = (last_key, last_text + nl)
                segments.append((key, text))
            else:
                segments[index] = (key, text + _trailing_blank_lines(segments[index][1]))
        if body is None:
            new_body = self.body
        else:
            # Keep the file's layout: the blank lines between the frontmatter and the text.
            layout = self.body[: len(self.body) - len(self.body.lstrip("\r\n"))]
            text = body.lstrip("\r\n")
            # A text memoryctl writes ends its last line, as every file it writes does.
            if text and not text.endswith(("\n", "\r")):
                text += "\n"
            new_body = layout + _with_newlines(text, nl)
        return self._rebuilt(segments, new_body)

    def with_key_text(self, key: str, text: str) -> NoteFile:
        """A copy in which one key's lines are exactly `text` (as an older version of the
        file wrote them), where the key stands or else at the end. Nothing else changes."""
        text = text[: len(text) - len(_trailing_blank_lines(text))]
        text = _with_newlines(text if text.endswith("\n") else text + "\n", self.newline)
        segments = list(self.segments)
        found = [i for i, (k, _) in enumerate(segments) if k == key]
        if found:
            index = found[0]
            segments[index] = (key, text + _trailing_blank_lines(segments[index][1]))
        else:
            if segments and not segments[-1][1].endswith(("\n", "\r")):
                segments[-1] = (segments[-1][0], segments[-1][1] + self.newline)
            segments.append((key, text))
        return self._rebuilt(segments, self.body)

    def _rebuilt(self, segments: list[tuple[str | None, str]], body: str) -> NoteFile:
        nl = self.newline
        note = NoteFile(
            bom=self.bom,
            newline=nl,
            has_frontmatter=True,
            open_fence=self.open_fence or "---" + nl,
            frontmatter="".join(text for _, text in segments),
            close_fence=self.close_fence or "---" + nl,
            body=body,
        )
        # Read the result back: a write must never produce a file we cannot read.
        reread = parse_text(note.to_text())
        note.data = reread.data
        return note


def _trailing_blank_lines(text: str) -> str:
    """The blank lines and comments that separate a key's value from the next key."""
    lines = text.splitlines(keepends=True)
    kept = 0
    for line in reversed(lines[1:]):
        if line.strip() and not line.startswith("#"):
            break
        kept += 1
    return "".join(lines[len(lines) - kept :])


def _with_newlines(text: str, nl: str) -> str:
    normalized = text.replace("\r\n", "\n")
    return normalized.replace("\n", nl) if nl != "\n" else normalized


def _split_segments(fm_text: str) -> list[tuple[str | None, str]]:
    """Split frontmatter text into top-level keys, each with all of its lines."""
    segments: list[tuple[str | None, str]] = []
    for line in fm_text.splitlines(keepends=True):
        match = _TOP_KEY.match(line)
        if match and not line[0].isspace():
            key = match.group(0).rstrip()[:-1].strip().strip("\"'")
            segments.append((key, line))
        elif segments:
            key, text = segments[-1]
            segments[-1] = (key, text + line)
        else:
            segments.append((None, line))
    return segments


def decode(raw: bytes) -> str:
    if len(raw) > MAX_FILE_BYTES:
        raise NoteError(f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    if not raw.removeprefix(BOM.encode()).strip():
        raise NoteError("file is empty")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NoteError(f"not valid UTF-8 (byte {error.start})") from None


def parse_text(text: str) -> NoteFile:
    """Split a memory's text into its parts and read its frontmatter.

    Raises NoteError with a reason a person can act on.
    """
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    first_break = text.find("\n")
    if first_break > 0 and not _OTHER_BREAKS.search(text):
        return _parse_split(text, bom, first_break)
    return _parse_lines(text, bom)


def _parse_lines(text: str, bom: bool) -> NoteFile:
    """`parse_text` line by line, for a text with any kind of line break."""
    newline = "\r\n" if "\r\n" in text[:4096] else "\n"
    lines = text.splitlines(keepends=True)
    if not lines or not _FENCE.fullmatch(lines[0].rstrip("\r\n")):
        return NoteFile(bom=bom, newline=newline, has_frontmatter=False, body=text)
    for end in range(1, len(lines)):
        if _CLOSE.fullmatch(lines[end].rstrip("\r\n")):
            break
    else:
        raise NoteError("frontmatter has no closing '---' line")
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"  # the frontmatter's, not the body's
    return _with_frontmatter(
        bom, newline, lines[0], "".join(lines[1:end]), lines[end], "".join(lines[end + 1 :])
    )


def _parse_split(text: str, bom: bool, first_break: int) -> NoteFile:
    """`parse_text` for a text whose only line break is "\n", from searches alone."""
    if not _FENCE.fullmatch(text, 0, first_break):
        return NoteFile(bom=bom, newline="\n", has_frontmatter=False, body=text)
    close = _CLOSE_LINE.search(text, first_break + 1)
    if close is None:
        raise NoteError("frontmatter has no closing '---' line")
    after = close.end() + 1  # past the closing line's "\n", when it has one
    return _with_frontmatter(
        bom,
        "\n",
        text[: first_break + 1],
        text[first_break + 1 : close.start()],
        text[close.start() : after],
        text[after:],
    )


def _with_frontmatter(
    bom: bool, newline: str, open_fence: str, fm_text: str, close_fence: str, body: str
) -> NoteFile:
    try:
        data = yamlsubset.load(fm_text)
    except yaml.YAMLError as error:
        raise NoteError(f"malformed YAML frontmatter: {yaml_reason(error, fm_text)}") from None
    except yamlsubset.TooLarge as error:
        raise NoteError(f"frontmatter refused: {error}") from None
    except ValueError as error:
        raise NoteError(f"malformed YAML frontmatter: {error}") from None
    except (LookupError, AttributeError, TypeError, ArithmeticError, RecursionError) as error:
        # PyYAML's constructors fail like this on e.g. `!!bool maybe` or `!!int ''`.
        raise NoteError(f"malformed YAML frontmatter: cannot build a value ({error!r})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise NoteError(f"frontmatter is not a mapping (it is a {yaml_type(data)})")
    return NoteFile(
        bom=bom,
        newline=newline,
        has_frontmatter=True,
        open_fence=open_fence,
        frontmatter=fm_text,
        close_fence=close_fence,
        body=body,
        data={str(k): v for k, v in data.items()},
    )


def template_split(text: str) -> tuple[str, str] | None:
    """(the placeholder line, the body) when the frontmatter is a template's, else None.

    A template is not a memory: its keys are placeholders that a plugin fills in when it
    makes a note, so they are never read as keys (most are not even valid YAML).
    """
    if "{{" not in text and "<%" not in text:
        return None
    lines = text.removeprefix(BOM).splitlines(keepends=True)
    if not lines or not _FENCE.fullmatch(lines[0].rstrip("\r\n")):
        return None
    for end in range(1, len(lines)):
        if _CLOSE.fullmatch(lines[end].rstrip("\r\n")):
            break
    else:
        return None
    match = _PLACEHOLDER_LINE.search("".join(lines[1:end]))
    if match is None:
        return None
    return match.group(0).strip(), "".join(lines[end + 1 :])


def parse_bytes(raw: bytes) -> NoteFile:
    return parse_text(decode(raw))


def yaml_reason(error: yaml.YAMLError, fm_text: str) -> str:
    """Why a frontmatter could not be read, with its line in the file (the opening
    fence is line 1)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    if mark is not None:
        # +2: the opening fence is line 1 of the file, and marks count from 0.
        return f"{problem} at line {mark.line + 2}"
    character = getattr(error, "character", None)  # a ReaderError: an unreadable character
    if isinstance(character, int) and chr(character) in fm_text:
        return f"{problem} at line {fm_text.count(chr(10), 0, fm_text.index(chr(character))) + 2}"
    return problem


def yaml_type(data: object) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(data), type(data).__name__
    )


def new_note(data: dict[str, Any], body: str) -> NoteFile:
    """A fresh file with this frontmatter, in memoryctl's own layout: the note its text
    parses as. Where every value is of a kind that reads back as itself (text, numbers,
    booleans, UTC moments, flat lists and mappings of those), the note is made from the
    values at hand instead of reading the text it was just written as."""
    frontmatter = "".join(yamlsubset.dump_item(k, v) for k, v in data.items())
    body = body.replace("\r\n", "\n")
    if body and not body.endswith("\n"):
        body += "\n"
    rest = "\n" + body if body else ""
    read_back = _as_read_back(data, frontmatter)
    if read_back is None:
        return parse_text("---\n" + frontmatter + "---\n" + rest)
    return NoteFile(
        bom=False,
        newline="\n",
        has_frontmatter=True,
        open_fence="---\n",
        frontmatter=frontmatter,
        close_fence="---\n",
        body=rest,
        data=read_back,
    )


_SCALARS = (str, int, bool, type(None))


def _as_read_back(data: dict[str, Any], frontmatter: str) -> dict[str, Any] | None:
    """The values as reading `frontmatter` (their dump) gives them, or None when that is
    not certain without reading it: another kind of value, a line break other than
    `\n` (which would split the text into other lines), or a size the reader refuses."""
    if len(frontmatter) * 4 > yamlsubset.MAX_TEXT_BYTES:
        return None
    if len(frontmatter.splitlines()) != frontmatter.count("\n"):
        return None
    found: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            return None
        if isinstance(value, _SCALARS):
            found[key] = value
        elif isinstance(value, dt.datetime):
            if value.tzinfo is not dt.UTC or value.microsecond or value.year < 1000:
                return None
            found[key] = value
        elif isinstance(value, list | tuple):
            if not all(isinstance(item, _SCALARS) for item in value):
                return None
            found[key] = list(value)
        elif isinstance(value, dict):
            if not all(isinstance(k, str) and isinstance(v, _SCALARS) for k, v in value.items()):
                return None
            found[key] = dict(value)
        else:
            return None
    return found


def replayed(committed: bytes, before: bytes, after: bytes) -> bytes | None:
    """memoryctl's change (from `before` to `after`) applied to the committed text.

    When a file holds a person's uncommitted edits and memoryctl changes some keys (or
    the body), this is what the commit records: only memoryctl's change. None when one
    of the three cannot be read as a memory file.
    """
    try:
        head, old, new = parse_bytes(committed), parse_bytes(before), parse_bytes(after)
    except NoteError:
        return None
    changes: dict[str, Any] = {
        key: value for key, value in new.data.items() if old.data.get(key, _UNSET) != value
    }
    changes.update({key: None for key in old.data if key not in new.data})
    try:
        result = head.with_changes(changes) if changes else head
    except NoteError:
        return None
    if new.body != old.body:
        result = replace(result, body=new.body)
    return result.to_bytes()
