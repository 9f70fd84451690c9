"""The fast frontmatter reader must never disagree with PyYAML, and what memoryctl
writes must come back on the fast path, unchanged."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryctl.storage.yamlsubset import dump_item, load, load_fast, scalar

# --- comparing values strictly -----------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (1 is not 1.0, "1" is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return (
            list(a) == list(b)
            and all(same(k, j) for k, j in zip(a, b, strict=True))
            and all(same(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dt.datetime) and (a.tzinfo is None) != (b.tzinfo is None):
        return False
    if isinstance(a, dt.datetime) and a.tzinfo is not None:
        # The same instant; PyYAML reads any offset back as a fixed-offset timezone.
        return a.astimezone(dt.UTC) == b.astimezone(dt.UTC)
    return a == b


def as_written(value: Any) -> Any:
    """What a value reads back as: tuples become lists."""
    if isinstance(value, dict):
        return {k: as_written(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_written(v) for v in value]
    return value


def _lenient_timestamp(loader: Any, node: yaml.ScalarNode) -> Any:
    """memoryctl's one documented exception to PyYAML: an impossible date such as
    2026-13-45 stays text instead of failing the whole frontmatter."""
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError:
        return loader.construct_scalar(node)


class _PureReference(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader (with the lenient dates)."""


class _LibyamlReference(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's libyaml safe loader, which memoryctl falls back to (with the lenient dates)."""


for _reference in (_PureReference, _LibyamlReference):
    _reference.add_constructor("tag:yaml.org,2002:timestamp", _lenient_timestamp)


def pyyaml_readings(text: str) -> list[Any]:
    """What PyYAML reads, with both of its parsers; an exception where it cannot."""
    readings: list[Any] = []
    for loader in (_PureReference, _LibyamlReference):
        try:
            readings.append(yaml.load(text, Loader=loader))  # both are safe loaders
        except Exception as error:  # every failure counts as "PyYAML cannot read this"
            readings.append(error)
    return readings


def assert_fast_path_agrees_with_pyyaml(text: str) -> None:
    fast = load_fast(text)
    if fast is None:
        return
    for reading in pyyaml_readings(text):
        assert not isinstance(reading, Exception), f"fast path read {fast!r}; PyYAML: {reading}"
        if reading is None:  # an empty frontmatter: PyYAML says None, memoryctl says {}
            reading = {}
        assert same(fast, reading), f"fast path read {fast!r}; PyYAML read {reading!r}"


# --- values memoryctl writes -------------------------------------------------------------

TRICKY_STRINGS = [
    "",
    " ",
    "yes",
    "no",
    "on",
    "off",
    "Off",
    "null",
    "Null",
    "~",
    "true",
    "y",
    "n",
    "1",
    "-1",
    "012",
    "0x1f",
    "1:30",
    "1_000",
    "1.5",
    "1e3",
    "1.0e+3",
    ".inf",
    "-.inf",
    ".nan",
    "2024-01-02",
    "2024-13-45",
    "2024-01-02 10:00:00",
    "-",
    "- item",
    "-x",
    "---",
    "...",
    "?",
    "why?",
    "a?b",
    ":",
    "a: b",
    "a:b",
    "ends:",
    "#tag",
    "a #b",
    "a#b",
    "it's",
    "'quoted'",
    'say "hi"',
    '"',
    "a,b",
    "[x]",
    "{x}",
    "&anchor",
    "*alias",
    "!!str",
    "!tag",
    "|",
    ">",
    "%",
    "@user",
    "`cmd`",
    "=",
    "<<",
    "a\\b",
    "\\u00e9",
    "tab\there",
    "line\nbreak",
    "cr\rhere",
    " leading",
    "trailing ",
    "nbsp\u00a0end",
    "\u3000ideographic",
    "Straße",
    "日本語",
    "emoji 🎉",
    "zero\x00byte",
    "del\x7f",
    "nel\x85x",
    "ls\u2028ps\u2029",
    "bom\ufeff",
]

identifiers = st.from_regex(r"[a-z_][a-z0-9_-]{0,12}", fullmatch=True).filter(
    lambda key: not isinstance(yaml.safe_load(key), bool | None)
)
texts = st.one_of(st.sampled_from(TRICKY_STRINGS), st.text(max_size=20))
offsets = st.one_of(
    st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: dt.timedelta(minutes=m)),
    st.timedeltas(
        min_value=dt.timedelta(hours=-23, minutes=-59), max_value=dt.timedelta(hours=23, minutes=59)
    ),
)
aware_datetimes = st.datetimes(
    min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9000, 1, 1)
).flatmap(lambda moment: offsets.map(lambda off: moment.replace(tzinfo=dt.timezone(off))))
scalars = st.one_of(
    texts,
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.dates(),
    aware_datetimes,
    st.datetimes(),
)
flat_dicts = st.dictionaries(identifiers, scalars, max_size=4)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=5),
    st.tuples(scalars, scalars),
    flat_dicts,
    st.lists(flat_dicts, max_size=3),
)
frontmatters = st.dictionaries(identifiers, values, max_size=6)


def dumped(data: dict[str, Any], newline: str = "\n") -> str:
    return "".join(dump_item(key, value, newline) for key, value in data.items())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frontmatters)
def test_everything_memoryctl_writes_reads_back_fast_and_unchanged(data: dict[str, Any]) -> None:
    text = dumped(data)
    fast = load_fast(text)
    assert fast is not None, f"not on the fast path:\n{text}"
    assert same(fast, yaml.safe_load(text) or {}), text  # plain PyYAML reads the very same
    assert same(fast, as_written(data)), text


@settings(max_examples=100, deadline=None)
@given(frontmatters)
def test_files_with_windows_line_endings_read_the_same(data: dict[str, Any]) -> None:
    assert same(load_fast(dumped(data, "\r\n")), load_fast(dumped(data)))


@pytest.mark.parametrize("text", TRICKY_STRINGS)
def test_a_tricky_string_survives_alone_and_in_a_list(text: str) -> None:
    for value in (text, [text, "plain"], {"inner": text}, [{"a": text}]):
        written = dump_item("key", value)
        assert same(load_fast(written), {"key": as_written(value)}), written
        assert same(yaml.safe_load(written), {"key": as_written(value)}), written


@pytest.mark.parametrize(
    "value",
    [1e20, -1e-05, 5e-324, 1.5e300, float("inf"), float("-inf"), float("nan"), 0.1, -0.0],
)
def test_floats_of_any_size_stay_numbers(value: float) -> None:
    written = dump_item("score", value)
    for reading in (load_fast(written), yaml.safe_load(written)):
        assert same(reading, {"score": value}), written


def test_an_offset_with_seconds_keeps_the_moment() -> None:
    moment = dt.datetime(1900, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(seconds=1172)))
    written = dump_item("created", moment)
    assert same(load_fast(written), {"created": moment}), written


def test_an_empty_mapping_inside_a_list_stays_a_mapping() -> None:
    written = dump_item("anchors", [{}, {"path": "a.py"}])
    assert same(load_fast(written), {"anchors": [{}, {"path": "a.py"}]}), written


@pytest.mark.parametrize("key", ["on", "yes", "null", "true", "1", "my key", "a: b", "#x"])
def test_a_key_that_yaml_would_read_as_something_else_keeps_its_name(key: str) -> None:
    written = dump_item(key, "value")
    assert yaml.safe_load(written) == {key: "value"}, written
    assert load(written) == {key: "value"}, written
    nested = dump_item("source", {key: 1})
    assert yaml.safe_load(nested) == {"source": {key: 1}}, nested


# --- reading what others wrote -----------------------------------------------------------

# Mostly frontmatter-like mappings (so the fast path has something to read), sometimes
# anything PyYAML can write.
pyyaml_keys = st.one_of(identifiers, st.text(max_size=8), st.integers(), st.booleans())
pyyaml_scalars = st.one_of(
    texts,
    st.integers(),
    st.floats(),
    st.booleans(),
    st.none(),
    st.dates(),
    st.datetimes(min_value=dt.datetime(1000, 1, 1)),
)
pyyaml_values = st.one_of(
    pyyaml_scalars,
    st.lists(pyyaml_scalars, max_size=4),
    st.dictionaries(identifiers, pyyaml_scalars, max_size=3),
    st.lists(st.dictionaries(identifiers, pyyaml_scalars, min_size=1, max_size=3), max_size=3),
    st.recursive(
        pyyaml_scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(pyyaml_keys, inner, max_size=3)
        ),
        max_leaves=6,
    ),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.dictionaries(identifiers, pyyaml_values, min_size=1, max_size=5),
        st.dictionaries(pyyaml_keys, pyyaml_values, max_size=5),
    ),
    st.booleans(),
    st.booleans(),
)
def test_the_fast_path_never_disagrees_with_pyyaml_on_files_pyyaml_wrote(
    data: dict[Any, Any], flow: bool, unicode: bool
) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=unicode, sort_keys=False)
    assert_fast_path_agrees_with_pyyaml(text)


HAND_WRITTEN = [
    "mode: 012\n",
    "mode: 0o12\n",
    "mode: 0x1F\n",
    "mode: 0b101\n",
    "time: 1:30\n",
    "time: 1:30:05\n",
    "size: 1_000\n",
    "size: +12\n",
    "size: -0\n",
    "ratio: .5\n",
    "ratio: 1.\n",
    "ratio: 1e3\n",
    "ratio: 1.0e+3\n",
    "ratio: .inf\n",
    "ratio: -.Inf\n",
    "ratio: .NaN\n",
    "title: value # a comment\n",
    "title: value #not-a-comment\n",
    "title: 'quoted' # comment\n",
    'title: "quoted" # comment\n',
    "title: 'it''s'\n",
    'title: "tab\\tand \\u00e9 and \\x41 and \\/"\n',
    'title: "\\ud83d\\ude00"\n',
    'title: "\\U0001F600"\n',
    'title: "a\\\nb"\n',
    "base: &b x\nother: *b\n",
    "base: &b\n  a: 1\nother:\n  <<: *b\n",
    "title: first\n  second line\n",
    "title: |\n  literal\n  text\n",
    "title: >-\n  folded\n  text\n",
    'title: "two\n  lines"\n',
    "on: x\n",
    "off: x\n",
    "yes: x\n",
    "null: x\n",
    "~: x\n",
    "y: x\n",
    "1: x\n",
    "key: !!str 1\n",
    "key: !!int '7'\n",
    "key: !!float 1\n",
    "key: !!bool yes\n",
    "key: !custom x\n",
    "key: !!binary aGk=\n",
    "source:\n  repo:\n    name: x\n",
    "source:\n  a: 1\n  b:\n    c: 2\n",
    "anchors:\n  - path: a.py\n    lines:\n      - 1\n",
    "tags: [a, b,]\n",
    "tags: [a,, b]\n",
    "tags: [,]\n",
    "tags: [ ]\n",
    "tags: [why?, b]\n",
    "tags: [a?b]\n",
    "tags: [a:b]\n",
    "tags: [a: b]\n",
    "tags: [a, [b]]\n",
    "tags: [a, {b: c}]\n",
    "tags: [a\n  , b]\n",
    "tags:\n- a\n- b\n",
    "tags:\n  - a\n  -  b\n",
    "tags:\n  - a\n   - b\n",
    "tags:\n  - - a\n",
    "tags:\n  -\n  - b\n",
    "tags:\n  - a\n\n  - b\n",
    "tags:\n  - a # c\n",
    "tags:\n  # comment\n  - a\n",
    "date: 2024-01-02\n",
    "date: 2024-1-2\n",
    "date: 2024-13-45\n",
    "when: 2024-01-02T03:04:05Z\n",
    "when: 2024-01-02 03:04:05.123 +05:30\n",
    "when: 2024-01-02t03:04:05-7\n",
    "when: 2024-01-02T25:04:05Z\n",
    "title: a\tb\n",
    "title: a\t\n",
    "title: \ta\n",
    'title: "a"\t\n',
    "tags: [\ta, b\t]\n",
    "source:\n  \ta: 1\n",
    "source:\n  a: 1\t\n",
    "tags:\n  - \ta\n",
    "a: 1\n\t\nb: 2\n",
    "title: a\u3000\n",
    "title: \u3000\n",
    "title: a\u00a0\n",
    'title: "a" \u3000\n',
    "a: 1\n\u3000\n",
    "title: a\x7fb\n",
    "title: a\x1cb: 2\n",
    "title: a\x0cb\n",
    "title: x\x85y\n",
    "title: x\u2028y\n",
    "title: 'a\x07'\n",
    'title: "a\x07"\n',
    "title: a\ufeffb\n",
    "\ufefftitle: x\n",
    "title: x\n---\nother: y\n",
    "title: x\n...\n",
    "%YAML 1.1\n---\ntitle: x\n",
    "title: x\ntitle: y\n",
    "source:\n  a: 1\n  a: 2\n",
    "key:value\n",
    "key : value\n",
    "key:\n",
    "key:   \n",
    "? complex\n: value\n",
    "- a\n- b\n",
    "just text\n",
    "title: <<\n",
    "title: =\n",
    "title: -\n",
    "title: - a\n",
    "title: ---\n",
    "title: a: b\n",
    "title: a:\n",
]


@pytest.mark.parametrize("text", HAND_WRITTEN)
def test_hand_written_yaml_is_read_like_pyyaml_or_left_to_it(text: str) -> None:
    assert_fast_path_agrees_with_pyyaml(text)
    assert_fast_path_agrees_with_pyyaml(text.replace("\n", "\r\n"))


FRAGMENTS = [
    "title: x",
    "mode: 012",
    "time: 1:30",
    "n: 1_000",
    "r: .inf",
    "r: 1e3",
    "d: 2024-01-02",
    "d: 2024-13-45",
    "on: x",
    "k:",
    "  a: 1",
    "  b: [x, y]",
    "   c: 2",
    "  - a",
    "  - b: 1",
    "    c: 2",
    "- top",
    "  # comment",
    "# comment",
    "",
    "   ",
    "\t",
    "k: a # c",
    "k: 'it''s'",
    'k: "a\\u00e9"',
    "k: &x 1",
    "j: *x",
    "k: |",
    "  text",
    "k: [a, b,]",
    "k: [why?]",
    "k: !!str 1",
    "k: a\u3000",
    "k: a\x7f",
    "---",
    "...",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS[:18]), st.sampled_from(FRAGMENTS)), max_size=8))
def test_the_fast_path_never_disagrees_with_pyyaml_on_odd_line_mixes(lines: list[str]) -> None:
    assert_fast_path_agrees_with_pyyaml("\n".join(lines) + "\n")


soup = st.text(alphabet="k: -#[],'\"\t01.?!&*|>\\xé\u3000\x85", max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["key: ", "  - ", "  ", ""]), soup), min_size=1, max_size=4)
)
def test_the_fast_path_never_disagrees_with_pyyaml_on_character_soup(
    lines: list[tuple[str, str]],
) -> None:
    text = "".join(
        f"{lead.replace('key', f'k{n}')}{value}\n" for n, (lead, value) in enumerate(lines)
    )
    assert_fast_path_agrees_with_pyyaml(text)


# --- scalar and load ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello", "hello"),
        ("yes", True),
        ("Off", False),
        ("~", None),
        ("12", 12),
        ("012", 10),
        ("1.5", 1.5),
        ("2024-01-02", dt.date(2024, 1, 2)),
        ("'yes'", "yes"),
        ('"a\\nb"', "a\nb"),
    ],
)
def test_a_single_scalar_reads_like_yaml_1_1(text: str, expected: Any) -> None:
    assert same(scalar(text), expected)


def test_load_falls_back_to_pyyaml_for_what_the_fast_path_leaves() -> None:
    text = "base: &b x\nother: *b\ntitle: |\n  two\n  lines\n"
    assert load_fast(text) is None
    assert load(text) == {"base": "x", "other": "x", "title": "two\nlines\n"}


@given(
    st.tuples(
        st.integers(0, 9999),
        st.integers(0, 99),
        st.integers(0, 99),
        st.one_of(st.none(), st.tuples(*[st.integers(0, 99)] * 3)),
    )
)
def test_dates_and_moments_read_like_pyyaml_even_impossible_ones(parts: tuple) -> None:
    year, month, day, clock = parts
    text = f"{year:04d}-{month:02d}-{day:02d}"
    if clock is not None:
        text += "T{:02d}:{:02d}:{:02d}Z".format(*clock)
    (reading, *_) = pyyaml_readings(f"created: {text}\n")
    assert same(load_fast(f"created: {text}\n"), reading)
    assert same(load_fast(f"created: [{text}]\n"), reading and {"created": [reading["created"]]})
