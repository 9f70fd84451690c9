"""Lineage: when a memory is retired or replaced, exactly what was built from it is
proposed for review, and nothing else.

Seed 002's museum: source S1 → extracted fee F1 → membership summary M1 → replacement
plan P1 → prepared order D1, and an unrelated opening-hours note U1 that must stay
untouched.
"""

from __future__ import annotations

from pathlib import Path

from review_helpers import commit_all, status, write_note

from memoryctl.lineage import children_from, cycles, descendants, lineage_suggestions
from memoryctl.memory import Memory

MUSEUM = {
    "f1fee00000": ["s1source00"],
    "m1summary0": ["f1fee00000"],
    "p1plan0000": ["m1summary0"],
    "d1draft000": ["p1plan0000"],
    "u1hours000": ["s0hours000"],
}


def test_descendants_are_exactly_the_notes_built_from_the_source_nearest_first():
    found = descendants(["s1source00"], children_from(MUSEUM))
    assert [(d.id, d.parent, d.depth) for d in found] == [
        ("f1fee00000", "s1source00", 1),
        ("m1summary0", "f1fee00000", 2),
        ("p1plan0000", "m1summary0", 3),
        ("d1draft000", "p1plan0000", 4),
    ]


def test_a_note_derived_from_two_places_is_listed_once_at_its_shortest_distance():
    edges = {"b": ["a"], "c": ["b", "a"], "d": ["c"]}
    found = descendants(["a"], children_from(edges))
    assert [(d.id, d.depth) for d in found] == [("b", 1), ("c", 1), ("d", 2)]


def test_a_hand_edited_cycle_terminates_and_is_reported():
    edges = {"a": ["c"], "b": ["a"], "c": ["b"], "x": ["a"], "self": ["self"]}
    found = descendants(["a"], children_from(edges))
    assert sorted(d.id for d in found) == ["b", "c", "x"]
    assert cycles(edges) == [["a", "c", "b", "a"], ["self", "self"]]
    assert cycles(MUSEUM) == []


def test_reasons_name_the_path_back_to_the_source():
    source = Memory(id="s1source00", path="s1.md", title="Card fee policy")
    found = descendants(["s1source00"], children_from(MUSEUM))
    memories = {d.id: Memory(id=d.id, path=f"{d.id}.md", title=d.id) for d in found}
    memories["p1plan0000"] = Memory(id="p1plan0000", path="p.md", title="p", status="retired")
    suggestions = lineage_suggestions(
        source, found, memories, event="was retired: superseded", trigger="retired:x"
    )
    assert [s.targets[0] for s in suggestions] == ["f1fee00000", "m1summary0", "d1draft000"]
    assert suggestions[0].reason == (
        "derived from s1source00 (Card fee policy), which was retired: superseded"
    )
    assert suggestions[1].reason.startswith("derived from f1fee00000, which is derived from")
    assert "descends through 2 other memories from s1source00" in suggestions[2].reason


def museum(root: Path) -> dict[str, Path]:
    notes = {
        "s1source00": ("s1.md", "Replacement cards cost ten units", {}),
        "f1fee00000": ("f1.md", "Extracted fee: ten units", {"derived_from": ["s1source00"]}),
        "m1summary0": ("m1.md", "Membership summary", {"derived_from": ["f1fee00000"]}),
        "p1plan0000": ("p1.md", "Plan a paid replacement", {"derived_from": ["m1summary0"]}),
        "d1draft000": ("d1.md", "Prepared order", {"derived_from": ["p1plan0000"]}),
        "s0hours000": ("s0.md", "Opening hours page", {}),
        "u1hours000": ("u1.md", "Open 10 to 18", {"derived_from": ["s0hours000"]}),
    }
    paths = {}
    for mid, (relpath, title, keys) in notes.items():
        paths[mid] = write_note(root, f"museum/{relpath}", mid, title, **keys)
    commit_all(root)
    return paths


def proposed(cli, root: Path) -> set[str]:
    items = cli("--vault", str(root), "review", "--json", "--origin", "lineage").json()
    return {p["targets"][0]["id"] for p in items["proposals"]}


DESCENDANTS = {"f1fee00000", "m1summary0", "p1plan0000", "d1draft000"}


def test_retiring_the_source_proposes_review_of_exactly_its_descendants(vault_dir, cli):
    paths = museum(vault_dir)
    untouched = {mid: paths[mid].read_bytes() for mid in ("u1hours000", "s0hours000")}
    result = cli("--vault", str(vault_dir), "retire", "s1source00", "--reason", "cards are free")
    assert result.code == 0, result.err
    assert "Proposed for review: 4 memories derived from it" in result.err
    assert proposed(cli, vault_dir) == DESCENDANTS
    assert {mid: paths[mid].read_bytes() for mid in untouched} == untouched
    # Proposed, not decided: the descendants are still active until the person says so.
    listed = cli("--vault", str(vault_dir), "list", "--json").json()
    assert {m["id"] for m in listed if m["status"] != "active"} == {"s1source00"}
    assert status(vault_dir) == ""
    # The check finds the same cascade and files nothing twice.
    again = cli("--vault", str(vault_dir), "check", "--json").json()
    assert again["proposed"] == []


def test_replacing_the_source_proposes_review_of_the_same_descendants(vault_dir, cli):
    museum(vault_dir)
    result = cli("--vault", str(vault_dir), "replace", "s1source00", "Replacement cards are free.")
    assert result.code == 0, result.err
    assert proposed(cli, vault_dir) == DESCENDANTS


def test_retiring_a_middle_note_reaches_only_what_lies_below_it(vault_dir, cli):
    museum(vault_dir)
    pid = cli(
        "--vault", str(vault_dir), "propose", "retire", "m1summary0", "--reason", "stale"
    ).out.strip()
    assert cli("--vault", str(vault_dir), "review", "approve", pid).code == 0
    assert proposed(cli, vault_dir) == {"p1plan0000", "d1draft000"}


def test_undoing_the_retirement_withdraws_the_cascade_it_made(vault_dir, cli):
    museum(vault_dir)
    pid = cli(
        "--vault", str(vault_dir), "propose", "retire", "s1source00", "--reason", "x"
    ).out.strip()
    cli("--vault", str(vault_dir), "review", "approve", pid)
    assert proposed(cli, vault_dir) == DESCENDANTS
    result = cli("--vault", str(vault_dir), "review", "undo", pid, "--json")
    assert result.code == 0, result.err
    assert len(result.json()["withdrawn"]) == 4
    assert proposed(cli, vault_dir) == set()


def test_a_source_retired_by_hand_still_cascades_at_the_next_check(vault_dir, cli):
    paths = museum(vault_dir)
    source = paths["s1source00"]
    source.write_text(source.read_text().replace("---\n\n", "status: retired\n---\n\n", 1))
    report = cli("--vault", str(vault_dir), "check", "--json").json()
    assert {p["targets"][0] for p in report["proposed"]} == DESCENDANTS
    assert all(p["origin"]["kind"] == "lineage" for p in report["proposed"])


def test_a_lineage_cycle_ends_the_cascade_and_doctor_reports_it(vault_dir, cli):
    write_note(vault_dir, "a.md", "aaaaaaaaaa", "A", derived_from=["cccccccccc", "rootroot00"])
    write_note(vault_dir, "b.md", "bbbbbbbbbb", "B", derived_from=["aaaaaaaaaa"])
    write_note(vault_dir, "c.md", "cccccccccc", "C", derived_from=["bbbbbbbbbb"])
    write_note(vault_dir, "root.md", "rootroot00", "Root")
    commit_all(vault_dir)
    result = cli("--vault", str(vault_dir), "retire", "rootroot00", "--reason", "wrong")
    assert result.code == 0, result.err
    assert proposed(cli, vault_dir) == {"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"}
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert "derived_from forms a cycle: aaaaaaaaaa → cccccccccc → bbbbbbbbbb → aaaaaaaaaa" in (
        doctor.out
    )


# --- duplicate ids fail closed -------------------------------------------------------------

TWIN_PROFILES = """
[profiles.work]
namespaces = ["work"]
visibility = "private"

[profiles.everything]
namespaces = ["*"]
visibility = "secret"
"""


def _note(vault: Path, relpath: str, front: str, body: str) -> None:
    path = vault / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n{body}\n", encoding="utf-8")


def test_a_summary_of_an_id_two_files_share_is_held_out_unless_the_profile_sees_both(
    vault_dir, cli
):
    with open(vault_dir / "memoryctl.toml", "a", encoding="utf-8") as handle:
        handle.write(TWIN_PROFILES)
    _note(
        vault_dir,
        "memories/work/source.md",
        "id: twin000001\ntitle: Offsite plan\nnamespace: work\nvisibility: private\n",
        "The offsite is in Berlin.",
    )
    _note(
        vault_dir,
        "memories/personal/source-copy.md",
        "id: twin000001\ntitle: Medication\nnamespace: personal\nvisibility: secret\n",
        "Levothyroxine every morning.",
    )
    _note(
        vault_dir,
        "memories/work/summary.md",
        "id: summ000001\ntitle: Offsite checklist\nnamespace: work\nvisibility: private\n"
        "pinned: true\npin_order: 1\nderived_from: [twin000001]\n",
        "Pack the levothyroxine for Berlin.",
    )
    v = ("--vault", str(vault_dir))
    work = cli(*v, "preview", "--profile", "work", "--json").json()
    held = {x["id"]: x["reason"] for x in work["excluded"]}
    assert "its source id is ambiguous" in held["summ000001"]
    assert "levothyroxine" not in work["text"].lower()
    everything = cli(*v, "preview", "--profile", "everything", "--json").json()
    assert "Pack the levothyroxine for Berlin." in everything["text"]
