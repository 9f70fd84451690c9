"""Corrections that follow the string.

The story: a team moved its code out of `metalcraftai/ufo`, told the agent, and the
agent saved a correction. The correction has to reach every older memory that names the
old repository (not only the ones recalled beside it), show the newest word beneath each
of them as a `now:` line, and stay right while people edit, rename and delete files.

End-to-end stories go through the CLI (`cli(...)`), as a user would type them. Table-style
cases call the pure functions or the index directly. Dates are always given explicitly
(`--created`, or `created:` in a hand-written file) so the order never depends on the
clock.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryctl import corrections
from memoryctl.corrections import heads
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault, index_path

# --- helpers -------------------------------------------------------------------------


class Story:
    """One vault, and the commands a person types in it."""

    def __init__(self, root: Path, cli: Callable[..., object]) -> None:
        self.root = root
        self._cli = cli

    def run(self, *args: str, stdin: str | None = None):
        return self._cli(*args, "--vault", str(self.root), stdin=stdin)

    def ok(self, *args: str, stdin: str | None = None):
        result = self.run(*args, stdin=stdin)
        assert result.code == 0, f"memoryctl {' '.join(args)} failed: {result.err}"
        return result

    def add(self, body: str, created: str, *extra: str) -> str:
        return self.ok("add", body, "--created", created, *extra).out.strip()

    def correct(self, body: str, created: str, *needles: str, extra: tuple[str, ...] = ()):
        args = ["correct", body, "--created", created, *extra]
        for needle in needles:
            args += ["--deprecates", needle]
        return self.ok(*args)

    def correction(self, body: str, created: str, *needles: str) -> str:
        return self.correct(body, created, *needles).out.strip()

    def show(self, mid: str) -> str:
        return self.ok("show", mid).out

    def now(self, mid: str) -> list[str]:
        """The `now:` lines beneath a memory, as `memoryctl show` prints them."""
        prefix = "    now: "
        return [
            line[len(prefix) :] for line in self.show(mid).splitlines() if line.startswith(prefix)
        ]

    def reach(self, mid: str) -> dict:
        return self.ok("reach", mid, "--json").json()

    def reached_ids(self, mid: str) -> set[str]:
        return {m["id"] for m in self.reach(mid)["reached"]}

    def path_of(self, mid: str) -> Path:
        return self.root / self.ok("show", mid, "--json").json()["path"]

    def write(self, relpath: str, text: str) -> Path:
        """Write a file by hand, as an editor would; the mtime always moves forward."""
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        before = path.stat().st_mtime_ns if path.exists() else None
        path.write_text(text, encoding="utf-8")
        if before is not None:
            os.utime(path, ns=(before, before + 1_000_000_000))
        return path

    def edit_frontmatter(self, mid: str, **changes: object) -> None:
        """Change keys of a memory's file by hand, rewriting its frontmatter as a person
        would type it (so the test does not depend on how memoryctl lays out YAML)."""
        path = self.path_of(mid)
        parsed = notefile.parse_bytes(path.read_bytes())
        data = {**parsed.data, **changes}
        lines = [f"{key}: {json.dumps(value, default=str)}" for key, value in data.items()]
        self.write(
            str(path.relative_to(self.root)), "\n".join(["---", *lines, "---", "", parsed.body])
        )

    def git(self, *args: str) -> str:
        result = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=True
        )
        return result.stdout

    def memory_files(self) -> list[str]:
        return sorted(str(p.relative_to(self.root)) for p in (self.root / "memories").rglob("*.md"))


def note(
    body: str,
    *,
    created: str,
    mid: str | None = None,
    title: str | None = None,
    deprecates: list[str] | None = None,
    extra: str = "",
) -> str:
    """A memory file as a person would write it by hand."""
    lines = ["---"]
    if mid is not None:
        lines.append(f"id: {mid}")
    if title is not None:
        lines.append(f"title: {json.dumps(title)}")
    lines.append(f"created: {created}")
    if deprecates is not None:
        lines.append(f"deprecates: {json.dumps(deprecates)}")
    if extra:
        lines.append(extra)
    lines += ["---", "", body, ""]
    return "\n".join(lines)


def block(old: str, *now: str) -> str:
    """What `memoryctl show` prints beneath a memory's details."""
    return "\n".join([old, *(f"    now: {text}" for text in now)])


def frontmatter(path: Path) -> dict:
    return notefile.parse_bytes(path.read_bytes()).data


@pytest.fixture
def story(vault_dir: Path, cli) -> Story:
    return Story(vault_dir, cli)


@pytest.fixture
def sample(sample_dir: Path, cli) -> Story:
    return Story(sample_dir, cli)


SEED_CORRECTION = (
    "UFO core — Moved from metalcraftai/ufo to ufo-ai/ufo; do GitHub work in ufo-ai/ufo."
)


# --- the seed story --------------------------------------------------------------------


def test_seed_story_the_correction_reaches_every_older_memory_naming_the_repo(story: Story):
    named = {
        "url": "PR #1705 passed review: https://github.com/metalcraftai/ufo/pull/1705",
        "parentheses": "The #ufo-dev channel follows the core repository (metalcraftai/ufo).",
        "end of sentence": "CI on main is flaky in metalcraftai/ufo.",
        "upper case": "FILE CORE BUGS IN METALCRAFTAI/UFO",
        "clone url": "Clone the core: git clone git@github.com:metalcraftai/ufo.git ~/src/ufo",
    }
    old = {
        kind: story.add(body, f"2026-08-{day:02d}T10:00:00Z")
        for day, (kind, body) in enumerate(named.items(), start=1)
    }
    by_title_only = story.add(
        "Webhook secrets rotate monthly.", "2026-08-10T10:00:00Z", "--title", "metalcraftai/ufo"
    )
    hosted_body = "The hosted control plane lives in metalcraftai/ufo-hosted."
    hosted = story.add(hosted_body, "2026-08-11T10:00:00Z")

    result = story.correct(SEED_CORRECTION, "2026-09-19T10:12:00Z", "metalcraftai/ufo")
    fix = result.out.strip()
    assert "This correction reaches 6 older memories." in result.err
    for mid in [*old.values(), by_title_only]:
        assert mid in result.err
    assert hosted not in result.err

    later_body = "Removed the last webhook that pointed at metalcraftai/ufo."
    later = story.add(later_body, "2026-10-02T11:20:00Z")

    # Every older memory, whichever way it names the repository, shows the correction.
    for kind, mid in old.items():
        assert block(named[kind], SEED_CORRECTION) in story.show(mid), kind
        assert story.now(mid) == [SEED_CORRECTION], kind
    assert story.now(by_title_only) == [SEED_CORRECTION]
    # A longer name that merely starts with the string is another repository.
    assert story.now(hosted) == []
    assert block(hosted_body) + "\n" in story.show(hosted)
    # A memory made after the correction is news, not history.
    assert story.now(later) == []
    # The correction names the string itself but never reaches itself.
    assert story.now(fix) == []

    report = story.reach(fix)
    assert report["count"] == 6
    assert report["deprecates"] == ["metalcraftai/ufo"]
    assert {(m["id"], m["title"]) for m in report["reached"]} == {
        *((mid, named[kind]) for kind, mid in old.items()),
        (by_title_only, "metalcraftai/ufo"),
    }
    text = story.ok("reach", fix).out
    assert f"[{fix}] reaches 6 memories:" in text
    assert hosted not in text and later not in text

    data = frontmatter(story.path_of(fix))
    assert data["kind"] == "correction"
    assert data["deprecates"] == ["metalcraftai/ufo"]
    log = story.git("log", "--format=%s", "--", str(story.path_of(fix).relative_to(story.root)))
    assert log.startswith("Add correction: UFO core")


def test_correct_json_lists_the_ids_and_titles_it_reaches(story: Story):
    first = story.add("Deploys run from alpha/one.", "2026-01-01T00:00:00Z")
    second = story.add("Alpha/One has the runbook.", "2026-01-02T00:00:00Z")
    story.add("Deploys run from alpha/one-legacy.", "2026-01-03T00:00:00Z")
    result = story.ok(
        "correct",
        "alpha/one moved to beta/two.",
        "--deprecates",
        "alpha/one",
        "--created",
        "2026-02-01T00:00:00Z",
        "--json",
    ).json()
    assert result["kind"] == "correction"
    assert [(m["id"], m["title"]) for m in result["reach"]] == [
        (first, "Deploys run from alpha/one."),
        (second, "Alpha/One has the runbook."),
    ]


def test_add_with_deprecates_stores_a_correction(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01T00:00:00Z")
    result = story.ok(
        "add",
        "Deploys moved to beta/two.",
        "--deprecates",
        "alpha/one",
        "--created",
        "2026-02-01T00:00:00Z",
    )
    fix = result.out.strip()
    assert "This correction reaches 1 older memory." in result.err
    data = frontmatter(story.path_of(fix))
    assert data["kind"] == "correction"
    assert data["deprecates"] == ["alpha/one"]
    assert story.now(old) == ["Deploys moved to beta/two."]


def test_correct_without_deprecates_is_refused_before_anything_is_stored(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01T00:00:00Z")
    before = story.ok("list", "--json").json()
    result = story.run("correct", "Deploys moved off alpha/one.", "--created", "2026-02-01")
    assert result.code == 2
    assert "the following arguments are required: --deprecates" in result.err
    assert result.out == ""
    assert story.ok("list", "--json").json() == before
    assert story.now(old) == []


# --- the sample vault ------------------------------------------------------------------


def test_sample_vault_old_ci_memory_shows_the_newest_correction_of_the_chain(sample: Story):
    newest = sample.ok("show", "q0csfnqc07", "--json").json()
    middle = sample.ok("show", "ed8xn3kjds", "--json").json()
    newest_text = " ".join(newest["body"].split())
    middle_text = " ".join(middle["body"].split())
    assert newest_text.startswith("The UFO core repository is ufo-ai/ufo.")

    flaky = sample.ok("show", "h3jcnchn9x", "--json").json()
    assert flaky["now"] == [{"id": "q0csfnqc07", "text": newest_text}]
    out = sample.show("h3jcnchn9x")
    assert f"\n    now: {newest_text}\n" in out
    assert middle_text not in out
    # The middle correction itself is reached by the newer one.
    assert sample.now("ed8xn3kjds") == [newest_text]
    assert "h3jcnchn9x" in sample.reached_ids("ed8xn3kjds")


def test_sample_vault_hosted_repo_and_later_memory_have_no_now_line(sample: Story):
    assert "now:" not in sample.show("phyr2z6qbs")
    assert "now:" not in sample.show("sn837jv207")
    reached = sample.reached_ids("ed8xn3kjds")
    assert {"h3jcnchn9x", "j0smq2rv60", "a8ygz9qbwj", "rz6mhbfqmk", "pvbg0tx8bx"} <= reached
    assert "phyr2z6qbs" not in reached
    assert "sn837jv207" not in reached


# --- chains and forks ------------------------------------------------------------------


def test_chain_of_two_links_shows_only_the_newest_correction(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01T00:00:00Z")
    first = story.correction("alpha/one moved to beta/two.", "2026-02-01T00:00:00Z", "alpha/one")
    second = story.correction("beta/two moved to gamma/three.", "2026-03-01", "beta/two")
    assert block("Deploys run from alpha/one.", "beta/two moved to gamma/three.") in story.show(old)
    assert story.now(old) == ["beta/two moved to gamma/three."]
    assert story.now(first) == ["beta/two moved to gamma/three."]
    assert story.now(second) == []


def test_chain_of_three_links_shows_only_the_newest_correction(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01T00:00:00Z")
    story.correction("alpha/one moved to beta/two.", "2026-02-01T00:00:00Z", "alpha/one")
    middle = story.correction("beta/two moved to gamma/three.", "2026-03-01", "beta/two")
    story.correction("gamma/three moved to delta/four.", "2026-04-01", "gamma/three")
    out = story.show(old)
    assert block("Deploys run from alpha/one.", "gamma/three moved to delta/four.") in out
    assert out.count("now:") == 1
    assert story.now(middle) == ["gamma/three moved to delta/four."]
    shown = story.ok("show", old, "--json").json()["now"]
    assert [n["text"] for n in shown] == ["gamma/three moved to delta/four."]


def test_fork_one_memory_naming_two_outdated_things_shows_both_heads_once(story: Story):
    old = story.add("Deploys run from alpha/one and report to beta/two.", "2026-01-01")
    story.correction("alpha/one moved to gamma/three.", "2026-02-01", "alpha/one")
    story.correction("beta/two was replaced by delta/four.", "2026-03-01", "beta/two")
    out = story.show(old)
    assert (
        block(
            "Deploys run from alpha/one and report to beta/two.",
            "alpha/one moved to gamma/three.",
            "beta/two was replaced by delta/four.",
        )
        in out
    )
    assert out.count("now:") == 2


def test_a_fork_of_corrections_made_the_same_second_lists_them_by_id(story: Story):
    old = story.write(
        "memories/m.md",
        note("Deploys run from alpha/one and report to beta/two.", created="2026-01-01", mid="m1"),
    )
    same = "2026-02-01T12:00:00Z"
    story.write(
        "memories/a.md",
        note("alpha/one moved.", created=same, mid="zzzzzzzz02", deprecates=["alpha/one"]),
    )
    story.write(
        "memories/z.md",
        note("beta/two moved.", created=same, mid="aaaaaaaa02", deprecates=["beta/two"]),
    )
    assert old.exists()
    assert story.now("m1") == ["beta/two moved.", "alpha/one moved."]


def test_two_corrections_overtaken_by_the_same_newer_one_show_it_once(story: Story):
    old = story.add("Deploys run from alpha/one and report to beta/two.", "2026-01-01")
    story.correction("alpha/one moved to ops/platform.", "2026-02-01", "alpha/one")
    story.correction("beta/two moved to ops/platform.", "2026-03-01", "beta/two")
    story.correction(
        "ops/platform was split into ops/run and ops/report.", "2026-04-01", "ops/platform"
    )
    assert story.now(old) == ["ops/platform was split into ops/run and ops/report."]


def test_the_same_string_corrected_many_times_shows_only_the_latest(story: Story):
    # Each correction names the string it deprecates, so every newer one reaches every
    # older one: the graph is complete, and only the last word may show.
    old = story.add("Core work happens in metalcraftai/ufo.", "2026-01-01")
    for day in range(1, 13):
        story.write(
            f"memories/fix-{day:02d}.md",
            note(
                f"Take {day}: never push to metalcraftai/ufo.",
                created=f"2026-02-{day:02d}T00:00:00Z",
                mid=f"fix{day:07d}",
                deprecates=["metalcraftai/ufo"],
            ),
        )
    assert story.now(old) == ["Take 12: never push to metalcraftai/ufo."]
    assert story.now("fix0000005") == ["Take 12: never push to metalcraftai/ufo."]


# --- cycles and inconsistent files -----------------------------------------------------


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        pytest.param({"m": ["a"], "a": ["b"], "b": ["a"]}, ["b"], id="two-cycle"),
        pytest.param({"m": ["a"], "a": ["a"]}, ["a"], id="self-loop"),
        pytest.param({"m": ["a"], "a": ["m"]}, ["a"], id="back-to-the-memory"),
        pytest.param({"m": ["m"]}, [], id="memory-reaches-itself"),
        pytest.param({"m": ["a"], "a": ["b"], "b": ["c"], "c": ["a"]}, ["c"], id="three-cycle"),
        pytest.param({"m": ["a", "b"], "a": ["c"], "b": ["c"], "c": []}, ["c"], id="diamond"),
        pytest.param({"m": ["a", "b"]}, ["a", "b"], id="fork"),
    ],
)
def test_heads_of_a_hand_made_graph(graph: dict[str, list[str]], expected: list[str]):
    assert heads("m", graph, lambda mid: mid) == expected


def test_heads_terminates_on_a_cycle_with_several_ways_in():
    graph = {"m": ["a", "b"], "a": ["b"], "b": ["a"]}
    found = heads("m", graph, lambda mid: mid)
    assert found
    assert len(found) == len(set(found))
    assert set(found) <= {"a", "b"}


def test_heads_terminates_on_a_long_ring_and_a_chain_past_the_bound():
    ring = {f"c{i:03d}": [f"c{(i + 1) % 200:03d}"] for i in range(200)}
    ring["m"] = ["c000"]
    found = heads("m", ring, lambda mid: mid)
    assert len(found) == 1

    chain = {f"c{i:03d}": [f"c{i + 1:03d}"] for i in range(199)}
    chain["m"] = ["c000"]
    found = heads("m", chain, lambda mid: mid)
    assert len(found) == 1
    assert found[0] in chain


class Budget(dict):
    """A reach graph that fails the test if it is read more often than a fair walk needs."""

    def __init__(self, data: dict[str, list[str]], budget: int) -> None:
        super().__init__(data)
        self.reads = 0
        self.budget = budget

    def get(self, key, default=None):
        self.reads += 1
        assert self.reads <= self.budget, "heads() walks every path instead of every node"
        return super().get(key, default)


def test_heads_stays_fast_when_every_correction_overtakes_every_older_one():
    # Sixty corrections of one string, each naming it: 2**58 paths, 61 nodes.
    ids = [f"c{i:02d}" for i in range(60)]
    graph = {"m": list(ids), **{c: ids[i + 1 :] for i, c in enumerate(ids)}}
    found = heads("m", Budget(graph, budget=10_000), lambda mid: mid)
    assert found == ["c59"]


def test_now_lines_on_a_cyclic_reach_source_terminates():
    """Same check one level up: a fake index whose reach graph loops."""
    from memoryctl.memory import Memory

    memories = {
        mid: Memory(id=mid, path=f"{mid}.md", title=mid, body=f"text of {mid}", created=created)
        for mid, created in (("m", "2026-01-01"), ("a", "2026-02-01"), ("b", "2026-03-01"))
    }
    graph = {"m": ["a"], "a": ["b"], "b": ["a"]}

    class Source:
        def corrections_reaching(self, mids):
            return {mid: list(graph[mid]) for mid in mids if mid in graph}

        def get_many(self, mids):
            return {mid: memories[mid] for mid in mids}

    shown = corrections.now_lines(Source(), [memories["m"]])
    assert [c.id for c in shown["m"]] == ["b"]


def test_duplicate_ids_that_make_a_cycle_still_show_one_head(story: Story):
    # X1 and X2 share an id: B reaches X1 and X2 reaches B, so by id D -> B -> D loops.
    story.write(
        "memories/m.md", note("Deploys run from alpha/one.", created="2026-01-01", mid="mmmmmmmm01")
    )
    story.write(
        "memories/x1.md",
        note(
            "alpha/one is gone; use beta/two.",
            created="2026-01-02",
            mid="dddddddd01",
            deprecates=["alpha/one"],
        ),
    )
    story.write(
        "memories/b.md",
        note(
            "beta/two is gone; use gamma/three.",
            created="2026-01-03",
            mid="bbbbbbbb01",
            deprecates=["beta/two"],
        ),
    )
    story.write(
        "memories/x2.md",
        note(
            "gamma/three is gone; back to alpha/one.",
            created="2026-01-04",
            mid="dddddddd01",
            deprecates=["gamma/three"],
        ),
    )
    assert story.now("mmmmmmmm01") == ["beta/two is gone; use gamma/three."]
    assert story.now("bbbbbbbb01") != []
    doctor = story.run("doctor")
    assert doctor.code == 1
    assert "memories/x1.md: id dddddddd01 is also used by memories/x2.md" in doctor.out


def test_corrections_with_the_same_created_are_ordered_by_id(story: Story):
    story.write(
        "memories/m.md", note("Deploys run from alpha/one.", created="2026-01-01", mid="mmmmmmmm01")
    )
    same = "2026-02-01T12:00:00Z"
    # The file names sort the other way round, so only the id can decide.
    story.write(
        "memories/a.md",
        note(
            "Second word: alpha/one is gone.",
            created=same,
            mid="zzzzzzzz01",
            deprecates=["alpha/one"],
        ),
    )
    story.write(
        "memories/z.md",
        note(
            "First word: alpha/one is gone.",
            created=same,
            mid="aaaaaaaa01",
            deprecates=["alpha/one"],
        ),
    )
    assert story.now("mmmmmmmm01") == ["Second word: alpha/one is gone."]
    assert story.reached_ids("zzzzzzzz01") == {"mmmmmmmm01", "aaaaaaaa01"}
    assert story.reached_ids("aaaaaaaa01") == {"mmmmmmmm01"}
    # Rebuilding from scratch gives the same answer.
    story.ok("reindex", "--full")
    assert story.now("mmmmmmmm01") == ["Second word: alpha/one is gone."]


@pytest.mark.parametrize(
    ("memory_id", "reached"),
    [("aaaaaaaa01", True), ("zzzzzzzz01", False)],
)
def test_a_memory_made_the_same_second_as_the_correction_is_ordered_by_id(
    story: Story, memory_id: str, reached: bool
):
    same = "2026-02-01T12:00:00Z"
    story.write("memories/m.md", note("Deploys run from alpha/one.", created=same, mid=memory_id))
    story.write(
        "memories/fix.md",
        note("alpha/one is gone.", created=same, mid="mmmmmmmm01", deprecates=["alpha/one"]),
    )
    assert story.now(memory_id) == (["alpha/one is gone."] if reached else [])


# --- it stays current ------------------------------------------------------------------


def test_reach_follows_the_older_memory_across_a_git_mv(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01")
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    before = story.path_of(old).relative_to(story.root)
    (story.root / "memories/archive").mkdir()
    story.git("mv", str(before), "memories/archive/deploys.md")

    result = story.ok("show", old)
    assert "rebuilt" not in result.err
    assert block("Deploys run from alpha/one.", "alpha/one moved to beta/two.") in result.out
    assert "path: memories/archive/deploys.md" in result.out
    reached = story.reach(fix)["reached"]
    assert [(m["id"], m["path"]) for m in reached] == [(old, "memories/archive/deploys.md")]


def test_reach_survives_renaming_the_correction_file(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01")
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    path = story.path_of(fix)
    os.rename(path, path.with_name("renamed-correction.md"))
    assert story.now(old) == ["alpha/one moved to beta/two."]
    assert story.reached_ids(fix) == {old}


def test_deleting_the_correction_file_removes_the_now_line(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01")
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    assert story.now(old) == ["alpha/one moved to beta/two."]
    story.path_of(fix).unlink()
    result = story.ok("show", old)
    assert "now:" not in result.out
    assert "rebuilt" not in result.err
    gone = story.run("reach", fix)
    assert gone.code == 1
    assert f"no memory with id {fix!r}" in gone.err


def test_deleting_the_newest_link_of_a_chain_falls_back_to_the_one_before(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01")
    story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    newest = story.correction("beta/two moved to gamma/three.", "2026-03-01", "beta/two")
    assert story.now(old) == ["beta/two moved to gamma/three."]
    story.path_of(newest).unlink()
    assert story.now(old) == ["alpha/one moved to beta/two."]


def test_a_late_edit_of_an_older_memory_is_reached_at_the_next_command(story: Story):
    old = story.add("Deploys run from the usual place.", "2026-01-01")
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    assert story.reach(fix)["count"] == 0
    path = story.path_of(old)
    original = path.read_text(encoding="utf-8")

    story.write(
        str(path.relative_to(story.root)),
        original.replace("Deploys run from the usual place.", "Deploys run from ALPHA/ONE."),
    )
    result = story.ok("show", old)
    assert block("Deploys run from ALPHA/ONE.", "alpha/one moved to beta/two.") in result.out
    assert "rebuilt" not in result.err
    assert story.reached_ids(fix) == {old}

    story.write(str(path.relative_to(story.root)), original)
    assert story.now(old) == []
    assert story.reach(fix)["count"] == 0


def test_an_older_memory_added_later_is_reached_and_a_newer_one_is_not(story: Story):
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    by_hand = story.write(
        "memories/imported.md",
        note("Imported: deploys ran from alpha/one.", created="2026-01-05", mid="imported01"),
    )
    back_dated = story.add("Back-dated: alpha/one had the runbook.", "2026-01-06")
    newer = story.add("After the move, alpha/one was archived.", "2026-02-02")
    assert story.now("imported01") == ["alpha/one moved to beta/two."]
    assert story.now(back_dated) == ["alpha/one moved to beta/two."]
    assert story.now(newer) == []
    assert story.reached_ids(fix) == {"imported01", back_dated}
    assert by_hand.exists()


def test_editing_a_corrections_deprecates_on_disk_moves_its_reach(story: Story):
    alpha = story.add("Deploys run from alpha/one.", "2026-01-01")
    beta = story.add("Reports go to beta/two.", "2026-01-02")
    fix = story.correction("Everything moved to gamma/three.", "2026-02-01", "alpha/one")
    assert story.reached_ids(fix) == {alpha}

    story.edit_frontmatter(fix, deprecates=["beta/two"])
    result = story.ok("show", alpha)
    assert "now:" not in result.out
    assert "rebuilt" not in result.err
    assert story.now(beta) == ["Everything moved to gamma/three."]
    assert story.reached_ids(fix) == {beta}

    story.edit_frontmatter(fix, deprecates=["alpha/one", "beta/two"])
    assert story.now(alpha) == ["Everything moved to gamma/three."]
    assert story.now(beta) == ["Everything moved to gamma/three."]
    assert story.reach(fix)["count"] == 2

    story.edit_frontmatter(fix, deprecates=None)
    assert story.now(alpha) == []
    assert story.now(beta) == []


def test_moving_a_corrections_date_before_the_memory_stops_its_reach(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-10")
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    assert story.now(old) == ["alpha/one moved to beta/two."]
    story.edit_frontmatter(fix, created="2026-01-01T00:00:00Z")
    assert story.now(old) == []
    assert story.reach(fix)["count"] == 0


# --- the guard -------------------------------------------------------------------------


def set_guard(story: Story, guard: int) -> None:
    config = story.root / "memoryctl.toml"
    text = config.read_text(encoding="utf-8")
    assert "guard = 2000" in text
    config.write_text(text.replace("guard = 2000", f"guard = {guard}"), encoding="utf-8")


def test_guard_refuses_a_string_that_reaches_too_much_unless_forced(story: Story):
    set_guard(story, 2)
    titles = [f"Note {n} about alpha/one" for n in range(3)]
    for n, title in enumerate(titles):
        story.add(title, f"2026-01-0{n + 1}")
    story.add("Reports go to beta/two.", "2026-01-05")
    story.add("beta/two keeps the archive.", "2026-01-06")
    files = story.memory_files()
    commits = story.git("rev-list", "--count", "HEAD")

    for command in ("correct", "add"):
        refused = story.run(
            command,
            "alpha/one and beta/two moved to gamma/three.",
            "--deprecates",
            "beta/two",
            "--deprecates",
            "alpha/one",
            "--created",
            "2026-02-01",
            stdin="",
        )
        assert refused.code == 1, command
        assert "'alpha/one' would reach 3 memories (the guard is 2)" in refused.err
        assert "--force" in refused.err
        assert any(title in refused.err for title in titles)
        assert refused.out == ""
    assert story.memory_files() == files
    assert story.git("rev-list", "--count", "HEAD") == commits

    # Exactly at the guard is allowed.
    at_guard = story.correct("beta/two moved to gamma/three.", "2026-02-01", "beta/two")
    assert "reaches 2 older memories" in at_guard.err

    forced = story.correct(
        "alpha/one moved to gamma/three.", "2026-02-02", "alpha/one", extra=("--force",)
    )
    assert "This correction reaches 3 older memories." in forced.err
    assert story.reach(forced.out.strip())["count"] == 3


def test_guard_counts_only_memories_older_than_the_correction(story: Story):
    set_guard(story, 1)
    for day in (10, 11, 12):
        story.add(f"Day {day}: alpha/one is the deploy repo.", f"2026-01-{day}")
    early = story.run(
        "correct", "alpha/one is retired.", "--deprecates", "alpha/one", "--created", "2026-01-01"
    )
    assert early.code == 0, early.err
    assert "reaches 0 older memories" in early.err


@pytest.mark.parametrize(
    ("needle", "message"),
    [
        ("ab", "'ab' is shorter than 3 characters"),
        ("x", "'x' is shorter than 3 characters"),
        ("   ", "cannot be empty"),
    ],
)
@pytest.mark.parametrize("command", ["correct", "add"])
def test_deprecated_strings_shorter_than_three_characters_are_refused(
    story: Story, needle: str, message: str, command: str
):
    story.add("ab testing is on for abc.", "2026-01-01")
    files = story.memory_files()
    result = story.run(command, "Stop the ab tests.", "--deprecates", needle, "--force")
    assert result.code == 1
    assert message in result.err
    assert story.memory_files() == files


# --- detaching -------------------------------------------------------------------------


def test_detach_by_short_ids_names_both_memories_in_full(story: Story):
    pr = story.add("PR 1705 merged in alpha/one.", "2026-01-01")
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    detached = story.ok("detach", fix[:4], pr[:4]).out
    assert detached.startswith(f"Detached: {pr} (PR 1705 merged in alpha/one.) from {fix} (")
    undone = story.ok("detach", fix[:4], pr[:4], "--undo").out
    assert undone.startswith(f"Reattached: {pr} (PR 1705 merged in alpha/one.) to {fix} (")


def test_detach_stops_one_now_line_survives_rebuilds_and_undo_restores_it(story: Story):
    pr = story.add("PR 1705 merged in alpha/one.", "2026-01-01")
    ci = story.add("CI for alpha/one is flaky.", "2026-01-02")
    fix = story.correction("alpha/one moved to beta/two.", "2026-02-01", "alpha/one")
    path = story.path_of(fix)

    result = story.ok("detach", fix, pr)
    assert f"Detached: {pr} (" in result.out
    assert frontmatter(path)["detached"] == [pr]
    message = story.git("log", "-1", "--format=%B")
    assert message.startswith("Detach correction alpha/one moved to beta/two.")
    assert f"memory: {pr}" in message
    assert story.git("status", "--porcelain") == ""

    assert story.now(pr) == []
    assert story.now(ci) == ["alpha/one moved to beta/two."]
    report = story.reach(fix)
    assert report["count"] == 1
    assert report["detached"] == [pr]
    assert [m["id"] for m in report["reached"]] == [ci]
    assert f"Detached: {pr}" in story.ok("reach", fix).out

    story.ok("reindex", "--full")
    assert story.now(pr) == []
    shutil.rmtree(index_path(story.root).parent)
    assert story.now(pr) == []
    assert story.now(ci) == ["alpha/one moved to beta/two."]

    again = story.run("detach", fix, pr)
    assert again.code == 1
    assert "already detached" in again.err

    undone = story.ok("detach", fix, pr, "--undo")
    assert f"Reattached: {pr} (" in undone.out
    assert "detached" not in frontmatter(path)
    assert story.git("log", "-1", "--format=%s").startswith("Reattach correction")
    assert story.git("status", "--porcelain") == ""
    assert story.now(pr) == ["alpha/one moved to beta/two."]
    assert story.reach(fix)["count"] == 2

    not_detached = story.run("detach", fix, pr, "--undo")
    assert not_detached.code == 1
    assert "is not detached" in not_detached.err


def test_detach_refuses_a_memory_the_correction_does_not_reach(story: Story):
    other = story.add("Reports go to beta/two.", "2026-01-01")
    fix = story.correction("alpha/one moved to gamma/three.", "2026-02-01", "alpha/one")
    commits = story.git("rev-list", "--count", "HEAD")
    result = story.run("detach", fix, other)
    assert result.code == 1
    assert "does not reach" in result.err
    assert "detached" not in frontmatter(story.path_of(fix))
    assert story.git("rev-list", "--count", "HEAD") == commits
    plain = story.run("detach", other, fix)
    assert plain.code == 1
    assert "not a correction" in plain.err


# --- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "{old: alpha/one}",
        "[[alpha/one]]",
        "true",
        "\n  - name: alpha/one",
    ],
    ids=["mapping", "nested-list", "boolean", "list-of-mappings"],
)
def test_deprecates_that_is_not_a_list_of_strings_is_reported_and_still_indexed(
    story: Story, value: str
):
    old = story.add("Deploys run from alpha/one.", "2026-01-01")
    story.write(
        "memories/bad-correction.md",
        "---\nid: badfix0001\ntitle: A broken correction\ncreated: 2026-02-01\n"
        f"deprecates: {value}\n---\n\nalpha/one moved to beta/two.\n",
    )
    doctor = story.run("doctor")
    assert (
        "warning: memories/bad-correction.md: deprecates: must be a list of strings" in doctor.out
    )
    shown = story.ok("show", "badfix0001")
    assert "A broken correction  [badfix0001]" in shown.out
    assert "problem: deprecates: must be a list of strings" in shown.out
    assert story.now(old) == []
    listed = story.ok("list").out
    assert "badfix0001" in listed
    assert "!" in next(line for line in listed.splitlines() if "badfix0001" in line)


def test_a_correction_file_with_no_id_reaches_nothing_and_doctor_says_so(story: Story):
    old = story.add("Deploys run from alpha/one.", "2026-01-01")
    story.write(
        "memories/anonymous.md",
        note("alpha/one moved to beta/two.", created="2026-02-01", deprecates=["alpha/one"]),
    )
    assert story.now(old) == []
    doctor = story.run("doctor")
    assert "memories/anonymous.md: correction has no id, so it reaches nothing" in doctor.out
    assert story.reach("memories/anonymous.md")["count"] == 0


LITERAL_CASES = [
    pytest.param("c++", "We write the engine in C++ now.", True, id="c++"),
    pytest.param("c++", "The engine is plain C.", False, id="c++-not-c"),
    pytest.param("a.b*", "The glob a.b* matched nothing.", True, id="a.b*"),
    pytest.param("a.b*", "aXbbb is not a glob.", False, id="a.b*-not-regex"),
    pytest.param("[x]", "Tick the [x] box.", True, id="[x]"),
    pytest.param("[x]", "x marks the spot.", False, id="[x]-not-class"),
    pytest.param("Straße", "STRASSE 5 is closed.", True, id="strasse-upper"),
    pytest.param("STRASSE", "Die Straße ist zu.", True, id="strasse-eszett"),
    pytest.param("Київ/portal", "Деплой іде з КИЇВ/PORTAL.", True, id="cyrillic"),
    pytest.param("Σίσυφος", "ΣΊΣΥΦΟΣ runs the batch jobs.", True, id="greek-final-sigma"),
    pytest.param("हिन्दी/docs", "The हिन्दी/docs site moved.", True, id="devanagari"),
    pytest.param("Çağrı/app", "Bugs go to ÇAĞrı/APP.", True, id="dotless-i"),
    pytest.param("metalcraftai/ufo", "See (metalcraftai/ufo).", True, id="parentheses"),
    pytest.param("metalcraftai/ufo", "See metalcraftai/ufo-hosted.", False, id="longer-name"),
    pytest.param("metalcraftai/ufo", "https://github.com/MetalcraftAI/UFO/pull/1", True, id="url"),
]


@pytest.mark.parametrize(("needle", "text", "expected"), LITERAL_CASES)
@pytest.mark.parametrize("order", ["memory-first", "correction-first"])
def test_deprecated_strings_match_literally_and_case_folded(
    tmp_path: Path, needle: str, text: str, expected: bool, order: str
):
    """Both ways the index computes reach (a new correction, a new older memory) agree."""
    root = tmp_path / "plain"
    root.mkdir()
    (root / "memoryctl.toml").write_text("", encoding="utf-8")
    memory = ("m.md", note(text, created="2026-01-01", mid="memory0001"))
    fix = ("c.md", note("Fixed.", created="2026-02-01", mid="fixing0001", deprecates=[needle]))
    first, second = (memory, fix) if order == "memory-first" else (fix, memory)
    vault = Vault(root)
    try:
        (root / first[0]).write_text(first[1], encoding="utf-8")
        vault.index.sync()
        (root / second[0]).write_text(second[1], encoding="utf-8")
        vault.index.sync()
        reached = [m.id for m, _ in vault.index.reach_of("fixing0001")]
        assert reached == (["memory0001"] if expected else [])
        now = corrections.now_lines(vault.index, [vault.index.get("memory0001")])
        assert [c.id for c in now["memory0001"]] == (["fixing0001"] if expected else [])
    finally:
        vault.close()


def test_a_chain_runs_through_a_retired_correction_to_the_newest_one():
    from memoryctl.corrections import heads

    graph = {"m": ["c1"], "c1": ["c2"], "c2": ["c3"]}
    order = {"c1": 1, "c2": 2, "c3": 3}.__getitem__
    assert heads("m", graph, order, inactive=frozenset({"c2"})) == ["c3"]
    # With nothing newer, a retired head falls back to the correction before it.
    assert heads("m", graph, order, inactive=frozenset({"c3"})) == ["c2"]
    assert heads("m", graph, order, inactive=frozenset({"c1", "c2", "c3"})) == []
