"""Two current memories about one thing are never shown without saying which is newer.

Same title (strong): the older one carries a dated `newer` line, and a check proposes
retiring it for the person to decide. Same subject (weak): when both are shown, the
older one carries a line that says the newer also says what the subject is, and
nothing is proposed. Built on a copy of `sample_vault`, whose pinned memory says "My
working hours are 09:30 to 17:30".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_bundle import build, edit_frontmatter, reasons

from memoryctl.bundle import Bundle
from memoryctl.bundle_formats import as_json
from memoryctl.checks import run_checks
from memoryctl.moments import moment
from memoryctl.storage.vault import Vault

HOURS = "kb8hsavyr7"  # pinned, work: "... My working hours are 09:30 to 17:30, ..."
NEW_HOURS = "My working hours are now 08:00 to 16:00"
NOW = moment("2026-11-29T12:00:00Z")


pytestmark = pytest.mark.usefixtures("estimated_tokens")


def add(cli, root: Path, body: str, *args: str) -> str:
    result = cli("--vault", str(root), "--json", "add", body, *args)
    assert result.code == 0, result.err
    return result.json()["id"]


def path_of(root: Path, memory_id: str) -> Path:
    vault = Vault(root)
    try:
        return root / vault.resolve(memory_id).path
    finally:
        vault.close()


def targets(proposal: dict) -> list[str]:
    return [t["id"] for t in proposal["targets"]]


def block_of(bundle: Bundle, memory_id: str) -> list[str]:
    [entry] = [e for e in (*bundle.pinned, *bundle.recalled) if e.memory.id == memory_id]
    return entry.block.splitlines()


def tabs_pair(cli, root: Path) -> tuple[str, str]:
    older = add(
        cli, root, "Indent with tabs, shown four wide.", "--title", "Indent with tabs",
        "--created", "2026-10-01", "--namespace", "work",
    )  # fmt: skip
    newer = add(
        cli, root, "Indent with four spaces; tabs only in Makefiles.", "--title",
        "indent  with TABS.", "--created", "2026-10-20", "--namespace", "work",
    )  # fmt: skip
    return older, newer


# --- same title -------------------------------------------------------------------------------


def test_the_older_of_two_memories_titled_alike_is_shown_with_the_newer_beneath(sample_dir, cli):
    older, newer = tabs_pair(cli, sample_dir)
    bundle = build(sample_dir, message="how do I indent with tabs")
    assert block_of(bundle, older)[1:] == [
        '    newer (2026-10-20, also titled "indent with TABS."): Indent with four spaces; '
        "tabs only in Makefiles."
    ]
    assert reasons(bundle)[newer] == f"shown beneath {older} as the newer memory"
    [line] = as_json(bundle)["recalled"][0]["newer"]
    assert (line["why"], line["id"], line["about"]) == ("same_title", newer, "indent with TABS.")


def test_titles_alike_but_of_another_kind_namespace_or_the_same_text_contest_nothing(
    sample_dir, cli
):
    _, newer = tabs_pair(cli, sample_dir)

    def beneath_older() -> list[str]:
        # The preview runs the live checks first, as every command does: a proposal the
        # edit no longer makes is withdrawn before the bundle is built.
        shown = cli("--vault", str(sample_dir), "preview", "-m", "how do I indent with tabs")
        lines = shown.out.splitlines()
        at = lines.index("- Indent with tabs, shown four wide.")
        return [line for line in lines[at + 1 :] if line.startswith("    ")][:1]

    assert beneath_older()
    for change in ({"kind": "preference"}, {"namespace": "personal"}):
        edit_frontmatter(path_of(sample_dir, newer), **change)
        assert beneath_older() == []
        edit_frontmatter(path_of(sample_dir, newer), kind="fact", namespace="work")
    same = path_of(sample_dir, newer)
    head, _, _ = same.read_text(encoding="utf-8").rpartition("---\n")
    same.write_text(head + "---\n\nindent with tabs,  shown four wide.\n", encoding="utf-8")
    assert beneath_older() == []


def test_a_newer_memory_of_the_title_the_profile_may_not_see_gives_no_line(sample_dir, cli):
    older, newer = tabs_pair(cli, sample_dir)
    edit_frontmatter(path_of(sample_dir, newer), visibility="secret")
    bundle = build(sample_dir, message="how do I indent with tabs", profile="work")
    assert block_of(bundle, older)[1:] == []
    assert newer not in json.dumps(as_json(bundle)["recalled"])
    assert "four spaces" not in bundle.text


def test_check_proposes_retiring_the_older_of_a_title_and_never_retires_it(sample_dir, cli):
    older, newer = tabs_pair(cli, sample_dir)
    vault = Vault(sample_dir)
    try:
        run_checks(vault, now=NOW)
        queue = json.loads(cli("--vault", str(sample_dir), "--json", "review", "list").out)
        [proposal] = [p for p in queue["proposals"] if targets(p) == [older]]
        assert proposal["action"] == "retire"
        assert proposal["origin"] == {"kind": "rule", "ref": newer}
        assert "same title" in proposal["reason"]
        assert vault.index.get(older).status == "active"
        again = run_checks(vault, now=NOW)
        assert not [p for p in again.proposed if p.targets == (older,)]
    finally:
        vault.close()
    # The rule's own words stay on the line, as a typed fact's `replaces this` does.
    line = block_of(build(sample_dir, message="how do I indent with tabs"), older)[1]
    assert line.startswith('    newer (2026-10-20, also titled "indent with TABS."): Indent')


def test_a_proposal_from_a_title_is_withdrawn_once_the_newer_says_the_same(sample_dir, cli):
    older, newer = tabs_pair(cli, sample_dir)
    root = str(sample_dir)
    assert cli("--vault", root, "check").code == 0
    replaced = cli("--vault", root, "replace", newer, "Indent with tabs, shown four wide.")
    assert replaced.code == 0, replaced.err
    listed = cli("--vault", root, "--json", "review", "list", "--state", "withdrawn").json()
    assert [targets(p) for p in listed["proposals"]] == [[older]]


def test_adding_a_memory_of_a_title_already_current_says_how_to_replace_it(sample_dir, cli):
    root = str(sample_dir)
    older = add(cli, sample_dir, "Indent with tabs.", "--title", "Indent with tabs")
    added = cli("--vault", root, "add", "Indent with four spaces.", "--title", "INDENT WITH TABS!")
    assert added.code == 0, added.err
    second = added.out.strip()
    assert "Another current memory has this title:" in added.err
    assert f"  {older}  Indent with tabs  (" in added.err
    assert f"memoryctl replace {older} TEXT" in added.err
    assert f"memoryctl add --retires {older}" in added.err
    assert "Both stay current" in added.err
    third = cli("--vault", root, "add", "Tabs, four wide.", "--title", "Indent with tabs")
    assert "2 other current memories have this title:" in third.err
    assert "All stay current" in third.err and "Both" not in third.err
    cli("--vault", root, "retire", third.out.strip(), "--reason", "written twice")
    data = cli("--vault", root, "--json", "add", "Tabs.", "--title", "indent with tabs").json()
    assert {m["id"] for m in data["same_title"]} == {older, second}
    # Naming it in --retires is the way to say so: no hint, and `retires` contests it.
    named = cli("--vault", root, "--json", "add", "Spaces.", "--title", "Indent with tabs",
                "--retires", older)  # fmt: skip
    assert older not in [m["id"] for m in named.json()["same_title"]]
    assert named.json()["retires"] == [older]
    alone = cli("--vault", root, "add", "Use ruff", "--title", "Formatter")
    assert "same title" not in alone.err and "this title" not in alone.err


async def test_an_agent_remembering_a_title_already_current_is_told_and_sees_the_line(
    sample_dir, cli
):
    from mcp.client import Client

    from memoryctl.mcp.server import make_server

    older = add(
        cli, sample_dir, "Indent with tabs.", "--title", "Indent with tabs", "--namespace", "work",
        "--created", "2026-10-01",
    )  # fmt: skip
    async with Client(make_server(Vault(sample_dir), "work", "coding-agent")) as client:
        stored = await client.call_tool(
            "remember",
            {"body": "Indent with four spaces.", "title": "Indent with tabs", "namespace": "work"},
        )
        context = await client.call_tool("get_context", {"message": "indent with tabs"})
    told = "".join(getattr(block, "text", "") for block in stored.content)
    assert f"  {older}  Indent with tabs  (" in told
    assert "call propose with action 'replace'" in told
    assert [m["id"] for m in stored.structured_content["same_title"]] == [older]
    text = "".join(getattr(block, "text", "") for block in context.content)
    shown = text.index("- Indent with tabs.")
    assert 'also titled "Indent with tabs"): Indent with four spaces.' in text[shown:]


# --- same subject -----------------------------------------------------------------------------


def test_a_new_statement_of_the_pinned_working_hours_is_shown_beneath_the_pin(sample_dir, cli):
    add(cli, sample_dir, NEW_HOURS, "--namespace", "work", "--created", "2026-10-14")
    bundle = build(sample_dir, message="what are my working hours")
    assert f'    newer (2026-10-14, also says what "working hours" are): {NEW_HOURS}' in (
        block_of(bundle, HOURS)
    )
    assert bundle.text.count(NEW_HOURS) == 1


def test_the_same_subject_is_never_proposed_and_needs_both_memories_shown(sample_dir, cli):
    new = add(cli, sample_dir, NEW_HOURS, "--namespace", "work", "--created", "2026-10-14")
    vault = Vault(sample_dir)
    try:
        found = run_checks(vault, now=NOW)
        assert not [p for p in found.proposed if HOURS in p.targets or p.ref == new]
    finally:
        vault.close()
    # Not recalled for this message: the pin shows alone, with nothing beneath it.
    bundle = build(sample_dir, message="peanut allergy")
    assert block_of(bundle, HOURS)[1:] == []


def test_an_agent_recalling_both_statements_is_told_which_is_newer(sample_dir, cli):
    from memoryctl.mcp.view import Caller, recall_for

    add(cli, sample_dir, NEW_HOURS, "--namespace", "work", "--created", "2026-10-14")
    vault = Vault(sample_dir)
    try:
        shelf = recall_for(vault, Caller("coding-agent", vault.config.profile("work")), "hours")
        [pin] = [s for s in shelf.shown if s.memory.id == HOURS]
        assert 'newer (2026-10-14, also says what "working hours" are)' in pin.block
        assert pin.as_json()["newer"][0]["why"] == "same_subject"
    finally:
        vault.close()


# --- sync: two devices added a memory by one name --------------------------------------------


def test_a_memory_both_devices_added_by_one_name_shows_the_newer_beneath_the_older(
    tmp_path, cli, monkeypatch
):
    from tests.sync_support import make_devices

    devices = make_devices(tmp_path, cli, monkeypatch)
    first = devices.add(devices.laptop, "Indent with tabs", "--created", "2026-10-01")
    second = devices.add(
        devices.desktop, "Indent with four spaces", "--title", "Indent with tabs",
        "--created", "2026-10-02",
    )  # fmt: skip
    devices.sync(devices.laptop)
    assert devices.sync(devices.desktop).code == 0
    bundle = devices.run(devices.desktop, "preview", "-m", "indent with tabs").out
    older = bundle.index("- Indent with tabs\n")
    assert bundle[older:].startswith(
        '- Indent with tabs\n    newer (2026-10-02, also titled "Indent with tabs"): '
    )
    assert "Indent with four spaces" in bundle[older:].splitlines()[1]
    listed = devices.run(devices.desktop, "--json", "review", "list").json()["proposals"]
    rules = [(targets(p), p["origin"]["ref"]) for p in listed if p["origin"]["kind"] == "rule"]
    assert rules == [([first], second)]


def test_one_heading_in_two_imported_files_is_two_things_and_contests_nothing(tmp_path, cli):
    from memoryctl.actions import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    for repo, rule in (("api", "Run pytest -x before you push."), ("web", "Run vitest once.")):
        folder = tmp_path / repo
        folder.mkdir()
        (folder / "AGENTS.md").write_text(f"# Rules\n\n## Testing\n\n{rule}\n", encoding="utf-8")
        done = cli("--vault", str(root), "import", "agents-md", str(folder / "AGENTS.md"))
        assert done.code == 0, done.err
    shown = cli("--vault", str(root), "preview", "-m", "testing: run pytest or vitest").out
    assert "Run pytest -x" in shown and "Run vitest once." in shown
    assert "also titled" not in shown and "newer (" not in shown
    listed = cli("--vault", str(root), "--json", "review", "list").json()["proposals"]
    assert listed == []


def test_notes_of_one_title_in_two_folders_are_two_things_and_in_one_folder_one(tmp_path, cli):
    """An Obsidian vault keeps an `Overview` in each project's folder: those are two
    things. A second note titled alike in one folder is the same thing written twice."""
    from memoryctl.actions import init_vault

    root = tmp_path / "notes"
    for folder, text in (("ProjA", "Project A ships the billing service."),
                         ("ProjB", "Project B is the new search page.")):  # fmt: skip
        (root / folder).mkdir(parents=True)
        note = root / folder / "Overview.md"
        note.write_text(f"# Overview\n\n{text}\n", encoding="utf-8")
    init_vault(root)
    asked = ("--vault", str(root), "preview", "-m", "overview of the project")
    shown = cli(*asked).out
    assert "billing service" in shown and "search page" in shown
    assert "also titled" not in shown
    assert cli("--vault", str(root), "--json", "review", "list").json()["proposals"] == []

    again = root / "ProjA" / "Overview 2.md"
    again.write_text("# Overview\n\nProject A ships billing and invoices.\n", encoding="utf-8")
    shown = cli(*asked).out
    assert shown.count("also titled") == 1
    at = shown.index("also titled")
    assert "billing and invoices" in shown[at : shown.index("\n", at)]
    [proposal] = cli("--vault", str(root), "--json", "review", "list").json()["proposals"]
    assert proposal["action"] == "retire" and "same title" in proposal["reason"]
