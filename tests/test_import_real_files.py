"""Imports of files as people's tools and editors really leave them: a BOM from a
Windows editor, CRLF, no trailing newline, an empty file, a binary file under a text
name, Cursor's unquoted globs. Every file of the source is either imported or reported
with its path and reason; the source is never changed; a second import adds nothing;
the vault the import made has no problem for `doctor`. The fixtures are written here,
in the shapes of each tool's documentation and public examples.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryctl.actions import init_vault
from memoryctl.importing import digest, run_import, source_label
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"


def _tree(root: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    for relpath, raw in files.items():
        target = root / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(raw)
    return files


def _unchanged(root: Path, files: dict[str, bytes]) -> bool:
    return all((root / relpath).read_bytes() == raw for relpath, raw in files.items())


def _import(cli, vault_dir: Path, source: str, path: Path) -> dict:
    result = cli("--vault", str(vault_dir), "import", source, str(path), "--json")
    assert result.code == 0, result.err
    return result.json()


def _by_file(data: dict) -> dict[str, str]:
    """Each skipped part's reason, by its ref from the source's folder on."""
    return {s["ref"].removeprefix(data["path"] + "/"): s["reason"] for s in data["skipped"]}


def _clean_and_idempotent(cli, vault_dir: Path, source: str, path: Path) -> None:
    again = _import(cli, vault_dir, source, path)
    assert again["made"] == [] and again["proposed"] == [] and again["commit"] is None
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert doctor.code == 0 and "No problems found." in doctor.out, doctor.out


def test_a_cline_memory_bank_with_an_empty_and_a_binary_file_reports_both_by_name(
    vault_dir, tmp_path, cli
):
    bank = tmp_path / "project"
    files = _tree(
        bank,
        {
            "memory-bank/projectbrief.md": b"# Project Brief\n\n## Goal\nA recipe app.\n",
            "memory-bank/activeContext.md": b"# Active Context\r\n\r\n## Focus\r\nSync.",
            "memory-bank/progress.md": b"",
            "memory-bank/systemPatterns.md": b"# System Patterns\n",
            "memory-bank/techContext.md": b"\xff\xfe#\x00 \x00T\x00",
        },
    )
    data = _import(cli, vault_dir, "cline", bank)
    assert sorted(m["title"] for m in data["made"]) == ["Focus", "Goal"]
    assert _by_file(data) == {
        "progress.md": "empty",
        "systemPatterns.md": "no text of its own (only headings, imports or memoryctl's block)",
        "techContext.md": "not valid UTF-8 (byte 0)",
    }
    assert _unchanged(bank, files)
    _clean_and_idempotent(cli, vault_dir, "cline", bank)


def test_an_empty_claude_md_is_reported_rather_than_passed_over(vault_dir, tmp_path, cli):
    (tmp_path / "CLAUDE.md").write_bytes(b"\n")
    data = _import(cli, vault_dir, "claude-md", tmp_path)
    assert data["made"] == []
    assert _by_file(data) == {"CLAUDE.md": "empty"}


@pytest.mark.parametrize(
    ("source", "relpath"),
    [
        ("claude-code", "memory/user_role.md"),
        ("letta", "letta/system/human.md"),
        ("basic-memory", "notes/Coffee.md"),
        ("cursor-rules", "project/.cursor/rules/style.mdc"),
    ],
)
def test_a_file_saved_with_a_bom_keeps_its_frontmatter(vault_dir, tmp_path, cli, source, relpath):
    """Notepad and PowerShell begin a UTF-8 file with a BOM; the frontmatter after it is
    the file's frontmatter, not text of the memory."""
    raw = (
        b"\xef\xbb\xbf---\r\nname: Tea person\r\ntitle: Tea person\r\n"
        b"description: Tea person\r\n---\r\nDrinks green tea, no sugar."
    )
    files = _tree(tmp_path, {relpath: raw})
    data = _import(cli, vault_dir, source, tmp_path / relpath.split("/")[0])
    assert [m["title"] for m in data["made"]] == ["Tea person"]
    shown = cli("--vault", str(vault_dir), "show", data["made"][0]["id"])
    assert "Drinks green tea, no sugar." in shown.out and "---" not in shown.out
    assert _unchanged(tmp_path, files)
    _clean_and_idempotent(cli, vault_dir, source, tmp_path / relpath.split("/")[0])


def test_a_binary_file_with_a_markdown_name_is_skipped_not_imported_as_garbage(
    vault_dir, tmp_path, cli
):
    folder = tmp_path / "memory"
    files = _tree(
        folder,
        {
            "pasted.md": b"PK\x03\x04\x00\x00\x08\x00 a zip saved as .md",
            "user_role.md": b"---\nname: Role\ntype: user\n---\nA Go engineer.\n",
        },
    )
    data = _import(cli, vault_dir, "claude-code", folder)
    assert [m["title"] for m in data["made"]] == ["Role"]
    assert _by_file(data) == {"pasted.md": "a binary file, not text"}
    assert _unchanged(folder, files)


def test_a_source_file_larger_than_a_vault_file_may_be_is_skipped_unread(vault_dir, tmp_path, cli):
    """A memory made from it would be a file the vault refuses to read."""
    folder = tmp_path / "letta"
    _tree(folder, {"system/persona.md": b"I am a coding agent.\n"})
    with (folder / "archive.md").open("wb") as big:
        big.truncate(10 * 1024 * 1024 + 1)
    data = _import(cli, vault_dir, "letta", folder)
    assert [m["title"] for m in data["made"]] == ["system/persona"]
    assert _by_file(data) == {"archive.md": "file is larger than 10 MB"}


def test_cursor_rules_with_unquoted_globs_come_in_as_cursor_reads_them(vault_dir, tmp_path, cli):
    """Cursor writes `globs: *.py` without quotes; YAML reads `*` as an alias and fails,
    but Cursor reads the line as it stands, and so must the import."""
    project = tmp_path / "project"
    files = _tree(
        project,
        {
            ".cursor/rules/python.mdc": (
                b"---\ndescription: Python style\nglobs: *.py\nalwaysApply: false\n---\n"
                b"# Python\n\n- Use ruff.\n"
            ),
            ".cursor/rules/meta.mdc": (
                b"---\ndescription: 'Rule files'\nglobs: *.mdc, .cursor/**\n"
                b"alwaysApply: true\n---\nFrontmatter first."
            ),
            ".cursor/rules/broken.mdc": b"---\ndescription: [unclosed\nglobs: *.py\n---\nText\n",
        },
    )
    data = _import(cli, vault_dir, "cursor-rules", project)
    assert sorted(m["title"] for m in data["made"]) == ["Python style", "Rule files"]
    assert list(_by_file(data)) == [".cursor/rules/broken.mdc"]
    pins = cli("--vault", str(vault_dir), "list", "--pinned", "--json").json()
    assert [p["title"] for p in pins] == ["Rule files"]
    kept = sorted(
        (vault_dir / m["path"]).read_text(encoding="utf-8").split("globs: ")[1].split("\n")[0]
        for m in data["made"]
    )
    assert kept == ['"*.mdc, .cursor/**"', '"*.py"']
    assert _unchanged(project, files)
    _clean_and_idempotent(cli, vault_dir, "cursor-rules", project)


def test_a_project_with_only_a_cursorrules_file_imports_it_and_not_its_readme(
    vault_dir, tmp_path, cli
):
    project = tmp_path / "project"
    _tree(
        project,
        {
            ".cursorrules": b"Always write tests first.\n",
            "README.md": b"# My project\nInstall with pip.\n",
            "docs/design.md": b"# Design\nA long document.\n",
        },
    )
    data = _import(cli, vault_dir, "cursor-rules", project)
    assert [m["ref"].removeprefix(data["path"] + "/") for m in data["made"]] == [
        ".cursorrules#(top)"
    ]


def test_basic_memory_tasks_and_code_are_the_notes_text_and_a_shown_name_is_no_target(
    vault_dir, tmp_path, cli
):
    """Basic Memory itself reads `- [ ] task` and `- [x] done` as Markdown tasks, not as
    observations with a blank category, and `[[Target|shown]]` as a link to Target."""
    project = tmp_path / "basic-memory"
    note = (
        "---\ntitle: Espresso Notes\ntags:\n- coffee\n- \n- 2024-05-01\n---\n\n"
        "# Espresso Notes\n\nDialing in the new grinder.\n\n"
        "- [technique] Grind finer when shots run fast #espresso\n"
        "- [ ] Buy a scale\n- [x] Descale the machine\n\n"
        "```markdown\n- [example] Not an observation, a quoted one\n```\n\n"
        "## Relations\n- inspired_by [[James Hoffmann|Hoffmann]]\n"
        "- part_of [[Café ideas#Drinks]]\n"
    ).encode()
    files = _tree(project, {"projects/Café ideas/Espresso Notes.md": note})
    data = _import(cli, vault_dir, "basic-memory", project)
    assert sorted(m["title"] for m in data["made"]) == [
        "Espresso Notes",
        "Grind finer when shots run fast",
    ]
    listed = {m["title"]: m for m in cli("--vault", str(vault_dir), "list", "--json").json()}
    assert listed["Grind finer when shots run fast"]["tags"] == [
        "technique",
        "espresso",
        "coffee",
        "2024-05-01",
    ]
    whole = next(m for m in data["made"] if m["title"] == "Espresso Notes")
    text = (vault_dir / whole["path"]).read_text(encoding="utf-8")
    assert "relations: [inspired_by James Hoffmann, part_of Café ideas#Drinks]" in text
    assert "- [ ] Buy a scale" in text and "- [example] Not an observation" in text
    assert _unchanged(project, files)
    _clean_and_idempotent(cli, vault_dir, "basic-memory", project)


def test_a_mem0_export_saved_on_windows_with_openmemorys_states_comes_in_as_meant(
    vault_dir, tmp_path, cli
):
    """PowerShell's `Out-File` begins the JSON with a BOM; OpenMemory names the text
    `content`, dates it `createdAt` and keeps the memories its person deleted or
    archived, with their `state`; one category may be a text of its own."""
    records = [
        {"id": "m1", "content": "Is vegetarian", "state": "active", "categories": "food"},
        {"id": "m2", "content": "Lives in Porto", "state": "deleted"},
        {"id": "m4", "memory": "Has a dog", "createdAt": "2025-01-02T03:04:05.678Z"},
    ]
    raw = b"\xef\xbb\xbf" + json.dumps({"memories": records}).encode()
    export = tmp_path / "openmemory.json"
    export.write_bytes(raw)
    data = _import(cli, vault_dir, "mem0", export)
    assert sorted(m["title"] for m in data["made"]) == ["Has a dog", "Is vegetarian"]
    assert {s["ref"].rsplit("#", 1)[-1]: s["reason"] for s in data["skipped"]} == {
        "m2": "deleted in mem0",
    }
    listed = {m["title"]: m for m in cli("--vault", str(vault_dir), "list", "--json").json()}
    assert listed["Is vegetarian"]["tags"] == ["food"]
    assert listed["Has a dog"]["created"] == "2025-01-02T03:04:05Z"
    assert export.read_bytes() == raw
    _clean_and_idempotent(cli, vault_dir, "mem0", export)


def test_a_claude_code_memory_whose_description_has_a_colon_comes_in_whole(
    vault_dir, tmp_path, cli
):
    """The model writes `description: Merge freeze: mobile cut` without quotes, which YAML
    refuses; the line's text is the description, and nothing else is read loosely."""
    folder = tmp_path / "memory"
    files = _tree(
        folder,
        {
            "project_freeze.md": (
                b"---\nname: Release freeze\ndescription: Merge freeze: mobile cut on Mar 5\n"
                b"type: project\n---\n\nNo merges to main from 2026-03-05.\n"
            ),
            "broken.md": b"---\nname: Broken\ndescription: a: b\ntype: [project\n---\nText\n",
        },
    )
    data = _import(cli, vault_dir, "claude-code", folder)
    assert [m["title"] for m in data["made"]] == ["Release freeze"]
    assert list(_by_file(data)) == ["broken.md"]
    raw = notefile.parse_bytes((vault_dir / data["made"][0]["path"]).read_bytes()).data
    assert raw["description"] == "Merge freeze: mobile cut on Mar 5"
    assert raw["kind"] == "fact"
    assert _unchanged(folder, files)
    _clean_and_idempotent(cli, vault_dir, "claude-code", folder)


_WORDS = st.text(alphabet="abcdefghij KLMNOP0123456789-_.,()/", min_size=1, max_size=20).filter(
    lambda t: t.strip() and t.strip()[0].isalnum()
)
_GLOBS = st.lists(
    st.text(alphabet="*?/.abcxyz{}_-", min_size=1, max_size=12), min_size=1, max_size=3
).map(lambda parts: "*" + ", ".join(parts))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(left=_WORDS, right=_WORDS, globs=_GLOBS)
def test_a_line_its_tool_reads_as_text_comes_back_as_that_text(
    tmp_path_factory, left, right, globs
):
    base = tmp_path_factory.mktemp("lines")
    vault_dir = base / "vault"
    init_vault(vault_dir)
    description = f"{left.strip()}: {right.strip()}"
    rule = f"---\ndescription: {description}\nglobs: {globs}\nalwaysApply: false\n---\nRule.\n"
    _tree(base / "project", {".cursor/rules/rule.mdc": rule.encode()})
    vault = Vault(vault_dir)
    try:
        report = run_import(vault, "cursor-rules", base / "project", now=NOW)
    finally:
        vault.close()
    assert report.skipped == [] and len(report.made) == 1
    raw = notefile.parse_bytes((vault_dir / report.made[0].path).read_bytes()).data
    assert (raw["title"], raw["globs"]) == (description, globs.strip())


def test_a_memory_bank_imported_by_its_project_and_then_by_itself_is_imported_once(
    vault_dir, tmp_path, cli
):
    project = tmp_path / "project"
    _tree(project, {"memory-bank/projectbrief.md": b"# Project Brief\n\n## Goal\nA recipe app.\n"})
    first = _import(cli, vault_dir, "cline", project)
    assert [m["title"] for m in first["made"]] == ["Goal"]
    for path in (project / "memory-bank", project):
        again = _import(cli, vault_dir, "cline", path)
        assert again["made"] == [] and again["proposed"] == []


def test_a_memory_an_earlier_version_imported_by_the_project_path_is_not_made_again(
    vault_dir, tmp_path, cli
):
    """Earlier versions named a bank's parts from the PATH given: the project's path."""
    project = tmp_path / "project"
    _tree(project, {"memory-bank/projectbrief.md": b"# Project Brief\n\n## Goal\nA recipe app.\n"})
    ref = f"{source_label(project)}/projectbrief.md#Project Brief > Goal"
    (vault_dir / "earlier.md").write_text(
        f'---\nid: earlier001\ntitle: Goal\nsource:\n  kind: import\n  ref: "{ref}"\n'
        f"  digest: {digest('A recipe app.')}\n---\n\nA recipe app.\n",
        encoding="utf-8",
    )
    again = _import(cli, vault_dir, "cline", project / "memory-bank")
    assert again["made"] == [] and again["proposed"] == []
    assert [s["reason"] for s in again["skipped"]] == ["unchanged since imported as earlier001"]


def test_claude_codes_project_folder_imports_its_memory_folder_as_the_folder_itself_does(
    vault_dir, tmp_path, cli
):
    """`~/.claude/projects/PROJECT/` holds the session transcripts and `memory/`."""
    project = tmp_path / "-home-me-app"
    _tree(
        project,
        {
            "3f2a.jsonl": b'{"type": "user"}\n',
            "memory/MEMORY.md": b"# Memory\n\n- [Role](user_role.md) - a Go engineer\n",
            "memory/user_role.md": b"---\nname: Role\ntype: user\n---\nA Go engineer.\n",
        },
    )
    data = _import(cli, vault_dir, "claude-code", project)
    assert [m["title"] for m in data["made"]] == ["Role"]
    assert _by_file(data) == {
        "MEMORY.md#user_role.md": "an index line for user_role.md, imported from it"
    }
    for path in (project / "memory", project / "memory" / "MEMORY.md"):
        again = _import(cli, vault_dir, "claude-code", path)
        assert again["made"] == [] and again["proposed"] == []


def test_a_letta_agents_folder_imports_its_memory_with_system_files_pinned(
    vault_dir, tmp_path, cli
):
    """`~/.letta/agents/AGENT/` holds `memory/`, the MemFS repository, whose `system/`
    (nested folders too) is in the agent's prompt on every turn."""
    agent = tmp_path / "agent-1f2e"
    _tree(
        agent,
        {
            "memory/.sync-state.json": b"{}",
            "memory/system/human.md": b"---\ndescription: The user\nlimit: 5000\n---\nSam.\n",
            "memory/system/persona/git_safety.md": b"---\ndescription: Git\n---\nNever force.\n",
            "memory/notes/ideas.md": b"---\ndescription: Ideas\n---\nA CLI.\n",
        },
    )
    data = _import(cli, vault_dir, "letta", agent)
    pins = cli("--vault", str(vault_dir), "list", "--pinned", "--json").json()
    assert sorted(p["title"] for p in pins) == ["system/human", "system/persona/git_safety"]
    assert len(data["made"]) == 3
    again = _import(cli, vault_dir, "letta", agent / "memory")
    assert again["made"] == [] and again["proposed"] == []


def test_a_dangling_symlink_or_a_pipe_in_a_source_is_skipped_and_the_rest_comes_in(
    vault_dir, tmp_path, cli
):
    """Neither stops the import (a pipe would never end a read)."""
    bank = tmp_path / "memory-bank"
    _tree(bank, {"projectbrief.md": b"# Brief\n\n## Goal\nA recipe app.\n"})
    (bank / "old.md").symlink_to(tmp_path / "gone" / "old.md")
    os.mkfifo(bank / "pipe.md")
    data = _import(cli, vault_dir, "cline", bank)
    assert [m["title"] for m in data["made"]] == ["Goal"]
    assert _by_file(data) == {
        "old.md": "cannot read: No such file or directory",
        "pipe.md": "not a regular file",
    }


def test_an_instruction_files_frontmatter_is_reported_and_kept_out_of_its_memories(
    vault_dir, tmp_path, cli
):
    """Memory-bank files and instruction files often open with keys about the file; they
    are no memory (titled `---`), and a `---` rule that opens the text is still text."""
    bank = tmp_path / "memory-bank"
    _tree(
        bank,
        {
            "activeContext.md": b"---\ndescription: Now\ntags: [ctx]\n---\n\n## Focus\nSync.\n",
            "progress.md": b"---\nStatus: all done: shipped\n---\n\n## Done\nV1.\n",
        },
    )
    data = _import(cli, vault_dir, "cline", bank)
    assert sorted(m["title"] for m in data["made"]) == ["---", "Done", "Focus"]
    assert _by_file(data) == {
        "activeContext.md#frontmatter": "its frontmatter (description, tags), not a memory"
    }
    _clean_and_idempotent(cli, vault_dir, "cline", bank)


def test_every_file_an_import_passes_over_is_named_with_the_reason(vault_dir, tmp_path, cli):
    """A Basic Memory project that is also an Obsidian vault: its attachments, canvases,
    settings and trash are not memories, and the report says so for each."""
    project = tmp_path / "notes"
    files = _tree(
        project,
        {
            "Coffee.md": b"---\ntitle: Coffee\n---\n\n- [fact] Water at 93 C\n",
            "Attachments/grinder photo.png": b"\x89PNG\r\n\x1a\n",
            "Board.canvas": b'{"nodes": [], "edges": []}',
            ".obsidian/app.json": b"{}",
            ".trash/Old.md": b"Deleted note.\n",
        },
    )
    data = _import(cli, vault_dir, "basic-memory", project)
    assert [m["title"] for m in data["made"]] == ["Water at 93 C"]
    assert _by_file(data) == {
        ".obsidian": "a hidden folder, not read",
        ".trash": "a hidden folder, not read",
        "Attachments/grinder photo.png": "not a .md file",
        "Board.canvas": "not a .md file",
    }
    assert _unchanged(project, files)
    again = _import(cli, vault_dir, "basic-memory", project)
    assert _by_file(again)["Board.canvas"] == "not a .md file"
    assert again["made"] == [] and again["proposed"] == []


def test_a_memory_md_with_nothing_but_its_heading_is_named_in_the_report(vault_dir, tmp_path, cli):
    folder = tmp_path / "memory"
    _tree(
        folder,
        {
            "MEMORY.md": b"# Memory Index\n",
            "user_role.md": b"---\nname: Role\ntype: user\n---\nA Go engineer.\n",
        },
    )
    data = _import(cli, vault_dir, "claude-code", folder)
    assert [m["title"] for m in data["made"]] == ["Role"]
    assert _by_file(data) == {
        "MEMORY.md": "no text of its own (only headings, imports or memoryctl's block)"
    }


_LINE = st.text(alphabet="abcdefghij KLMNOP0123456789-.,:#*[]", max_size=30)


@settings(max_examples=20, deadline=None)
@given(
    source=st.sampled_from(["letta", "claude-code", "cline", "basic-memory"]),
    name=_WORDS,
    lines=st.lists(_LINE, min_size=1, max_size=6),
    trailing=st.booleans(),
)
def test_a_file_saved_with_a_bom_and_crlf_imports_as_the_same_file_saved_plain(
    tmp_path_factory, source, name, lines, trailing
):
    """Whichever editor saved it, a file gives the same memories."""
    base = tmp_path_factory.mktemp("eol")
    text = f"---\nname: {json.dumps(name)}\ndescription: d\n---\n" + "\n".join(lines)
    text += "\n" if trailing else ""
    made = []
    for variant, raw in (
        ("plain", text.encode()),
        ("windows", b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()),
    ):
        vault_dir = base / variant / "vault"
        init_vault(vault_dir)
        folder = base / variant / "source"
        _tree(folder, {"topic.md": raw})
        vault = Vault(vault_dir)
        try:
            report = run_import(vault, source, folder, now=NOW)
            memories = sorted((m.title, m.body) for m in vault.index.list(limit=100))
        finally:
            vault.close()
        assert (folder / "topic.md").read_bytes() == raw
        made.append(([(s.ref.rsplit("/", 1)[-1], s.reason) for s in report.skipped], memories))
    assert made[0] == made[1]


def test_a_topic_file_renamed_with_its_text_as_it_was_makes_no_second_memory(
    vault_dir, tmp_path, cli
):
    folder = tmp_path / "memory"
    topic = b"---\nname: Use pnpm\ntype: feedback\n---\nAlways pnpm, never npm.\n"
    _tree(folder, {"feedback_pnpm.md": topic, "user_role.md": b"A Go engineer.\n"})
    first = _import(cli, vault_dir, "claude-code", folder)
    pnpm = next(m for m in first["made"] if m["title"] == "Use pnpm")
    (folder / "feedback_pnpm.md").rename(folder / "feedback_package_manager.md")
    for _ in range(2):
        again = _import(cli, vault_dir, "claude-code", folder)
        assert again["made"] == [] and again["proposed"] == []
        assert _by_file(again)["feedback_package_manager.md"] == (
            f"unchanged since imported as {pnpm['id']}"
        )


def test_a_claude_code_topic_whose_frontmatter_is_a_list_is_named_and_left_to_mend(
    vault_dir, tmp_path, cli
):
    """A model wrote the keys as a list (`- name: Tea`): the file's name and type cannot
    be read, so it is skipped with the reason, as broken frontmatter is, rather than
    made a memory without them; mended, it comes in whole."""
    folder = tmp_path / "memory"
    files = _tree(
        folder,
        {
            "user_tea.md": b"---\n- name: Tea person\n- type: user\n---\nDrinks green tea.\n",
            "feedback_terse.md": b"---\nname: Terse\ntype: Feedback\n---\nShort answers.\n",
        },
    )
    data = _import(cli, vault_dir, "claude-code", folder)
    assert [m["title"] for m in data["made"]] == ["Terse"]
    assert _by_file(data) == {
        "user_tea.md": "its frontmatter is not a mapping of keys (it is a list)"
    }
    assert _unchanged(folder, files)
    (folder / "user_tea.md").write_bytes(b"---\nname: Tea person\ntype: user\n---\nDrinks tea.\n")
    mended = _import(cli, vault_dir, "claude-code", folder)
    assert [m["title"] for m in mended["made"]] == ["Tea person"]
    _clean_and_idempotent(cli, vault_dir, "claude-code", folder)


@pytest.mark.parametrize(
    ("written", "kind"),
    [("Feedback", "preference"), (" feedback ", "preference"), ("PROJECT", "fact")],
)
def test_a_claude_code_type_in_another_case_is_the_same_type(
    vault_dir, tmp_path, cli, written, kind
):
    folder = tmp_path / "memory"
    _tree(folder, {"terse.md": f'---\nname: Terse\ntype: "{written}"\n---\nShort.\n'.encode()})
    [made] = _import(cli, vault_dir, "claude-code", folder)["made"]
    assert cli("--vault", str(vault_dir), "show", made["id"], "--json").json()["kind"] == kind


def test_a_mem0_memorys_metadata_is_kept_as_mem0_held_it(vault_dir, tmp_path, cli):
    """What the app attached to each memory (a mapping, at any depth) comes along under
    `metadata`, so nothing the person had in mem0 is lost."""
    metadata = {
        "source": "onboarding chat",
        "confidence": 0.9,
        "topics": ["food", "health"],
        "session": {"id": "s-42", "started": "2025-03-01T10:00:00Z", "turn": 3},
        "reviewed": None,
    }
    records = [
        {"id": "a1", "memory": "Is allergic to peanuts", "metadata": metadata},
        {"id": "a2", "memory": "Prefers window seats", "metadata": {"app": "travel"}},
        {"id": "a3", "memory": "Runs on Sundays", "metadata": {}},
    ]
    export = tmp_path / "mem0.json"
    export.write_text(json.dumps({"results": records}))
    data = _import(cli, vault_dir, "mem0", export)
    kept = {
        m["title"]: notefile.parse_bytes((vault_dir / m["path"]).read_bytes()).data
        for m in data["made"]
    }
    assert kept["Is allergic to peanuts"]["metadata"] == metadata
    assert kept["Prefers window seats"]["metadata"] == {"app": "travel"}
    assert "metadata" not in kept["Runs on Sundays"]
    _clean_and_idempotent(cli, vault_dir, "mem0", export)


def test_a_symlinked_folder_and_a_link_that_leads_nowhere_are_named_in_the_report(
    vault_dir, tmp_path, cli
):
    """Neither is followed, as in the vault; a link that once led to a folder is told as
    the link it is, not as a file of another kind."""
    bank = tmp_path / "memory-bank"
    _tree(bank, {"projectbrief.md": b"# Brief\n\n## Goal\nA recipe app.\n"})
    _tree(tmp_path / "shared", {"techContext.md": b"## Stack\nPython.\n"})
    (bank / "shared").symlink_to(tmp_path / "shared")
    (bank / "archive").symlink_to(tmp_path / "gone")
    (bank / "loop").symlink_to(bank / "loop")
    data = _import(cli, vault_dir, "cline", bank)
    assert [m["title"] for m in data["made"]] == ["Goal"]
    assert _by_file(data) == {
        "shared": "a symlink to a folder, not followed",
        "archive": f"a symlink to {tmp_path / 'gone'} that cannot be followed "
        "(No such file or directory)",
        "loop": f"a symlink to {bank / 'loop'} that cannot be followed "
        "(Too many levels of symbolic links)",
    }


def _too_deep(root: Path, depth: int = 18) -> Path:
    """Folders nested deeper than a path may be long (4,096 bytes on Linux), made one by
    one from the folder above, as a sync tool or an unpacked archive can leave them; a
    note sits at the bottom."""
    name = "n" * 250
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    note = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(note, b"Out of reach.\n")
    os.close(note)
    os.close(fd)
    return root / name


def test_a_folder_that_cannot_be_listed_is_named_with_the_reason(vault_dir, tmp_path, cli):
    """A folder the system refuses to list (here: too deep for its path, which fails for
    every user) is reported by its path, never passed over in silence."""
    project = tmp_path / "notes"
    _tree(project, {"Coffee.md": b"---\ntitle: Coffee\n---\n\nWater at 93 C.\n"})
    _too_deep(project)
    data = _import(cli, vault_dir, "basic-memory", project)
    assert [m["title"] for m in data["made"]] == ["Coffee"]
    [(ref, reason)] = _by_file(data).items()
    assert reason == "cannot list: File name too long"
    assert ref.startswith("n" * 250 + "/") and len(ref) > 4000


@pytest.mark.parametrize(
    ("source", "inner"),
    [
        ("cline", "memory-bank"),
        ("claude-code", "memory"),
        ("letta", "memory"),
        ("cursor-rules", ".cursor/rules"),
    ],
)
def test_a_sources_folder_that_is_a_dangling_link_or_a_file_is_an_error_naming_it(
    vault_dir, tmp_path, cli, source, inner
):
    """The project's own notes are never read in the folder's place."""
    project = tmp_path / "project"
    _tree(project, {"README.md": b"# Project\n\nA recipe app.\n"})
    (project / inner).parent.mkdir(parents=True, exist_ok=True)
    (project / inner).symlink_to(tmp_path / "elsewhere")
    result = cli("--vault", str(vault_dir), "import", source, str(project))
    assert result.code == 1
    assert f"{project / inner}: a symlink to {tmp_path / 'elsewhere'} that cannot be" in result.err
    (project / inner).unlink()
    (project / inner).write_text("not a folder\n")
    result = cli("--vault", str(vault_dir), "import", source, str(project))
    assert result.code == 1 and f"{project / inner}: a file, not a folder" in result.err
    assert cli("--vault", str(vault_dir), "list", "--json").json() == []


def test_a_memory_paused_or_archived_in_openmemory_comes_in_retired_and_can_be_restored(
    vault_dir, tmp_path, cli
):
    """A paused memory is one the person turned off in OpenMemory, and an archived one
    they put away: each comes in as history, retired with that reason and when, out of
    every agent's context, and `restore` turns it on again as resuming it would. A
    deleted memory stays out, and is said."""
    export = tmp_path / "memories.json"
    export.write_bytes((FIXTURES / "mem0" / "openmemory-states.json").read_bytes())
    data = _import(cli, vault_dir, "mem0", export)
    made = {m["ref"].rsplit("#", 1)[-1]: m for m in data["made"]}
    assert {key: m["retired"] for key, m in made.items()} == {
        "7e1d-active": None,
        "7e1d-paused": "paused in mem0",
        "7e1d-archived": "archived in mem0",
    }
    assert {s["ref"].rsplit("#", 1)[-1]: s["reason"] for s in data["skipped"]} == {
        "7e1d-deleted": "deleted in mem0"
    }
    current = cli("--vault", str(vault_dir), "list", "--status", "active", "--json").json()
    assert [m["title"] for m in current] == ["Books aisle seats on short flights"]
    retired = cli("--vault", str(vault_dir), "retired", "--json").json()
    assert [(r["title"], r["reason"], r["retired_at"]) for r in retired] == [
        (
            "Is interviewing at Globex and keeps it quiet at work",
            "paused in mem0",
            "2025-03-09T17:30:00Z",
        ),
        ("Commutes by the 7:40 ferry", "archived in mem0", "2025-01-15T12:00:00Z"),
    ]
    said = cli("--vault", str(vault_dir), "retired").out
    assert "why: paused in mem0" in said and "out of use in its source when imported" in said
    preview = cli("--vault", str(vault_dir), "preview", "--message", "Globex interview")
    assert preview.code == 0 and "Globex" not in preview.out
    paused = made["7e1d-paused"]["id"]
    assert cli("--vault", str(vault_dir), "restore", paused).code == 0
    current = cli("--vault", str(vault_dir), "list", "--status", "active", "--json").json()
    assert "Is interviewing at Globex and keeps it quiet at work" in {m["title"] for m in current}
    _clean_and_idempotent(cli, vault_dir, "mem0", export)


def _openmemory_backup(folder: Path) -> Path:
    """OpenMemory's backup as its export writes it: a zip of `memories.json` (its tables,
    pointing at apps and categories by id) and `memories.jsonl.gz`."""
    import gzip
    import zipfile

    tables = {
        "user": {"id": "u-1f", "user_id": "lee", "name": "Lee"},
        "apps": [{"id": "a-9c", "name": "cursor", "is_active": True}],
        "categories": [{"id": "c-1", "name": "food"}, {"id": "c-2", "name": "health"}],
        "memories": [
            {
                "id": "m-1",
                "user_id": "u-1f",
                "app_id": "a-9c",
                "content": "Is allergic to peanuts",
                "metadata": {"source": "chat"},
                "state": "active",
                "created_at": "2025-02-01T09:00:00+00:00",
                "category_ids": ["c-1", "c-2"],
            },
            {"id": "m-2", "user_id": "u-1f", "content": "Old address", "state": "deleted"},
        ],
        "export_meta": {"version": "1"},
    }
    lines = [{"id": "m-1", "content": "Is allergic to peanuts", "app": "cursor"}]
    backup = folder / "memories_export_lee.zip"
    with zipfile.ZipFile(backup, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("memories.json", json.dumps(tables, indent=2))
        jsonl = "".join(json.dumps(line) + "\n" for line in lines).encode()
        archive.writestr("memories.jsonl.gz", gzip.compress(jsonl))
    return backup


def test_openmemorys_backup_zip_comes_in_with_its_categories_app_and_person_by_name(
    vault_dir, tmp_path, cli
):
    backup = _openmemory_backup(tmp_path)
    raw = backup.read_bytes()
    data = _import(cli, vault_dir, "mem0", backup)
    [made] = data["made"]
    assert made["title"] == "Is allergic to peanuts"
    assert {s["ref"].rsplit("#", 1)[-1]: s["reason"] for s in data["skipped"]} == {
        "m-2": "deleted in mem0"
    }
    shown = cli("--vault", str(vault_dir), "show", made["id"], "--json").json()
    assert shown["tags"] == ["food", "health", "user:lee", "app:cursor"]
    assert shown["created"] == "2025-02-01T09:00:00Z"
    assert backup.read_bytes() == raw
    _clean_and_idempotent(cli, vault_dir, "mem0", backup)


def test_a_mem0_export_in_json_lines_gzipped_or_not_comes_in_line_by_line(vault_dir, tmp_path, cli):
    import gzip

    lines = [
        {"id": "j1", "memory": "Takes the 8:10 train", "expiration_date": "2027-01-31"},
        {"id": "j2", "memory": "Drinks oat milk", "categories": ["food"]},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (tmp_path / "plain.jsonl").write_text(text)
    (tmp_path / "packed.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    plain = _import(cli, vault_dir, "mem0", tmp_path / "plain.jsonl")
    assert sorted(m["title"] for m in plain["made"]) == ["Drinks oat milk", "Takes the 8:10 train"]
    listed = {m["title"]: m for m in cli("--vault", str(vault_dir), "list", "--json").json()}
    assert listed["Takes the 8:10 train"]["expires"] == "2027-01-31T00:00:00Z"
    packed = _import(cli, vault_dir, "mem0", tmp_path / "packed.jsonl.gz")
    assert len(packed["made"]) == 2
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    result = cli("--vault", str(vault_dir), "import", "mem0", str(broken))
    assert result.code == 1 and f"{broken}: cannot unpack" in result.err


def test_the_views_letta_writes_itself_are_named_and_not_made_pins(vault_dir, tmp_path, cli):
    memory = tmp_path / "memory"
    _tree(
        memory,
        {
            "system/persona.md": b"---\ndescription: Who I am\nlimit: 20000\n---\nTerse.\n",
            "system/memory_filesystem.md": b"/memory/\n  system/\n    persona.md\n",
            "system/skills.md": b"- skills/deploy: Deploy the app\n",
            "skills/deploy/SKILL.md": b"---\nname: deploy\ndescription: Deploy\n---\nRun it.\n",
        },
    )
    data = _import(cli, vault_dir, "letta", memory)
    assert sorted(m["title"] for m in data["made"]) == ["deploy", "system/persona"]
    generated = "Letta writes it itself from the other files, not a memory"
    assert _by_file(data) == {
        "system/memory_filesystem.md": generated,
        "system/skills.md": generated,
    }
    _clean_and_idempotent(cli, vault_dir, "letta", memory)


def test_a_claude_code_topic_with_its_type_inside_metadata_keeps_both(vault_dir, tmp_path, cli):
    """Newer Claude Code writes `metadata:` then `  type: feedback`; the type counts as
    at the top, and the mapping comes along."""
    folder = tmp_path / "memory"
    raw = (
        b"---\nname: prefer-ripgrep\ndescription: rg over grep\nmetadata:\n  type: feedback\n"
        b"---\n\nAlways reach for ripgrep.\n"
    )
    _tree(folder, {"feedback_ripgrep.md": raw})
    [made] = _import(cli, vault_dir, "claude-code", folder)["made"]
    data = notefile.parse_bytes((vault_dir / made["path"]).read_bytes()).data
    assert data["kind"] == "preference" and data["metadata"] == {"type": "feedback"}
    # Opened as a vault, the file itself reads the same.
    (vault_dir / "as-written.md").write_bytes(raw)
    listed = {m["path"]: m for m in cli("--vault", str(vault_dir), "list", "--json").json()}
    assert listed["as-written.md"]["kind"] == "preference"
    _clean_and_idempotent(cli, vault_dir, "claude-code", folder)
