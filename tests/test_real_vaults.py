"""Real vaults: Obsidian's own `status`, lists as their owners typed them, titles as
Obsidian and Claude Code show them, templates, and Dendron's epoch-millisecond dates.

Each test is one of the failures found by running memoryctl over public Obsidian vaults,
a Hugo site, a Dendron site, a Claude Code memory folder and a Cline memory bank.
"""

from __future__ import annotations

import json
from pathlib import Path

from memoryctl.lifecycle import lifecycle_writes, state_of
from memoryctl.memory import memory_from_note
from memoryctl.storage import notefile

ADR = (
    "---\n"
    "id: adr0000001\n"
    "title: Use Postgres for the event store\n"
    "created: 2026-01-05\n"
    "status: accepted\n"
    "deciders: [lee, ana]\n"
    "---\n"
    "\n"
    "We store events in Postgres, not Kafka.\n"
)


def v(root: Path) -> tuple[str, str]:
    return ("--vault", str(root))


def doctor_lines(cli, root: Path) -> list[str]:
    """What doctor says, apart from the files a test wrote and left for the person to
    commit."""
    out = cli(*v(root), "doctor").out.splitlines()
    return [line for line in out if not line.endswith("saved but not committed")]


def read(relpath: str, text: str):
    note = notefile.parse_text(text)
    return memory_from_note(relpath, note.data, note.body, "2026-01-01T00:00:00Z")


# --- 1. the owner's `status` ----------------------------------------------------------------


def test_a_note_with_its_own_status_is_current_and_in_context(vault_dir, cli):
    (vault_dir / "adr-001.md").write_text(ADR)
    (vault_dir / "post.md").write_text(
        '---\nid: post000001\nstatus: ["[[Published]]"]\n---\nThe launch post is live.\n'
    )
    shown = cli(*v(vault_dir), "show", "adr0000001", "--json").json()
    assert shown["status"] == "active" and shown["problems"] == []
    assert cli(*v(vault_dir), "show", "post000001", "--json").json()["status"] == "active"
    preview = cli(*v(vault_dir), "preview", "--message", "which event store Postgres Kafka")
    assert "We store events in Postgres" in preview.out
    doctor = doctor_lines(cli, vault_dir)
    assert not [line for line in doctor if "adr-001.md" in line or "post.md" in line]


def test_retire_then_restore_keeps_the_owners_status_byte_for_byte(vault_dir, cli):
    path = vault_dir / "adr-001.md"
    path.write_text(ADR)
    retired = cli(*v(vault_dir), "retire", "adr0000001", "--reason", "superseded by ADR 7")
    assert retired.code == 0, retired.err
    text = path.read_text()
    assert "status: accepted\n" in text and "lifecycle: retired\n" in text
    assert cli(*v(vault_dir), "show", "adr0000001", "--json").json()["status"] == "retired"
    restored = cli(*v(vault_dir), "restore", "adr0000001")
    assert restored.code == 0, restored.err
    assert path.read_text() == ADR


def test_holding_and_confirming_a_note_with_its_own_status_never_touches_it(vault_dir, cli):
    path = vault_dir / "adr-001.md"
    path.write_text(ADR)
    cli(*v(vault_dir), "propose", "review", "adr0000001", "--reason", "check the figures")
    [pending] = cli(*v(vault_dir), "review", "list", "--json").json()["proposals"]
    approve = cli(*v(vault_dir), "review", "approve", pending["id"])
    assert approve.code == 0, approve.err
    assert "status: accepted\n" in path.read_text()
    assert cli(*v(vault_dir), "show", "adr0000001", "--json").json()["status"] == "needs_review"
    assert cli(*v(vault_dir), "confirm", "adr0000001").code == 0
    after = path.read_text()
    assert "status: accepted\n" in after and "lifecycle" not in after


def test_memoryctl_keeps_writing_status_on_notes_that_have_none_of_their_own(vault_dir, cli):
    path = vault_dir / "plain.md"
    path.write_text("---\nid: plain00001\n---\nold fact\n")
    cli(*v(vault_dir), "retire", "plain00001", "--reason", "gone")
    assert "status: retired\n" in path.read_text() and "lifecycle" not in path.read_text()


def test_a_misspelled_state_or_lifecycle_is_held_for_review_as_before():
    for text in ("status: Retired", "status: needs-review", "lifecycle: retird"):
        state, problem = state_of(notefile.parse_text(f"---\n{text}\n---\nx\n").data)
        assert state == "needs_review" and problem and "held for review" in problem


def test_the_lifecycle_key_wins_and_goes_away_when_the_note_is_current_again():
    owner = {"status": "accepted"}
    assert lifecycle_writes(owner, {"status": "retired", "x": 1}) == {
        "lifecycle": "retired",
        "x": 1,
    }
    assert lifecycle_writes({**owner, "lifecycle": "retired"}, {"status": "active"}) == {
        "lifecycle": None
    }
    # memoryctl's own `status` says retired: going back to active must say so in lifecycle.
    assert lifecycle_writes(
        {"status": "retired", "lifecycle": "retired"}, {"status": "active"}
    ) == {"lifecycle": "active"}
    assert lifecycle_writes({}, {"status": "retired"}) == {"status": "retired"}
    assert state_of({"status": "retired", "lifecycle": "active"}) == ("active", None)
    assert state_of({"status": None}) == ("active", None)


# --- 2. lists -------------------------------------------------------------------------------


def test_a_blank_list_item_drops_only_itself():
    memory = read("n.md", "---\ntags:\n  - project\n  - \n  -\n  - work\n---\nbody\n")
    assert memory.tags == ("project", "work") and memory.problems == ()


def test_dates_and_booleans_in_a_list_are_their_text():
    memory = read("n.md", "---\ntags: [2024-01-05, true, x, 3]\n---\nbody\n")
    assert memory.tags == ("2024-01-05", "true", "x", "3") and memory.problems == ()


def test_only_the_items_that_cannot_be_read_are_reported():
    memory = read("n.md", "---\ntags:\n  - keep\n  - {a: b}\n---\nbody\n")
    assert memory.tags == ("keep",)
    assert memory.problems == (
        "tags: must be a list of strings; 1 item is a list or a mapping, skipped",
    )


def test_a_vault_of_notes_with_blank_tags_lists_them_without_warnings(vault_dir, cli):
    for i in range(3):
        (vault_dir / f"n{i}.md").write_text(f"---\ntags:\n  - project\n  - \n---\nnote {i}\n")
    listed = cli(*v(vault_dir), "list", "--json").json()
    assert [m["tags"] for m in listed] == [["project"]] * 3
    assert all(not m["problems"] for m in listed)
    assert cli(*v(vault_dir), "list", "--tag", "project", "--json").json()


# --- 3. titles and aliases ------------------------------------------------------------------


def test_a_note_that_starts_with_a_lower_heading_is_titled_by_its_file_name(vault_dir, cli):
    folder = vault_dir / "References"
    folder.mkdir()
    (folder / "Kevin Kelly.md").write_text("## Books\n\n- The Inevitable\n")
    found = cli(*v(vault_dir), "search", "Kevin Kelly", "--json").json()
    assert [m["title"] for m in found] == ["Kevin Kelly"]


def test_title_then_name_then_a_first_line_h1_then_the_file_name():
    assert read("a.md", "---\ntitle: T\nname: N\n---\n# H\n").title == "T"
    assert read("a.md", "---\nname: N\n---\n# H\n").title == "N"
    assert read("a.md", "---\nx: 1\n---\n\n# The heading\ntext\n").title == "The heading"
    assert read("a.md", "intro line\n\n# Later heading\n").title == "a"
    assert read("dir/b c.md", "text only\n").title == "b c"


def test_the_heading_that_names_a_note_reads_as_its_first_words_in_context(vault_dir, cli):
    folder = vault_dir / "Projects"
    folder.mkdir()
    (folder / "Search page.md").write_text("# Search page\n\nShips in March, behind a flag.\n")
    shown = cli(*v(vault_dir), "preview", "-m", "when does the search page ship").out
    assert "- Search page: Ships in March, behind a flag." in shown
    assert "# Search page" not in shown
    # A heading that is not the note's title is part of what the note says.
    assert read("Billing.md", "Intro.\n\n# Invoices\nSent.\n").text == "Intro. # Invoices Sent."
    assert read("x.md", "---\ntitle: Q3 plan\n---\n# Goals\nShip it.\n").text == "# Goals Ship it."
    assert read("Only a heading.md", "# Only a heading\n").text == "Only a heading"


def test_aliases_are_read_as_a_list():
    memory = read("a.md", "---\naliases: [KK, Kelly]\n---\nx\n")
    assert memory.aliases == ("KK", "Kelly")
    assert read("a.md", "---\naliases: KK\n---\nx\n").aliases == ("KK",)


def test_a_claude_code_memory_file_has_its_name_description_and_type(vault_dir, cli):
    (vault_dir / "feedback_pnpm.md").write_text(
        "---\n"
        "name: Use pnpm not npm\n"
        "description: The user wants pnpm for every install in this repo\n"
        "type: feedback\n"
        "---\n"
        "\n"
        "Always run pnpm install; npm breaks the lockfile.\n"
    )
    [memory] = cli(*v(vault_dir), "list", "--json").json()
    assert memory["title"] == "Use pnpm not npm"
    assert memory["kind"] == "preference"
    assert memory["description"] == "The user wants pnpm for every install in this repo"
    assert memory["problems"] == []


def test_an_empty_claude_code_memory_speaks_by_its_description():
    memory = read("m.md", "---\nname: Role\ndescription: Lee is a data engineer\ntype: user\n---\n")
    assert memory.text == "Lee is a data engineer" and memory.kind == "fact"


# --- 4. templates and foreign dates ---------------------------------------------------------


def test_obsidians_templates_folder_holds_no_memories(vault_dir, cli):
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / ".obsidian" / "templates.json").write_text(
        json.dumps({"folder": "Meta/Templates"})
    )
    (vault_dir / "Meta" / "Templates").mkdir(parents=True)
    (vault_dir / "Meta" / "Templates" / "Daily.md").write_text(
        "---\ncreated: {{date}}\n---\n# {{title}}\n"
    )
    (vault_dir / "Meta" / "kept.md").write_text("a real note\n")
    listed = cli(*v(vault_dir), "list", "--json").json()
    assert [m["path"] for m in listed] == ["Meta/kept.md"]


def test_a_templates_list_in_the_settings_names_more_folders(vault_dir, cli):
    config = vault_dir / "memoryctl.toml"
    config.write_text(
        config.read_text().replace("[vault]\n", '[vault]\ntemplates = ["archetypes"]\n')
    )
    (vault_dir / "archetypes").mkdir()
    (vault_dir / "archetypes" / "default.md").write_text("---\ndraft: true\n---\n")
    assert cli(*v(vault_dir), "list", "--json").json() == []


def test_a_file_with_placeholders_is_listed_as_a_template_searchable_and_never_in_context(
    vault_dir, cli
):
    path = vault_dir / "weekly-review.md"
    original = (
        "---\ncreated: {{date}} {{time}}\ntags: [review]\n---\n# Weekly review\n\nWhat shipped?\n"
    )
    path.write_text(original)
    [memory] = cli(*v(vault_dir), "list", "--json").json()
    assert memory["kind"] == "template" and memory["error"] is None and not memory["problems"]
    assert memory["title"] == "Weekly review"
    assert [m["path"] for m in cli(*v(vault_dir), "search", "shipped", "--json").json()] == [
        "weekly-review.md"
    ]
    assert not [line for line in doctor_lines(cli, vault_dir) if "weekly-review.md" in line]
    preview = cli(*v(vault_dir), "preview", "--message", "what shipped weekly review")
    assert "What shipped" not in preview.out
    pin = cli(*v(vault_dir), "pin", memory["id"])
    assert pin.code == 1 and "it is a template" in pin.err
    assert path.read_text() == original


def test_dendron_dates_are_read_and_written_back_as_epoch_milliseconds(vault_dir, cli):
    path = vault_dir / "proj.alpha.md"
    path.write_text(
        "---\nid: dendron01\ntitle: Alpha\ndesc: ''\nupdated: 1636543453185\n"
        "created: 1636543400000\n---\n\nAlpha ships in May.\n"
    )
    shown = cli(*v(vault_dir), "show", "dendron01", "--json").json()
    assert shown["created"] == "2021-11-10T11:23:20Z" and shown["problems"] == []
    result = cli(*v(vault_dir), "replace", "dendron01", "Alpha ships in June.")
    assert result.code == 0, result.err
    data = notefile.parse_bytes(path.read_bytes()).data
    assert isinstance(data["updated"], int) and data["updated"] > 1636543453185
    assert data["created"] == 1636543400000


def test_obsidian_notes_dated_by_their_plugins_keys_keep_those_keys_as_written(vault_dir, cli):
    """Templater's `date:`, the Linter's `date created` in its default format, and a
    `created_at`: each dates its note; a pin writes no `created` beside it, and the
    key's line stays byte for byte."""
    notes = {
        "daily.md": "---\ndate: 2024-03-05\ntags: [daily]\n---\n\nStand-up moved to ten.\n",
        "linted.md": (
            "---\ndate created: Wednesday, January 3rd 2024, 2:30:12 pm\n"
            "date modified: Friday, January 5th 2024, 9:00:00 am\n---\nTabs in Go.\n"
        ),
        "export.md": "---\ncreated_at: '2023-07-01T08:00:00+02:00'\n---\nLives in Porto.\n",
        "diary.md": "---\ndate: someday\n---\nA trip to Kyoto.\n",
    }
    for name, text in notes.items():
        (vault_dir / name).write_text(text)
    listed = {m["path"]: m for m in cli(*v(vault_dir), "list", "--json").json()}
    assert listed["daily.md"]["created"] == "2024-03-05T00:00:00Z"
    assert listed["linted.md"]["created"] == "2024-01-03T14:30:12Z"
    assert listed["linted.md"]["updated"] == "2024-01-05T09:00:00Z"
    assert listed["export.md"]["created"] == "2023-07-01T06:00:00Z"
    assert listed["diary.md"]["created"] > "2026" and listed["diary.md"]["problems"] == []
    for name in notes:
        assert cli(*v(vault_dir), "pin", listed[name]["id"]).code == 0
    for name, text in notes.items():
        written = (vault_dir / name).read_text()
        head = text.split("---\n")[1]
        assert written.startswith("---\n" + head), name
        assert ("\ncreated:" in written) == (name == "diary.md"), name
    again = {m["path"]: m for m in cli(*v(vault_dir), "list", "--json").json()}
    assert all(again[name]["created"] == listed[name]["created"] for name in notes)


# --- the repair for vaults an earlier memoryctl wrote into ----------------------------------


def _git(root: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def _taken_over(vault_dir: Path, name: str, text: str, value: str) -> Path:
    """A note whose `status` an earlier memoryctl wrote over, committed as it did."""
    path = vault_dir / name
    path.write_text(text)
    _git(vault_dir, "add", name)
    _git(vault_dir, "commit", "-qm", "Add a decision record")
    path.write_text(text.replace("status: accepted\n", f"status: {value}\n"))
    _git(vault_dir, "commit", "-qam", f"Restore {name}\n\nproposal: p1\naction: restore")
    return path


def test_doctor_fix_plans_to_put_back_a_status_an_older_version_took(vault_dir):
    from memoryctl.repairs import apply_repairs, owner_status_repairs
    from memoryctl.storage.vault import Vault

    path = _taken_over(vault_dir, "adr-001.md", ADR, "active")
    untouched = vault_dir / "mine.md"
    untouched.write_text("---\nid: mine000001\nstatus: retired\n---\nx\n")
    _git(vault_dir, "add", "mine.md")
    _git(vault_dir, "commit", "-qm", "mine")
    vault = Vault(vault_dir)
    [repair] = owner_status_repairs(vault)
    assert repair.line().startswith(
        "adr-001.md: put back `status: accepted` (memoryctl wrote `status: active` over it in "
    )
    assert path.read_text() != ADR  # planning changes nothing
    commit = apply_repairs(vault, [repair])
    assert commit and path.read_text() == ADR
    assert _git(vault_dir, "log", "-1", "--format=%s").strip() == "Put back the owners' own status"
    assert owner_status_repairs(Vault(vault_dir)) == []  # done once, never again


def test_a_retired_note_gets_its_status_back_and_stays_retired(vault_dir):
    from memoryctl.repairs import apply_repairs, owner_status_repairs
    from memoryctl.storage.vault import Vault

    path = _taken_over(vault_dir, "adr-002.md", ADR.replace("adr0000001", "adr0000002"), "retired")
    vault = Vault(vault_dir)
    [repair] = owner_status_repairs(vault)
    assert repair.line().endswith("and keep `lifecycle: retired`")
    apply_repairs(vault, [repair])
    text = path.read_text()
    assert "status: accepted\n" in text and text.endswith(
        "lifecycle: retired\n---\n\nWe store events in Postgres, not Kafka.\n"
    )
    assert Vault(vault_dir).index.by_path("adr-002.md").status == "retired"


def test_a_persons_own_change_of_status_is_not_undone(vault_dir):
    from memoryctl.repairs import owner_status_repairs
    from memoryctl.storage.vault import Vault

    path = vault_dir / "adr-003.md"
    path.write_text(ADR)
    _git(vault_dir, "add", "adr-003.md")
    _git(vault_dir, "commit", "-qm", "add")
    path.write_text(ADR.replace("status: accepted", "status: active"))
    _git(vault_dir, "commit", "-qam", "I decided this is active")
    assert owner_status_repairs(Vault(vault_dir)) == []


def test_doctor_fix_shows_the_plan_asks_and_then_fixes_in_one_commit(vault_dir, cli):
    path = _taken_over(vault_dir, "adr-001.md", ADR, "active")
    refused = cli(*v(vault_dir), "doctor", "--fix")
    assert refused.code == 1 and "confirm with --yes" in refused.err
    assert "put back `status: accepted`" in refused.out and path.read_text() != ADR
    fixed = cli(*v(vault_dir), "doctor", "--fix", "--yes")
    assert fixed.code == 0, fixed.err
    assert "Fixed 1." in fixed.out and path.read_text() == ADR
    again = cli(*v(vault_dir), "doctor", "--fix", "--yes", "--json").json()
    assert again == {"planned": [], "applied": False, "commit": None}


def test_an_alias_is_searched_as_the_title_is_and_survives_edits(vault_dir, cli):
    path = vault_dir / "kk.md"
    path.write_text("---\naliases: [KK, The Technium author]\n---\n## Books\n\n- The Inevitable\n")
    found = cli(*v(vault_dir), "search", "Technium", "--json").json()
    assert [m["title"] for m in found] == ["kk"]
    path.write_text("---\naliases: [Wired founder]\n---\n## Books\n")
    assert cli(*v(vault_dir), "search", "Technium", "--json").json() == []
    assert [m["path"] for m in cli(*v(vault_dir), "search", "Wired", "--json").json()] == ["kk.md"]
    assert cli(*v(vault_dir), "reindex", "--full").code == 0
    assert [m["path"] for m in cli(*v(vault_dir), "search", "Wired", "--json").json()] == ["kk.md"]


def test_a_hugo_archetype_anywhere_is_a_template_not_a_broken_file(vault_dir, cli):
    (vault_dir / "posts").mkdir()
    (vault_dir / "posts" / "default.md").write_text(
        '---\ntitle: "{{ replace .File.ContentBaseName "-" " " | title }}"\n'
        "date: '{{ .Date }}'\ndraft: true\n---\n\nWrite the post here.\n"
    )
    [memory] = cli(*v(vault_dir), "list", "--json").json()
    assert memory["kind"] == "template" and memory["error"] is None
    assert "Write the post here." in memory["body"]


def test_a_value_that_only_mentions_braces_is_no_template():
    assert notefile.template_split("---\ntitle: use {{x}} in Jinja\n---\nbody\n") is None
    assert notefile.template_split("no frontmatter {{date}}\n") is None
    assert notefile.template_split("---\n- {{x}}\n---\n") == ("- {{x}}", "")


def test_compact_timestamps_of_obsidian_plugins_are_moments_not_milliseconds(vault_dir, cli):
    path = vault_dir / "zettel.md"
    path.write_text(
        "---\nid: zettel0001\ncreated: 20241229143052\nupdated: 202412291430\n---\nSlip box.\n"
    )
    shown = cli(*v(vault_dir), "show", "zettel0001", "--json").json()
    assert shown["created"] == "2024-12-29T14:30:52Z" and shown["problems"] == []
    assert shown["updated"] == "2024-12-29T14:30:00Z"
    assert cli(*v(vault_dir), "replace", "zettel0001", "Slip box, kept.").code == 0
    data = notefile.parse_bytes(path.read_bytes()).data
    assert data["created"] == 20241229143052  # as written
    assert not isinstance(data["updated"], int)  # a moment, not milliseconds of the 27th century
