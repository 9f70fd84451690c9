"""A memory file as bytes: untouched files stay identical, a change touches one key only,
and a file memoryctl cannot read says why."""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryctl.moments import iso
from memoryctl.storage import notefile, yamlsubset
from memoryctl.storage.notefile import MAX_FILE_BYTES, NoteError, new_note, parse_bytes, parse_text

BOM = "\ufeff".encode()


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def head_of(note: Any) -> str:
    """The text before the body: BOM, fences and frontmatter."""
    text = note.to_text()
    return text[: len(text) - len(note.body)]


def lines_of(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def without_key(head: str, key: str) -> list[str]:
    """The lines of a head without one top-level key's own lines (its line and the
    indented or `- ` lines under it); comments and blank lines stay."""
    kept: list[str] = []
    skipping = False
    for line in lines_of(head):
        bare = line.rstrip("\r\n")
        if re.match(rf"""["']?{re.escape(key)}["']?[ \t]*:""", line):
            skipping = True
            continue
        if skipping and bare.strip() and (line.startswith((" ", "- ")) or bare == "-"):
            continue
        skipping = False
        kept.append(line)
    return kept


# --- generating valid files --------------------------------------------------------------

keys = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda key: key not in {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
)
# YAML allows any character but controls, surrogates and the two noncharacters U+FFFE, U+FFFF.
words = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\ufffe\uffff"
    ),
    max_size=15,
)
scalars = st.one_of(
    words,
    st.sampled_from(["", "yes", "null", "012", "a: b", "a #b", "it's", "2024-13-45", "-", "?"]),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.dates(),
    st.datetimes(timezones=st.just(dt.UTC)),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(keys, scalars, max_size=3),
    st.lists(st.dictionaries(keys, scalars, min_size=1, max_size=2), max_size=2),
)
# Frontmatter that people write by hand and that memoryctl must keep as it is.
HAND_WRITTEN = [
    "{k}: 'single quoted'\n",
    "{k}: value  # a trailing comment\n",
    "{k}: |\n  literal\n  text\n",
    "{k}: >-\n  folded\n  text\n",
    "{k}:\n- a\n- b\n",
    "{k}:\n  - a\n  -   b\n",
    "{k}: {{a: 1, b: [x, y]}}\n",
    "{k}: &anchor_{k} x\n",
    "{k}: 2024-01-02T10:00:00Z\n",
    "{k}: 2024-13-45\n",
    "{k}:\n  nested:\n    deeper: 1\n",
    '"{k}": a quoted key\n',
    "{k} : a space before the colon\n",
    "{k}:    \n",
    "{k}: 012\n",
]
comments = st.one_of(st.just("#"), words.map(lambda text: "# " + text.strip()))
blanks = st.sampled_from(["", "   "])


@st.composite
def frontmatter_entries(draw: st.DrawFn, must_have: str | None = None) -> list[tuple[str, str]]:
    """(key or "", text) entries: keys with their values, comments and blank lines."""
    names = draw(st.lists(keys, unique=True, max_size=6))
    if must_have is not None and must_have not in names:
        names.insert(draw(st.integers(0, len(names))), must_have)
    entries: list[tuple[str, str]] = []
    for name in names:
        for extra in draw(st.lists(st.one_of(comments, blanks), max_size=2)):
            entries.append(("", extra + "\n"))
        if draw(st.booleans()):
            text = yamlsubset.dump_item(name, draw(values))
        else:
            text = draw(st.sampled_from(HAND_WRITTEN)).format(k=name)
        entries.append((name, text))
    for extra in draw(st.lists(st.one_of(comments, blanks), max_size=2)):
        entries.append(("", extra + "\n"))
    return entries


@st.composite
def memory_files(draw: st.DrawFn, status: bool | None = None) -> bytes:
    """A valid memory file, as a person or a tool might have left it."""
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.booleans())
    body = draw(st.one_of(st.text(max_size=40), st.sampled_from(["", "\n", "# Title\n\nText.\n"])))
    if status is None and not draw(st.booleans()):
        text = "Text first.\n" + body  # no frontmatter
    else:
        must = "status" if status else None
        entries = draw(frontmatter_entries(must_have=must))
        if status is False:
            entries = [(k, t) for k, t in entries if k != "status"]
        fence = draw(st.sampled_from(["---", "--- "]))
        close = draw(st.sampled_from(["---", "..."]))
        front = "".join(text for _, text in entries)
        text = f"{fence}\n{front}{close}\n" + draw(st.sampled_from(["", "\n"])) + body
    text = text.replace("\n", nl) if nl != "\n" else text
    # The body may hold any line endings of its own; the head uses the file's.
    return (BOM if bom else b"") + text.encode()


# --- (a) an untouched file stays identical ---------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory_files())
def test_a_file_memoryctl_only_read_is_written_back_byte_for_byte(raw: bytes) -> None:
    assert parse_bytes(raw).to_bytes() == raw


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="---\n\r\t :#ab'\"[]{}|>!&*\ufeffé", max_size=40))
def test_any_text_that_parses_is_written_back_unchanged(text: str) -> None:
    try:
        note = parse_bytes(text.encode())
    except NoteError:
        return
    assert note.to_bytes() == text.encode()


@pytest.mark.parametrize(
    "raw",
    [
        b"Just a body, no frontmatter.\n",
        b"---\n---\n",
        b"---\n---\nbody",
        b"---\ntitle: x\n---",
        b"---\ntitle: x\n...\nbody\n",
        b"\xef\xbb\xbf---\r\ntitle: x\r\n---\r\nbody\r\n",
        b"---\n# only a comment\n\n---\n",
        b"--- \t\ntitle: x\n---  \nbody\n",
        b"---\ntitle: x\n---\n---\nnot frontmatter\n---\n",
    ],
)
def test_odd_but_valid_files_round_trip(raw: bytes) -> None:
    assert parse_bytes(raw).to_bytes() == raw


# --- (b) a change touches only its key -------------------------------------------------


def check_only_status_changed(raw: bytes, changed: Any, value: Any) -> None:
    before = parse_bytes(raw)
    assert changed.bom == before.bom
    assert changed.to_bytes().startswith(BOM) == raw.startswith(BOM)
    assert changed.body == before.body
    assert changed.to_bytes().endswith(before.body.encode())
    for key, old in before.data.items():
        if key != "status":
            assert same(changed.data[key], old), key
    if value is None:
        assert "status" not in changed.data
        assert changed.keys().count("status") == 0
    else:
        assert changed.data["status"] == value
    head, new_head = head_of(before), head_of(changed)
    # Every other key's text, the comments and the blank lines, in their order (a removed
    # key may take the blank lines under it along).
    kept, new_kept = without_key(head, "status"), without_key(new_head, "status")
    if value is None:
        kept, new_kept = [x for x in kept if x.strip()], [x for x in new_kept if x.strip()]
    assert new_kept == kept
    if before.has_frontmatter:  # the frontmatter keeps the line ending of its fence
        crlf = lines_of(head)[0].endswith("\r\n")
        assert new_head.count("\n") == (new_head.count("\r\n") if crlf else new_head.count("\n"))
        assert crlf or "\r" not in new_head
    assert parse_bytes(changed.to_bytes()).to_bytes() == changed.to_bytes()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory_files(status=True))
def test_retiring_a_memory_rewrites_only_its_status_line(raw: bytes) -> None:
    before = parse_bytes(raw)
    changed = before.with_changes({"status": "retired"})
    check_only_status_changed(raw, changed, "retired")
    assert changed.keys().index("status") == before.keys().index("status")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory_files(status=False))
def test_a_new_key_is_added_at_the_end_of_the_frontmatter(raw: bytes) -> None:
    before = parse_bytes(raw)
    changed = before.with_changes({"status": "retired"})
    check_only_status_changed(raw, changed, "retired")
    assert changed.keys()[-1] == "status"
    close = before.to_text().removesuffix(before.body)
    assert head_of(changed).startswith(close[: len(close) - len(lines_of(close)[-1])])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory_files(status=True))
def test_setting_a_key_to_none_removes_just_that_key(raw: bytes) -> None:
    changed = parse_bytes(raw).with_changes({"status": None})
    check_only_status_changed(raw, changed, None)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory_files(status=None), st.text(max_size=30))
def test_a_new_body_keeps_the_frontmatter_as_it_is(raw: bytes, body: str) -> None:
    before = parse_bytes(raw)
    changed = before.with_changes({}, body=body)
    if before.has_frontmatter:
        assert head_of(changed) == head_of(before)
    assert changed.data == before.data
    assert parse_bytes(changed.to_bytes()).body == changed.body


def test_unknown_keys_and_comments_survive_a_status_change() -> None:
    raw = (
        "\ufeff---\r\n"
        "# written by hand\r\n"
        "title: Deploys\r\n"
        "status: active  # was draft\r\n"
        "# about the tags\r\n"
        "\r\n"
        "tags: [ops, ci]\r\n"
        "x-custom: {a: 1}\r\n"
        "---\r\n"
        "\r\n"
        "Body with a lone \n and a \r in it.\r\n"
    ).encode()
    changed = parse_bytes(raw).with_changes({"status": "retired"})
    assert changed.to_bytes() == raw.replace(
        b"status: active  # was draft\r\n", b"status: retired\r\n"
    )
    assert changed.data["x-custom"] == {"a": 1}


def test_removing_a_key_keeps_the_comment_above_the_next_key() -> None:
    raw = b"---\ntitle: T\npinned: true\n\n# the order among pins\npin_order: 3\n---\nbody\n"
    changed = parse_bytes(raw).with_changes({"pinned": None})
    assert changed.to_bytes() == b"---\ntitle: T\n# the order among pins\npin_order: 3\n---\nbody\n"


def test_several_new_keys_go_at_the_end_in_the_order_given() -> None:
    raw = b"---\ntitle: T\n---\nbody\n"
    changed = parse_bytes(raw).with_changes({"pinned": True, "pin_order": 2, "title": "U"})
    assert changed.to_bytes() == b"---\ntitle: U\npinned: true\npin_order: 2\n---\nbody\n"


def test_a_file_without_frontmatter_gets_one_on_its_first_change() -> None:
    raw = "\ufeffJust text.\r\nMore.\r\n".encode()
    changed = parse_bytes(raw).with_changes({"id": "m1"})
    assert changed.to_bytes() == "\ufeff---\r\nid: m1\r\n---\r\nJust text.\r\nMore.\r\n".encode()


def test_a_key_written_twice_takes_the_new_value() -> None:
    raw = b"---\nstatus: active\ntitle: T\nstatus: draft\n---\n"
    note = parse_bytes(raw)
    assert note.data["status"] == "draft"  # PyYAML: the last one wins
    changed = note.with_changes({"status": "retired"})
    assert changed.data["status"] == "retired"
    assert changed.data["title"] == "T"


def test_a_quoted_key_with_a_colon_is_known_by_its_name() -> None:
    note = parse_bytes(b'---\n"a:b": 1\ntitle: T\n---\n')
    assert note.keys() == ["a:b", "title"]
    assert note.with_changes({"a:b": 2}).data == {"a:b": 2, "title": "T"}


def test_crlf_inside_the_body_does_not_change_the_frontmatter_line_endings() -> None:
    raw = b"---\ntitle: T\n---\npasted\r\ntext\r\n"
    changed = parse_bytes(raw).with_changes({"status": "retired"})
    assert changed.to_bytes() == b"---\ntitle: T\nstatus: retired\n---\npasted\r\ntext\r\n"


# --- (c) a file memoryctl cannot read says why ------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "empty"),
        (b"  \n\n", "empty"),
        (b"\xef\xbb\xbf", "empty"),
        (b"\xef\xbb\xbf\n", "empty"),
        (b"---\ntitle: \xff\n---\n", "not valid UTF-8 (byte 11)"),
        (b"---\ntitle: x\nbody\n", "no closing '---'"),
        (b"---\n", "no closing '---'"),
        (b"---\n- a\n- b\n---\n", "not a mapping (it is a list)"),
        (b"---\njust a sentence\n---\n", "not a mapping (it is a string)"),
        (b"---\n42\n---\n", "not a mapping (it is a number)"),
        (b"---\ntitle: ok\nkey: value: other\n---\n", "line 3"),
        (b"---\ntitle: ok\nbad: [x\nmore: 1\n---\n", "line 4"),
        (b"---\na: 1\n\tb: 2\n---\n", "line 3"),
        (b"---\na: 1\nb: 'x\x07'\n---\n", "line 3"),
        (b"---\na: 1\n\nb: x\x7f\n---\n", "line 4"),
        (b"---\nk: !!bool maybe\n---\n", "malformed YAML"),
        (b"---\nk: !!timestamp someday\n---\n", "malformed YAML"),
        (b"---\nk: !!int ''\n---\n", "malformed YAML"),
        (b"---\nk: !!float ''\n---\n", "malformed YAML"),
        (b"---\nk: !!python/object:os.system x\n---\n", "malformed YAML"),
        (b"---\n? [a]\n: 1\n---\n", "malformed YAML"),
        (b"---\nk: " + b"[" * 100_000 + b"\n---\n", "malformed YAML"),
    ],
)
def test_a_file_that_cannot_be_read_says_why(raw: bytes, reason: str) -> None:
    with pytest.raises(NoteError, match=re.escape(reason)):
        parse_bytes(raw)


def test_malformed_yaml_names_the_line_to_fix() -> None:
    with pytest.raises(NoteError, match=r"^malformed YAML frontmatter: .* at line \d+$"):
        parse_bytes(b"---\ntitle: ok\nkey: value: other\n---\n")


def test_a_file_over_ten_megabytes_is_refused_before_it_is_read() -> None:
    with pytest.raises(NoteError, match="larger than 10 MB"):
        parse_bytes(b"---\ntitle: x\n---\n" + b"a" * MAX_FILE_BYTES)


YAML_BITS = [
    "k: v",
    "k:",
    "  - a",
    "- a",
    "  a: 1",
    "k: [a, b",
    "k: {a: 1",
    "k: !!bool x",
    "k: !!int ''",
    "k: !!float x",
    "k: !!timestamp x",
    "k: !!binary ???",
    "k: !!set {a}",
    "k: !!omap [a]",
    "k: !!str",
    "k: !custom x",
    "? [a, b]",
    ": v",
    "<<: 1",
    "<<: [1]",
    "k: &a [*a]",
    "k: *missing",
    "k: 'a",
    'k: "\\q"',
    "k: |",
    "\t",
    "%TAG ! x",
    "k: 2024-99-99",
    "k: 2024-01-01 99:00:00",
    "just text",
    "'quoted'",
    "1",
    "null",
    "k: \x07",
    "k: \ud7ff",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(YAML_BITS), max_size=5))
def test_broken_frontmatter_only_ever_raises_a_note_error(lines: list[str]) -> None:
    raw = ("---\n" + "\n".join(lines) + "\n---\nbody\n").encode()
    try:
        note = parse_bytes(raw)
    except NoteError as error:
        assert str(error)
    else:
        assert isinstance(note.data, dict)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60))
def test_any_bytes_are_read_or_refused_with_a_note_error(raw: bytes) -> None:
    with contextlib.suppress(NoteError):
        parse_bytes(b"---\n" + raw)


# --- new files -------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(keys, values, max_size=6), st.text(max_size=30))
def test_a_new_memory_reads_back_as_written(data: dict[str, Any], body: str) -> None:
    note = new_note(data, body)
    expected = {
        k: [dict(x) if isinstance(x, dict) else x for x in v] if isinstance(v, list) else v
        for k, v in data.items()
    }
    assert same(note.data, expected)
    text = note.to_text()
    assert text.startswith("---\n")
    front = text[4 : text.index("\n---\n", 3) + 1] if data else ""
    assert yamlsubset.load_fast(front) is not None, front
    assert parse_text(text).to_text() == text
    if body.strip("\r\n"):
        assert note.body.endswith("\n")


@pytest.mark.parametrize(
    "moment", [dt.datetime(999, 1, 1, tzinfo=dt.UTC), dt.datetime(5, 3, 4, 1, 2, 3, tzinfo=dt.UTC)]
)
def test_a_moment_before_the_year_1000_is_written_with_four_digits_and_reads_back(moment):
    note = new_note({"created": moment}, "An old note.")
    text = note.to_text()
    assert f"created: {moment.year:04d}-" in text
    assert parse_text(text).data["created"] == moment
    assert iso(moment).startswith(f"{moment.year:04d}-")


# Text with every character a file may hold, the line breaks str.splitlines knows too.
any_words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufffe\uffff"),
    max_size=15,
)
any_values = st.one_of(
    values,
    any_words,
    st.lists(any_words, max_size=3),
    st.dictionaries(keys, any_words, max_size=3),
    st.datetimes(timezones=st.just(dt.UTC)),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, any_values, max_size=6), st.text(max_size=30))
def test_a_new_memory_is_the_note_its_text_parses_as(data: dict[str, Any], body: str) -> None:
    note = new_note(data, body)
    parsed = parse_text(note.to_text())
    assert same(note.data, parsed.data)
    assert note == parsed


def test_every_sample_memory_reads_as_python_frontmatter_reads_it() -> None:
    """An independent reader agrees on every frontmatter key and on the body."""
    import frontmatter

    from tests.conftest import SAMPLE_VAULT

    files = sorted((SAMPLE_VAULT / "memories").rglob("*.md"))
    assert len(files) > 40
    for path in files:
        text = path.read_text(encoding="utf-8")
        ours = parse_text(text)
        theirs = frontmatter.loads(text)
        assert ours.data == theirs.metadata, path
        assert ours.body.strip() == theirs.content.strip(), path


@given(st.text(alphabet="---...\n \tab:#", max_size=40), st.booleans())
def test_a_file_is_split_alike_whether_read_line_by_line_or_searched(text: str, bom: bool) -> None:
    """Files with "\n" alone for line breaks are split by searching (`_parse_split`); it
    must find the same frontmatter, fences and body as reading line by line."""
    text = "---\n" + text if not text.startswith("-") else text
    first_break = text.find("\n")
    if first_break <= 0:
        return
    results = []
    for split in (lambda: notefile._parse_split(text, bom, first_break),
                  lambda: notefile._parse_lines(text, bom)):  # fmt: skip
        try:
            results.append(split())
        except NoteError as error:
            results.append(str(error))
    assert results[0] == results[1]


def test_a_new_text_ends_its_last_line_in_the_files_own_line_endings() -> None:
    raw = b"---\r\ntitle: T\r\n---\r\nwritten by hand"
    changed = parse_bytes(raw).with_changes({}, body="new\nlines")
    assert changed.to_bytes() == b"---\r\ntitle: T\r\n---\r\nnew\r\nlines\r\n"
