"""What a memory is: the typed view of one file's frontmatter and body.

`memory_from_note` reads a frontmatter mapping leniently. A key with a wrong type or
an unreadable date does not make the memory disappear: the memory keeps the default
for that key and carries a problem that `doctor` and `list` report.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from memoryctl import lifecycle
from memoryctl.moments import CREATED_KEYS, UPDATED_KEYS, dated_by, parse_moment

KINDS = ("fact", "preference", "constraint", "plan", "event", "procedure", "summary", "correction")
STATUSES = lifecycle.STATES
SOURCE_KINDS = ("user", "tool", "document", "inference", "import")
# From most public to most private; a profile sees its level and every level before it.
VISIBILITIES = ("public", "shared", "private", "secret")
DEFAULT_VISIBILITY = "private"
DEFAULT_NAMESPACE = "default"

# Claude Code's memory files say what they hold in `type`; a `kind` of memoryctl's own
# wins. `feedback` is how the person wants the agent to work, which memoryctl calls a
# preference; `user`, `project` and `reference` are facts about the person, the work
# and where to look. Claude Code reads the type as a model wrote it, so `Feedback` and
# ` feedback ` are the same type.
_KIND_OF_TYPE = {"user": "fact", "feedback": "preference", "project": "fact", "reference": "fact"}


def kind_of_claude_type(data: Mapping[str, Any]) -> str | None:
    """The kind a Claude Code memory's `type` means, or None for another value. Newer
    versions write it inside `metadata:` (`metadata: {type: feedback}`)."""
    value = data.get("type")
    metadata = data.get("metadata")
    if value is None and isinstance(metadata, dict):
        value = metadata.get("type")
    return _KIND_OF_TYPE.get(value.strip().casefold()) if isinstance(value, str) else None


_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


@dataclass(frozen=True)
class Anchor:
    path: str
    symbol: str | None = None
    sha: str | None = None

    def as_dict(self) -> dict[str, str]:
        data = {"path": self.path}
        if self.symbol:
            data["symbol"] = self.symbol
        if self.sha:
            data["sha"] = self.sha
        return data


@dataclass(frozen=True)
class DecisionRecord:
    """What a decision wrote into a memory: its `retired` or `needs_review` mapping, as
    far as it can be read (a part that cannot be read is None; it is no problem)."""

    at: str | None = None
    reason: str | None = None
    proposal: str | None = None


@dataclass(frozen=True)
class Memory:
    id: str
    path: str
    title: str
    body: str = ""
    aliases: tuple[str, ...] = ()
    description: str | None = None
    kind: str = "fact"
    status: str = "active"
    pinned: bool = False
    pin_order: float | None = None
    created: str = ""
    updated: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    checked: str | None = None
    expires: str | None = None
    tags: tuple[str, ...] = ()
    namespace: str = DEFAULT_NAMESPACE
    visibility: str = DEFAULT_VISIBILITY
    source_kind: str | None = None
    source_ref: str | None = None
    source_digest: str | None = None  # an import's digest of the source text it read
    confidence: float | None = None
    deprecates: tuple[str, ...] = ()
    detached: tuple[str, ...] = ()
    derived_from: tuple[str, ...] = ()
    retires: tuple[str, ...] = ()
    anchors: tuple[Anchor, ...] = ()
    subject: str | None = None
    predicate: str | None = None
    value: str | None = None
    retired_record: DecisionRecord | None = None
    review_record: DecisionRecord | None = None
    has_id: bool = True
    problems: tuple[str, ...] = ()
    broken: str | None = None

    @property
    def is_correction(self) -> bool:
        return bool(self.deprecates)

    @property
    def order_key(self) -> tuple[str, str]:
        """Older-to-newer order: by `created`, then by id when two share a time."""
        return (self.created, self.id)

    @cached_property
    def title_group(self) -> tuple[str, str, str] | None:
        """`group_key`, worked out once per memory: every bundle asks it of every pin."""
        return group_key(self)

    @cached_property
    def text(self) -> str:
        """The memory as one line of context: the body, or else its description or title.
        A heading that opens the body and names the note (an Obsidian note's `# Overview`)
        is its first words, `Overview:`, not a `#` in the middle of the line.

        Worked out once per memory: a bundle asks for it a hundred times."""
        body = self.body
        named = leading_h1(body)
        if named is not None and normalized(named) == normalized(self.title):
            rest = body.lstrip("\r\n").split("\n", 1)[1:]
            body = f"{named}: {rest[0]}" if rest and rest[0].strip() else named
        body = " ".join(body.split())
        return body or self.description or self.title

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "aliases": list(self.aliases),
            "description": self.description,
            "kind": self.kind,
            "status": self.status,
            "pinned": self.pinned,
            "pin_order": self.pin_order,
            "created": self.created,
            "updated": self.updated,
            "valid_from": self.valid_from,
            "valid_until": self.valid_until,
            "checked": self.checked,
            "expires": self.expires,
            "tags": list(self.tags),
            "namespace": self.namespace,
            "visibility": self.visibility,
            "source": {"kind": self.source_kind, "ref": self.source_ref},
            "confidence": self.confidence,
            "deprecates": list(self.deprecates),
            "detached": list(self.detached),
            "derived_from": list(self.derived_from),
            "retires": list(self.retires),
            "anchors": [a.as_dict() for a in self.anchors],
            "subject": self.subject,
            "predicate": self.predicate,
            "value": self.value,
            "problems": list(self.problems),
            "error": self.broken,
            "body": self.body,
        }


def marks(memory: Memory, overtaken: bool = False) -> str:
    """The four marks the CLI and the TUI put before a memory: ! * ~ and ? or x."""
    flags = [
        "!" if memory.broken or memory.problems else " ",
        "*" if memory.pinned else " ",
        "~" if overtaken else " ",
        {"needs_review": "?", "retired": "x"}.get(memory.status, " "),
    ]
    return "".join(flags)


def normalized(text: str | None) -> str:
    """Values, subjects and predicates are compared after folding case and whitespace."""
    return " ".join((text or "").casefold().split())


def folded_title(title: str | None) -> str:
    """A title as two titles are compared: Unicode case folding (composed, so "café"
    is one form however it was typed), runs of whitespace as one space, and trailing
    punctuation dropped: "Indent  with Tabs." and "indent with tabs" are one title."""
    text = unicodedata.normalize("NFC", normalized(title))
    end = len(text)
    while end and (unicodedata.category(text[end - 1]).startswith("P") or text[end - 1] == " "):
        end -= 1
    return text[:end]


def is_current(memory: Memory) -> bool:
    """Only a readable `active` memory that is no template can contest another."""
    return memory.status == "active" and not memory.broken and memory.kind != TEMPLATE_KIND


def title_key(memory: Memory) -> str | None:
    """What the index keeps of a current memory's title (None for any other, which
    contests nothing and is contested by nothing): its folder and its folded title.
    Two notes of one title in two folders are two things: an Obsidian vault's
    `ProjA/Overview.md` and `ProjB/Overview.md`; `add`, `remember` and the pair sync
    keeps write into one folder."""
    if not is_current(memory):
        return None
    title = folded_title(memory.title)
    return f"{posixpath.dirname(memory.path)}/{title}" if title else None


def group_key(memory: Memory) -> tuple[str, str, str] | None:
    """Memories are about one thing when they share this: folder and folded title,
    kind and namespace."""
    key = title_key(memory)
    return None if key is None else (key, memory.kind, memory.namespace)


def path_id(relpath: str) -> str:
    """The identity of a file that has no `id` yet: stable while the file keeps its path."""
    digest = hashlib.sha1(relpath.encode("utf-8")).digest()
    return _encode(int.from_bytes(digest[:7], "big"), 10)


def new_id(randbits: int) -> str:
    return _encode(randbits, 10)


def _encode(number: int, length: int) -> str:
    chars = []
    for _ in range(length):
        number, rest = divmod(number, 32)
        chars.append(_ID_ALPHABET[rest])
    return "".join(reversed(chars))


# --- reading frontmatter ---------------------------------------------------------------


def scalar_text(value: Any) -> str | None:
    """A YAML scalar as the text its owner typed: `true`, `2024-01-05`, `3`.

    None for what is not a scalar (a list or a mapping)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _string_list(value: Any, key: str, problems: list[str]) -> tuple[str, ...]:
    """A list as its owner means it: blank items are dropped and a date, a number or a
    boolean is its text. Only an item that is itself a list or a mapping is skipped and
    reported, and so is a value that is neither a list nor text (`deprecates: true`)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        problems.append(f"{key}: must be a list of strings")
        return ()
    texts = []
    unreadable = 0
    for item in value:
        if item is None:
            continue  # `- ` with nothing after it: a blank item
        text = scalar_text(item)
        if text is None:
            unreadable += 1
        elif text.strip():
            texts.append(text)
    if unreadable:
        what = "1 item is" if unreadable == 1 else f"{unreadable} items are"
        problems.append(f"{key}: must be a list of strings; {what} a list or a mapping, skipped")
    return tuple(texts)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.date | dt.datetime):
        return parse_moment(value)
    return str(value)


def _anchors(value: Any, problems: list[str]) -> tuple[Anchor, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    anchors = []
    for item in items:
        if isinstance(item, str) and item.strip():
            path, _, symbol = item.partition("#")
            anchors.append(Anchor(path=path, symbol=symbol or None))
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            anchors.append(
                Anchor(
                    path=item["path"],
                    symbol=_text(item.get("symbol")),
                    sha=_text(item.get("sha")),
                )
            )
        else:
            problems.append("anchors: each anchor needs a path")
    return tuple(anchors)


_ATX_H1 = re.compile(r" {0,3}#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")


def leading_h1(body: str) -> str | None:
    """The text of a level-one heading on the body's first line (after blank lines).

    Only a heading that opens the note names it: Obsidian titles a note by its file name,
    and a note that starts with `## Books` is not called "Books".
    """
    first = body.lstrip("\r\n").split("\n", 1)[0].rstrip("\r")
    match = _ATX_H1.fullmatch(first)
    return (match.group(1).strip() or None) if match else None


def file_title(relpath: str) -> str:
    name = relpath.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def title_from(relpath: str, body: str) -> str:
    """A note's title when its frontmatter names none: a first-line `# H1`, else the
    file's name, as Obsidian shows it."""
    return leading_h1(body) or file_title(relpath)


def _named(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    text = scalar_text(value) if value is not None else None
    return text.strip() if text and text.strip() else None


def memory_from_note(
    relpath: str, data: dict[str, Any], body: str, fallback_created: str
) -> Memory:
    """Read a frontmatter mapping and body into a Memory, collecting problems."""
    problems: list[str] = []

    def moment(key: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        try:
            return parse_moment(value)
        except ValueError:
            problems.append(f"{key}: invalid date {str(value)!r}")
            return None

    def other_date(keys: tuple[str, ...]) -> str | None:
        # Another tool's key: one that holds no date is its owner's text, no problem.
        key = dated_by(data, keys[1:])
        return parse_moment(data[key]) if key is not None else None

    raw_id = data.get("id")
    has_id = isinstance(raw_id, str | int) and bool(str(raw_id).strip())
    if raw_id is not None and not has_id:
        problems.append("id: must be a non-empty string")
    memory_id = str(raw_id).strip() if has_id else path_id(relpath)

    status, status_problem = lifecycle.state_of(data)
    if status_problem:
        problems.append(status_problem)

    pinned_value = data.get("pinned", False)
    pin_order = data.get("pin_order")
    if isinstance(pinned_value, int | float) and not isinstance(pinned_value, bool):
        pin_order, pinned_value = pinned_value, True
    if not isinstance(pinned_value, bool):
        problems.append("pinned: must be true or false")
        pinned_value = False
    if pin_order is not None and not isinstance(pin_order, int | float):
        problems.append("pin_order: must be a number")
        pin_order = None

    source = data.get("source")
    source_kind = source_ref = source_digest = None
    if isinstance(source, dict):
        source_kind = _text(source.get("kind"))
        source_ref = _text(source.get("ref"))
        source_digest = _text(source.get("digest"))
    elif isinstance(source, str):
        source_kind, _, ref = source.partition(":")
        source_ref = ref.strip() or None
        source_kind = source_kind.strip()
    elif source is not None:
        problems.append("source: must be a mapping with kind and ref")

    confidence = data.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool) or not isinstance(confidence, int | float)
    ):
        problems.append("confidence: must be a number")
        confidence = None

    visibility = str(data.get("visibility") or DEFAULT_VISIBILITY)
    if visibility not in VISIBILITIES:
        problems.append(f"visibility: {visibility!r} is not one of {', '.join(VISIBILITIES)}")
        visibility = VISIBILITIES[-1]

    title = _named(data, "title") or _named(data, "name")
    kind = str(data.get("kind") or kind_of_claude_type(data) or "fact")
    deprecates = _string_list(data.get("deprecates"), "deprecates", problems)
    if deprecates and "kind" not in data:
        kind = "correction"

    body = body.lstrip("\r\n")  # the blank line after the frontmatter is layout, not text
    return Memory(
        id=memory_id,
        path=relpath,
        title=title or title_from(relpath, body),
        aliases=_string_list(data.get("aliases"), "aliases", problems),
        description=_named(data, "description"),
        body=body,
        kind=kind,
        status=status,
        pinned=pinned_value,
        pin_order=float(pin_order) if pin_order is not None else None,
        created=moment("created") or other_date(CREATED_KEYS) or fallback_created,
        updated=moment("updated") or other_date(UPDATED_KEYS),
        valid_from=moment("valid_from"),
        valid_until=moment("valid_until"),
        checked=moment("checked"),
        expires=moment("expires"),
        tags=_string_list(data.get("tags"), "tags", problems),
        namespace=str(data.get("namespace") or DEFAULT_NAMESPACE),
        visibility=visibility,
        source_kind=source_kind,
        source_ref=source_ref,
        source_digest=source_digest,
        confidence=float(confidence) if confidence is not None else None,
        deprecates=deprecates,
        detached=_string_list(data.get("detached"), "detached", problems),
        derived_from=_string_list(data.get("derived_from"), "derived_from", problems),
        retires=_string_list(data.get("retires"), "retires", problems),
        anchors=_anchors(data.get("anchors"), problems),
        subject=_text(data.get("subject")),
        predicate=_text(data.get("predicate")),
        value=_text(data.get("value")),
        retired_record=decision_record(data.get("retired")),
        review_record=decision_record(data.get("needs_review")),
        has_id=has_id,
        problems=tuple(problems),
    )


def decision_record(value: Any) -> DecisionRecord | None:
    """A `retired` or `needs_review` mapping; None when the key holds no mapping."""
    if not isinstance(value, dict):
        return None
    at = None
    if value.get("at") is not None:
        try:
            at = parse_moment(value["at"])
        except ValueError:
            at = None
    reason, proposal = value.get("reason"), value.get("proposal")
    return DecisionRecord(
        at,
        str(reason) if reason is not None else None,
        str(proposal) if proposal is not None else None,
    )


def broken_memory(relpath: str, reason: str, fallback_created: str) -> Memory:
    """A file that cannot be read as a memory still has a row, so it is never lost."""
    return Memory(
        id=path_id(relpath),
        path=relpath,
        title=title_from(relpath, ""),
        created=fallback_created,
        has_id=False,
        broken=reason,
    )


TEMPLATE_KIND = "template"


def template_memory(relpath: str, body: str, fallback_created: str) -> Memory:
    """A template file (its frontmatter holds placeholders such as `{{date}}`): listed
    and searched as a template, never read as keys, never put in an agent's context."""
    body = body.lstrip("\r\n")
    return Memory(
        id=path_id(relpath),
        path=relpath,
        title=title_from(relpath, body),
        body=body,
        kind=TEMPLATE_KIND,
        created=fallback_created,
        has_id=False,
    )
