"""A fast reader and a careful writer for the small subset of YAML that frontmatter uses.

Loading 100,000 frontmatters with libyaml takes over ten seconds, far more than the
index's whole budget. Nearly every memory's frontmatter is flat: scalars, short lists,
one nested mapping (`source`) and a list of small mappings (`anchors`). `load_fast`
reads exactly that subset and returns `None` for anything else, so the caller falls
back to PyYAML. It is conservative: whenever a scalar could mean something subtle in
YAML 1.1 (octal, sexagesimal, merge keys, tags, anchors), it gives up rather than guess.

`dump_item` writes values in the same subset, so files that memoryctl writes are
always read back on the fast path.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from typing import Any

import yaml

from memoryctl.moments import iso

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# What PyYAML refuses to read (it takes printable text only) or reads as a line break
# where str.splitlines does not agree: text with any of these is left to PyYAML.
_NOT_FAST = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
# YAML separates tokens with spaces only; str.strip() would also eat tabs (an error in
# YAML), NBSP and other Unicode spaces (text in YAML).
_SPACE = " "
_NULLS = {"", "~", "null", "Null", "NULL"}
# A plain scalar may not start with a YAML indicator (or "-" followed by a space).
_INDICATORS = set("?:,[]{}#&*!|>'\"%@` \t")
_STR = "tag:yaml.org,2002:str"
_resolver = yaml.resolver.Resolver()
# The first characters that can start an implicitly typed scalar (None: any can).
_RESOLVED_FIRST: frozenset[str] | None = (
    None
    if None in yaml.resolver.Resolver.yaml_implicit_resolvers
    else frozenset(yaml.resolver.Resolver.yaml_implicit_resolvers)
)
_CONSTRUCTORS = {
    tag: yaml.constructor.SafeConstructor.yaml_constructors[tag]
    for tag in (
        "tag:yaml.org,2002:null",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
    )
}


@functools.lru_cache(maxsize=4096)
def _plain_tag(text: str) -> str:
    """The tag YAML 1.1 gives a plain scalar. Keys and common values (`status`,
    `active`, `default`) repeat in every file, so the answer is remembered."""
    return _resolver.resolve(yaml.ScalarNode, text, (True, False))


class Unsupported(Exception):
    """The text uses YAML beyond the fast subset."""


_constructor = yaml.constructor.SafeConstructor()


def scalar(text: str) -> Any:
    """Read one scalar as YAML 1.1 (PyYAML) would, or raise Unsupported."""
    if _NOT_FAST.search(text):
        raise Unsupported(text)
    return _scalar(text)


# The moments memoryctl writes (`2026-06-26T16:27:01Z`) and plain dates, which every
# memory holds and which are read here directly: PyYAML's implicit resolver and its
# timestamp constructor take about ten times as long, and give the same value.
_UTC_MOMENT = re.compile(
    "([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2}):([0-9]{2})Z)?", re.ASCII
)


@functools.lru_cache(maxsize=4096)
def _scalar(text: str) -> Any:
    """`scalar`, for text already known to hold only characters PyYAML reads. Its values
    are immutable, and most (`kind`, `status`, tags) repeat from file to file, so they
    are remembered."""
    if text in _NULLS:
        return None
    moment = _UTC_MOMENT.fullmatch(text)
    if moment is not None:
        parts = [int(part) for part in moment.groups() if part is not None]
        try:
            if len(parts) == 3:
                return dt.date(*parts)
            return dt.datetime(*parts, tzinfo=dt.UTC)
        except ValueError:
            return text  # as _Loader does: an impossible date stays text
    first = text[0]
    if first == '"':
        if len(text) < 2 or not text.endswith('"'):
            raise Unsupported(text)
        inner = text[1:-1]
        if "\\" in inner:
            if re.search(r"\\u[dD][89abAB]", inner):
                raise Unsupported(text)  # JSON joins a surrogate pair; YAML does not
            try:
                value = json.loads(text)
            except ValueError:
                raise Unsupported(text) from None
            return value
        if '"' in inner:
            raise Unsupported(text)
        return inner
    if first == "'":
        if len(text) < 2 or not text.endswith("'"):
            raise Unsupported(text)
        inner = text[1:-1]
        if "'" in inner.replace("''", ""):
            raise Unsupported(text)
        return inner.replace("''", "'")
    if first in _INDICATORS or (first == "-" and text[1:2] in ("", " ")):
        raise Unsupported(text)
    if ": " in text or " #" in text or text.endswith(":") or "\t" in text or text != text.strip():
        raise Unsupported(text)
    # The type of a plain scalar is PyYAML's own implicit-resolver decision, so the fast
    # path can never read `012`, `1:30`, `1_000` or `.inf` differently from PyYAML.
    if _RESOLVED_FIRST is not None and first not in _RESOLVED_FIRST:
        return text  # no implicit type starts with this character: it is a string
    tag = _plain_tag(text)
    if tag == _STR:
        return text
    construct = _CONSTRUCTORS.get(tag)
    if construct is None:
        raise Unsupported(text)
    try:
        return construct(_constructor, yaml.ScalarNode(tag, text))
    except ValueError:
        if tag.endswith(":timestamp"):
            return text  # as _Loader does: an impossible date stays text
        raise Unsupported(text) from None


def _flow_list(text: str) -> list[Any]:
    inner = text[1:-1].strip(_SPACE)
    if not inner:
        return []
    # "?" ends a plain scalar in PyYAML's flow context (but not in libyaml's).
    if any(c in inner for c in "[]{}'?") or '"' in inner:
        raise Unsupported(text)
    items = [item.strip(_SPACE) for item in inner.split(",")]
    if "" in items:
        raise Unsupported(text)  # `[a, b,]` has two items in YAML, `[a,,b]` is an error
    return [_scalar(item) for item in items]


def _value(text: str) -> Any:
    text = text.strip(_SPACE)
    if text.startswith("["):
        if not text.endswith("]"):
            raise Unsupported(text)
        return _flow_list(text)
    if text.startswith("{"):
        if text == "{}":
            return {}
        raise Unsupported(text)
    return _scalar(text)


def _split_pair(line: str) -> tuple[str, str]:
    key, sep, rest = line.partition(":")
    if not sep or not _KEY.fullmatch(key) or (rest and rest[0] != " "):
        raise Unsupported(line)
    if _plain_tag(key) != _STR:
        raise Unsupported(line)  # YAML 1.1 reads keys like `on` or `null` as other types
    return key, rest


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[str]) -> Any:
    """A nested block: a list of scalars, a list of flat mappings, or a flat mapping."""
    if lines[0].lstrip(" ").startswith("-"):
        return _block_list(lines)
    base = _indent(lines[0])
    result: dict[str, Any] = {}
    for line in lines:
        if _indent(line) != base:
            raise Unsupported(line)
        key, rest = _split_pair(line.strip(_SPACE))
        if key in result or not rest.strip(_SPACE):
            raise Unsupported(line)
        result[key] = _value(rest)
    return result


def _block_list(lines: list[str]) -> list[Any]:
    base = _indent(lines[0])
    items: list[list[str]] = []
    for line in lines:
        indent = _indent(line)
        stripped = line[indent:]
        if indent == base and (stripped == "-" or stripped.startswith("- ")):
            items.append([stripped[2:]])
        elif indent > base + 1 and items:
            items[-1].append(line)
        else:
            raise Unsupported(line)
    result: list[Any] = []
    for first, *more in items:
        if not first.strip(_SPACE):
            if more:
                raise Unsupported(first)  # "-" then a mapping on the lines below
            result.append(None)  # a blank item, as an editor leaves it: YAML reads null
            continue
        if not more and not re.match(r"[A-Za-z_][A-Za-z0-9_-]*:( |$)", first):
            result.append(_value(first))
            continue
        # A mapping item: "- key: v" then keys aligned under the first one.
        column = base + 2
        mapping_lines = [" " * column + first, *more]
        mapping = _block(mapping_lines)
        if not isinstance(mapping, dict):
            raise Unsupported(first)
        result.append(mapping)
    return result


def load_fast(text: str) -> dict[str, Any] | None:
    """Read frontmatter text in the fast subset; None means: ask PyYAML."""
    result: dict[str, Any] = {}
    if _NOT_FAST.search(text):
        return None
    lines = text.splitlines()
    i = 0
    try:
        while i < len(lines):
            line = lines[i]
            if not line.strip(_SPACE):
                i += 1
                continue
            if line[0] in " #-\t":
                return None
            key, rest = _split_pair(line)
            if key in result:
                return None
            i += 1
            if rest.strip(_SPACE):
                result[key] = _value(rest)
                continue
            block: list[str] = []
            while i < len(lines) and lines[i][:1] in (" ", "-") and lines[i].strip(_SPACE):
                block.append(lines[i])
                i += 1
            if i < len(lines) and lines[i].strip(_SPACE) and lines[i][:1] in (" ", "\t"):
                return None
            result[key] = _block(block) if block else None
    except Unsupported:
        return None
    return result


def load(text: str) -> Any:
    """Read frontmatter: the fast subset when it applies, PyYAML otherwise.

    Raises TooLarge for frontmatter past the limits below, whichever reader reads it.
    """
    fast = load_fast(text)
    if fast is not None:
        if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
            _check_texts(fast)
        return fast
    return yaml.load(text, Loader=_Loader)


# Limits on what a frontmatter may hold, so that one hostile or broken file cannot take
# the vault down (a few hundred bytes of nested aliases expand to gigabytes).
MAX_ALIAS_NODES = 100  # nodes that aliases may add, once expanded
MAX_TEXT_BYTES = 64 * 1024  # one text value, in UTF-8


class TooLarge(ValueError):
    """The frontmatter is past one of the reader's limits; it is not read at all."""


def _check_texts(value: Any) -> None:
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if len(item) * 4 > MAX_TEXT_BYTES and len(item.encode("utf-8")) > MAX_TEXT_BYTES:
                raise TooLarge(f"a text value is longer than {MAX_TEXT_BYTES // 1024} KB")
        elif isinstance(item, dict):
            todo += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            todo += item


def check_node(root: yaml.Node) -> None:
    """Refuse a composed document whose aliases expand past `MAX_ALIAS_NODES`, that
    refers to itself, or that holds a text longer than `MAX_TEXT_BYTES`.

    Aliases share the node they name, so composing is cheap; expanding is what costs.
    The expanded size is counted once per distinct node.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def expanded(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise TooLarge("an alias refers to the value that holds it")
        open_nodes.add(key)
        if isinstance(node, yaml.ScalarNode):
            _check_texts(node.value)
            total = 1
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(expanded(child) for child in node.value)
        else:
            total = 1 + sum(expanded(k) + expanded(v) for k, v in node.value)
        open_nodes.discard(key)
        sizes[key] = total
        if total - len(sizes) > MAX_ALIAS_NODES:
            raise TooLarge(f"its aliases expand to more than {MAX_ALIAS_NODES} values")
        return total

    expanded(root)


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """PyYAML's safe loader, within the limits above, except that an impossible date
    stays text.

    `created: 2026-13-45` then reaches the memory reader, which reports "invalid date"
    for that one key instead of losing the whole frontmatter.
    """

    def get_single_node(self):  # type: ignore[no-untyped-def]
        node = super().get_single_node()
        if node is not None:
            check_node(node)
        return node

    def construct_yaml_timestamp(self, node):  # type: ignore[no-untyped-def]
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)


# --- writing -----------------------------------------------------------------------


def _is_plain(text: str) -> bool:
    if not text or "\n" in text or "\r" in text or any(c in text for c in ",[]{}"):
        return False
    if text[0].isdigit() or text[0] in "+-.":
        return False  # quoted, so YAML 1.2 readers (Obsidian, JavaScript) see text too
    try:
        plain = scalar(text) == text
    except Unsupported:
        return False
    # An impossible date such as 2026-13-45 reads back as text here, but other YAML
    # readers fail on it: write it quoted.
    return plain and _plain_tag(text) == _STR


def _flows(value: Any) -> bool:
    """Can this list item be written inside a flow list `[a, b]`?"""
    if isinstance(value, dict | list | tuple):
        return False
    # Quotes send a flow list to the slow path; "?" breaks it for PyYAML's own parser.
    return not isinstance(value, str) or (_is_plain(value) and not any(c in value for c in "'\"?"))


def _quoted(text: str) -> str:
    """A double-quoted scalar, with what YAML cannot hold raw escaped."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _NOT_FAST.sub(lambda match: f"\\u{ord(match.group()):04x}", quoted)


@functools.lru_cache(maxsize=1024, typed=True)
def _dump_key(key: Any) -> str:
    key = str(key)
    if _KEY.fullmatch(key) and _plain_tag(key) == _STR:
        return key
    return _quoted(key)  # `on`, `null`, `1` or `my key` would not read back as this text


def dump_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        # YAML 1.1 needs a dot: `1e+20` is text to it, `1.0e+20` a float.
        return text if "." in text else text.replace("e", ".0e")
    if isinstance(value, dt.datetime):
        offset = value.utcoffset()
        if offset is not None and offset % dt.timedelta(minutes=1):
            value = value.astimezone(dt.UTC)  # YAML offsets have no seconds
        if value.utcoffset() == dt.timedelta(0) and not value.microsecond:
            return iso(value)  # how memoryctl writes moments
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    if _is_plain(text):
        return text
    return _quoted(text)


def _nested(value: Any) -> bool:
    """Does this value hold collections deeper than memoryctl's own layouts (below)?"""
    if isinstance(value, dict):
        return any(isinstance(v, dict | list | tuple) for v in value.values())
    if isinstance(value, list | tuple):
        return any(
            isinstance(i, list | tuple) or (isinstance(i, dict) and _nested(i)) for i in value
        )
    return False


def _plain_collections(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain_collections(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_collections(v) for v in value]
    return value


def dump_item(key: str, value: Any, newline: str = "\n") -> str:
    """One top-level key and its value, ending with a newline."""
    if _nested(value):
        # Another tool's data kept as it had it (mem0's `metadata`): PyYAML writes it.
        text = yaml.safe_dump(
            {key: _plain_collections(value)},
            allow_unicode=True,
            sort_keys=False,
            default_flow_style=False,
            width=2**16,
        )
        return text.replace("\n", newline) if newline != "\n" else text
    key = _dump_key(key)
    if isinstance(value, dict):
        if not value:
            return f"{key}: {{}}{newline}"
        lines = [f"{key}:"]
        lines += [f"  {_dump_key(k)}: {dump_scalar(v)}" for k, v in value.items()]
        return newline.join(lines) + newline
    if isinstance(value, list | tuple):
        if not value:
            return f"{key}: []{newline}"
        if all(_flows(v) for v in value):
            return f"{key}: [{', '.join(dump_scalar(v) for v in value)}]{newline}"
        lines = [f"{key}:"]
        for item in value:
            if isinstance(item, dict) and item:
                pairs = [f"{_dump_key(k)}: {dump_scalar(v)}" for k, v in item.items()]
                lines.append("  - " + pairs[0])
                lines += ["    " + pair for pair in pairs[1:]]
            elif isinstance(item, dict):
                lines.append("  - {}")  # not the text "{}"
            else:
                lines.append("  - " + dump_scalar(item))
        return newline.join(lines) + newline
    return f"{key}: {dump_scalar(value)}{newline}"
