"""Importing every peer's memories: provenance, source dates, one commit, idempotence,
a `replace` proposal (never a duplicate) for a changed source, and a report of what was
made and skipped. The fixtures in tests/fixtures/import/ were written for these tests
from each tool's documentation and public examples.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryctl.importers.claude_code import index_entry
from memoryctl.importing import ImportReport, run_import, source_label
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
SOURCE_PATHS = {
    "claude-code": "claude-code/memory",
    "claude-md": "claude-md",
    "agents-md": "agents-md",
    "gemini-md": "gemini-md/GEMINI.md",
    "cursor-rules": "cursor-rules",
    "cline": "cline",
    "basic-memory": "basic-memory",
    "mem0": "mem0/export.json",
    "letta": "letta",
}


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    """A copy of the fixtures, so a test may change a source without touching the repo."""
    target = tmp_path / "sources"
    shutil.copytree(FIXTURES, target)
    return target


def commits(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def imported(vault_dir: Path, source: str, path: Path, **options) -> ImportReport:
    vault = Vault(vault_dir)
    try:
        return run_import(vault, source, path, now=NOW, **options)
    finally:
        vault.close()


def memories(vault_dir: Path) -> dict[str, object]:
    vault = Vault(vault_dir)
    try:
        return {m.source_ref: m for m in vault.index.list(limit=1000) if m.source_ref}
    finally:
        vault.close()


def test_claude_code_topic_files_become_memories_with_their_name_type_and_description(
    vault_dir, sources
):
    folder = sources / "claude-code" / "memory"
    report = imported(vault_dir, "claude-code", folder)
    label = source_label(folder)
    assert {m.ref for m in report.made} == {
        f"{label}/feedback_pnpm.md",
        f"{label}/user_role.md",
        f"{label}/project_release.md",
        f"{label}/MEMORY.md#Memory index > Loose notes:the-staging-database-is-reset-every",
    }
    assert [s.reason for s in report.skipped].count(
        "an index line for feedback_pnpm.md, imported from it"
    ) == 1
    pnpm = memories(vault_dir)[f"{label}/feedback_pnpm.md"]
    assert pnpm.title == "Use pnpm, not npm" and pnpm.kind == "preference"
    assert pnpm.description == "Installs in this repo go through pnpm; npm rewrites the lockfile"
    assert pnpm.source_kind == "import" and pnpm.namespace == "default"
    assert commits(vault_dir)[0] == "Import claude-code: 4 made, 0 proposed"


def test_a_memory_md_line_that_only_points_at_a_topic_is_skipped_and_one_that_says_more_is_kept(
    vault_dir, sources
):
    """A line whose words only point at a topic file ("See [Build](build.md) for the
    steps", an arrow, a hook after a semicolon) is an index entry: the topic file comes
    in itself. A line that states something and also links is a memory of its own."""
    folder = sources / "claude-code-links" / "memory"
    report = imported(vault_dir, "claude-code", folder)
    label = source_label(folder)
    made = {m.ref.removeprefix(label + "/") for m in report.made}
    topics = {"feedback_pnpm.md", "build.md", "deploy.md", "project_release.md"}
    assert topics <= made
    assert sorted(made - topics) == [
        "MEMORY.md#Memory Index > Gotchas:never-force-push-main-build-build-md",
        "MEMORY.md#Memory Index > Gotchas:staging-deploys-need-the-vpn-see-deploy",
        "MEMORY.md#Memory Index > Gotchas:the-build-cache-lives-in-cache-app-and",
    ]
    assert sorted(s.ref.removeprefix(label + "/") for s in report.skipped) == [
        "MEMORY.md#build.md",
        "MEMORY.md#deploy.md",
        "MEMORY.md#feedback_pnpm.md",
        "MEMORY.md#project_release.md",
    ]
    gotchas = sorted(
        m.body for ref, m in memories(vault_dir).items() if ref.startswith(f"{label}/MEMORY.md")
    )
    assert gotchas[0].startswith("**Never force-push main.**")


@pytest.mark.parametrize(
    ("line", "entry"),
    [
        ("- [Build](build.md) — the CI steps", True),
        ("* [Build](<./build.md>)", True),
        ("1. [Build](build.md): how CI builds", True),
        ("-> [build.md](build.md)", True),
        ("- See also [Build](build.md) and [Deploy](deploy.md).", True),
        ("- Build: see [build.md](build.md)", True),
        ("- [Build](build.md) needs Node 20", False),
        ("- The build needs Node 20, see [Build](build.md)", False),
        ("- 详见 [构建](build.md)", False),
        ("- See [the wiki](wiki.md) for the steps", False),
    ],
)
def test_a_memory_md_line_is_an_index_entry_only_when_its_words_only_point(line, entry):
    assert bool(index_entry(line, {"build.md", "deploy.md"})) is entry


def test_a_memory_named_like_a_file_already_in_the_vault_takes_the_next_name(vault_dir, sources):
    folder = vault_dir / "memories" / "default"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Use-pnpm-not-npm.md").write_text("My own note, in Obsidian's case.\n")
    (folder / "release-freeze.md").write_text("Another of mine.\n")
    report = imported(vault_dir, "claude-code", sources / "claude-code" / "memory")
    paths = {m.title: m.path for m in report.made}
    assert paths["Use pnpm, not npm"] == "memories/default/use-pnpm-not-npm-2.md"
    assert paths["Release freeze"] == "memories/default/release-freeze-2.md"
    assert (folder / "Use-pnpm-not-npm.md").read_text() == "My own note, in Obsidian's case.\n"
    assert (folder / "release-freeze.md").read_text() == "Another of mine.\n"


def test_claude_md_sections_and_bullets_become_memories_and_memoryctls_block_is_skipped(
    vault_dir, sources
):
    path = sources / "claude-md"
    report = imported(vault_dir, "claude-md", path)
    label = source_label(path)
    refs = {m.ref: m for m in report.made}
    assert f"{label}/CLAUDE.md#Project guide > Build" in refs
    assert refs[
        f"{label}/CLAUDE.md#Project guide > Conventions:never-commit-env-files-the-pre-commit"
    ].title.startswith("Never commit `.env` files; the pre-commit hook")
    found = memories(vault_dir)
    assert all("exported by memoryctl earlier" not in m.body for m in found.values())
    example = found[f"{label}/CLAUDE.md#Project guide > Example of the memory block"]
    assert "an example quoted by the owner" in example.body  # the owner's text, kept
    assert any(s.reason == "an import of another file, not a memory" for s in report.skipped)


@pytest.mark.parametrize("source", ["agents-md", "gemini-md"])
def test_agents_md_and_gemini_md_are_read_the_same_way(vault_dir, sources, source):
    report = imported(vault_dir, source, sources / SOURCE_PATHS[source])
    assert len(report.made) >= 3 and not report.skipped


def test_cursor_rules_that_always_apply_become_pins_and_memoryctls_export_is_skipped(
    vault_dir, sources
):
    path = sources / "cursor-rules"
    report = imported(vault_dir, "cursor-rules", path)
    label = source_label(path)
    assert [s.reason for s in report.skipped] == ["memoryctl's own export"]
    found = memories(vault_dir)
    always = found[f"{label}/.cursor/rules/typescript.mdc"]
    assert always.pinned and always.title == "TypeScript conventions for the whole repository"
    assert not found[f"{label}/.cursor/rules/tests.mdc"].pinned
    raw = (vault_dir / found[f"{label}/.cursor/rules/tests.mdc"].path).read_bytes()
    assert notefile.parse_bytes(raw).data["globs"] == ["**/*.test.ts"]


def test_a_cline_memory_bank_is_read_by_sections_and_tagged_by_file(vault_dir, sources):
    report = imported(vault_dir, "cline", sources / "cline")
    assert len(report.made) == 8
    goals = [m for m in memories(vault_dir).values() if "Zero manual entry" in m.body]
    assert goals and goals[0].tags == ("projectbrief",)


def test_basic_memory_observations_and_relations(vault_dir, sources):
    path = sources / "basic-memory"
    imported(vault_dir, "basic-memory", path)
    label = source_label(path)
    found = memories(vault_dir)
    water = found[f"{label}/coffee-brewing-methods.md#observations:water-at-96-c-extracts-best"]
    assert water.body.strip() == "Water at 96 °C extracts best"
    assert water.tags == ("technique", "brewing", "coffee") and water.kind == "procedure"
    note = found[f"{label}/coffee-brewing-methods.md"]
    data = notefile.parse_bytes((vault_dir / note.path).read_bytes()).data
    assert data["relations"] == [
        "relates_to Coffee Bean Origins",
        "requires Proper Grinding Technique",
    ]
    assert f"{label}/people/paul-graham.md#observations:co-founded-y-combinator-in-2005" in found


def test_an_observation_put_into_a_note_adds_one_memory_and_proposes_nothing(vault_dir, sources):
    path = sources / "basic-memory"
    first = imported(vault_dir, "basic-memory", path)
    note = path / "coffee-brewing-methods.md"
    note.write_text(
        note.read_text().replace(
            "## Observations\n", "## Observations\n- [method] Grind just before brewing\n"
        )
    )
    report = imported(vault_dir, "basic-memory", path)
    assert [m.title for m in report.made] == ["Grind just before brewing"]
    assert report.proposed == []
    assert len(memories(vault_dir)) == len(first.made) + 1


def test_an_observation_whose_words_changed_is_proposed_as_a_replace(vault_dir, sources):
    path = sources / "basic-memory"
    first = imported(vault_dir, "basic-memory", path)
    note = path / "coffee-brewing-methods.md"
    note.write_text(note.read_text().replace("Water at 96 °C", "Water at 94 °C"))
    report = imported(vault_dir, "basic-memory", path)
    assert report.made == []
    [proposed] = report.proposed
    assert proposed.ref.endswith("#observations:water-at-94-c-extracts-best")
    assert proposed.title == "Water at 96 °C extracts best"
    assert len(memories(vault_dir)) == len(first.made)


def _mem0_without_ids(path: Path, texts: list[str]) -> None:
    records = [{"memory": text, "created_at": "2025-08-01T10:00:00Z"} for text in texts]
    path.write_text(json.dumps({"results": records}))


def test_a_mem0_memory_without_an_id_put_in_first_adds_one_memory(vault_dir, tmp_path):
    path = tmp_path / "export.json"
    _mem0_without_ids(path, ["Prefers tea in the morning", "Lives in Lisbon"])
    imported(vault_dir, "mem0", path)
    _mem0_without_ids(
        path, ["Has a cat named Miso", "Prefers tea in the morning", "Lives in Lisbon"]
    )
    report = imported(vault_dir, "mem0", path)
    assert [m.title for m in report.made] == ["Has a cat named Miso"]
    assert report.proposed == []
    assert len(memories(vault_dir)) == 3


def test_a_mem0_memory_without_an_id_whose_text_changed_is_proposed_as_a_replace(
    vault_dir, tmp_path
):
    path = tmp_path / "export.json"
    _mem0_without_ids(path, ["Prefers tea in the morning", "Lives in Lisbon"])
    imported(vault_dir, "mem0", path)
    _mem0_without_ids(path, ["Prefers tea in the morning", "Lives in Porto"])
    report = imported(vault_dir, "mem0", path)
    assert report.made == []
    [proposed] = report.proposed
    assert proposed.title == "Lives in Lisbon"
    assert len(memories(vault_dir)) == 2


def test_mem0_keeps_its_ids_dates_and_categories(vault_dir, sources):
    path = sources / "mem0" / "export.json"
    report = imported(vault_dir, "mem0", path)
    label = source_label(path)
    assert [s.reason for s in report.skipped] == ["no text in `memory`"]
    nuts = memories(vault_dir)[f"{label}#892db2ae-06d9-49e5-8b3e-585ef9b85b8e"]
    assert nuts.created == "2025-07-14T16:12:30Z" and nuts.updated == "2025-07-20T18:02:00Z"
    assert nuts.tags == ("food", "health", "user:alex")


def test_letta_system_files_become_pins_in_order(vault_dir, sources):
    path = sources / "letta"
    imported(vault_dir, "letta", path)
    label = source_label(path)
    found = memories(vault_dir)
    assert found[f"{label}/system/human.md"].pinned
    assert found[f"{label}/system/persona.md"].pinned
    assert not found[f"{label}/reference/project-notes.md"].pinned
    assert found[f"{label}/skills/deploy/SKILL.md"].kind == "procedure"


def test_a_letta_blocks_limit_and_read_only_stay_in_its_memory_through_a_write(
    vault_dir, sources, cli
):
    """Letta's `limit` (the characters the block may hold) and `read_only` (the agent
    may not edit it) are Letta's keys: kept as Letta wrote them, through memoryctl's
    own writes, so nothing the person set is lost on the way in."""
    path = sources / "letta"
    imported(vault_dir, "letta", path)
    found = memories(vault_dir)
    persona = found[f"{source_label(path)}/system/persona.md"]
    human = found[f"{source_label(path)}/system/human.md"]
    assert cli("--vault", str(vault_dir), "unpin", persona.id).code == 0
    data = notefile.parse_text((vault_dir / persona.path).read_text()).data
    assert (data["limit"], data["read_only"], data["pinned"]) == (20000, True, False)
    text = (vault_dir / human.path).read_text()
    assert "limit: 5000\n" in text and "read_only" not in text


@pytest.mark.parametrize("source", sorted(SOURCE_PATHS))
def test_importing_an_unchanged_source_again_adds_nothing(vault_dir, sources, source):
    path = sources / SOURCE_PATHS[source]
    first = imported(vault_dir, source, path)
    assert first.made and first.commit
    before = commits(vault_dir)
    again = imported(vault_dir, source, path)
    assert again.made == [] and again.proposed == [] and again.commit is None
    assert commits(vault_dir) == before
    unchanged = [s for s in again.skipped if s.reason.startswith("unchanged since imported as")]
    assert len(unchanged) == len(first.made)


def test_a_changed_source_proposes_a_replace_once_and_never_a_duplicate(vault_dir, sources):
    path = sources / "agents-md"
    imported(vault_dir, "agents-md", path)
    count = len(memories(vault_dir))
    agents = path / "AGENTS.md"
    agents.write_text(agents.read_text().replace("Single quotes", "Double quotes"))
    report = imported(vault_dir, "agents-md", path)
    assert report.made == [] and len(report.proposed) == 1
    [proposed] = report.proposed
    assert proposed.ref.endswith("AGENTS.md#AGENTS.md > Code style") and proposed.proposal
    assert len(memories(vault_dir)) == count
    assert commits(vault_dir)[0] == "Import agents-md: 0 made, 1 proposed"
    again = imported(vault_dir, "agents-md", path)
    assert again.proposed == [] and again.commit is None
    assert any("was proposed before" in s.reason for s in again.skipped)


def test_an_item_put_into_a_list_adds_one_memory_and_changes_nothing_else(vault_dir, sources):
    path = sources / "claude-md"
    first = imported(vault_dir, "claude-md", path)
    claude = path / "CLAUDE.md"
    claude.write_text(
        claude.read_text().replace(
            "- Use tabs in Go files.", "- Run gofmt.\n- Use tabs in Go files."
        )
    )
    report = imported(vault_dir, "claude-md", path)
    assert [m.title for m in report.made] == ["Run gofmt."]
    assert report.proposed == []
    assert len(memories(vault_dir)) == len(first.made) + 1


def test_an_item_whose_first_words_changed_is_proposed_as_a_replace(vault_dir, sources):
    path = sources / "claude-md"
    first = imported(vault_dir, "claude-md", path)
    claude = path / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("- Use tabs in Go files.", "- Tabs in Go files."))
    report = imported(vault_dir, "claude-md", path)
    assert report.made == []
    [proposed] = report.proposed
    assert proposed.title == "Use tabs in Go files."
    assert len(memories(vault_dir)) == len(first.made)


def test_items_an_earlier_import_knew_by_their_place_are_known_by_their_text(vault_dir, sources):
    path = sources / "claude-md"
    imported(vault_dir, "claude-md", path)
    # As an earlier memoryctl recorded them: the list's items by their number.
    by_place = re.compile(r"(Conventions:)[a-z0-9-]+")
    renumbered = 0
    for memory_path in sorted(vault_dir.glob("memories/**/*.md")):
        text = memory_path.read_text()
        if by_place.search(text):
            renumbered += 1
            memory_path.write_text(by_place.sub(rf"\g<1>{renumbered}", text))
    assert renumbered == 3
    subprocess.run(["git", "commit", "-qam", "Refs by place"], cwd=vault_dir, check=True)
    assert (
        sum(
            ref.endswith(("Conventions:1", "Conventions:2", "Conventions:3"))
            for ref in memories(vault_dir)
        )
        == 3
    )
    claude = path / "CLAUDE.md"
    claude.write_text(
        claude.read_text().replace(
            "- Use tabs in Go files.", "- Run gofmt.\n- Use tabs in Go files."
        )
    )
    report = imported(vault_dir, "claude-md", path)
    assert [m.title for m in report.made] == ["Run gofmt."] and report.proposed == []


def test_a_dry_run_reports_and_writes_nothing(vault_dir, sources):
    before = commits(vault_dir)
    report = imported(vault_dir, "letta", sources / "letta", dry_run=True)
    assert len(report.made) == 4 and report.commit is None
    assert commits(vault_dir) == before and not (vault_dir / "memories").exists()


def test_an_import_goes_to_the_namespace_asked_for(vault_dir, sources):
    report = imported(vault_dir, "mem0", sources / "mem0" / "export.json", namespace="personal")
    assert all(m.path.startswith("memories/personal/") for m in report.made)
    assert {m.namespace for m in memories(vault_dir).values()} == {"personal"}


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120
) | st.sampled_from(
    [
        "---\nname: x\ntype: feedback\n---\nbody\n",
        "---\nalwaysApply: true\n---\n- rule\n",
        "---\ntitle: [broken\n---\ntext\n",
        "# H\n\n- [category] obs #tag\n- rel [[T]]\n",
        '{"results": [{"id": "1", "memory": "m"}]}',
        "\r\n---\r\n\ufeffx\r\n",
    ]
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    source=st.sampled_from(sorted(SOURCE_PATHS)),
    files=st.dictionaries(
        st.sampled_from(
            [
                "MEMORY.md",
                "CLAUDE.md",
                "AGENTS.md",
                "GEMINI.md",
                "a.md",
                "system/b.md",
                "memory-bank/c.md",
                ".cursor/rules/d.mdc",
                "export.json",
            ]
        ),
        _TEXT | st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
        min_size=1,
        max_size=5,
    ),
)
def test_an_import_never_changes_a_byte_of_its_source(tmp_path_factory, source, files):
    base = tmp_path_factory.mktemp("prop")
    from memoryctl.actions import init_vault

    vault_dir = base / "vault"
    init_vault(vault_dir)
    folder = base / "source"
    for relpath, text in files.items():
        target = folder / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    path = folder / "export.json" if source == "mem0" else folder
    before = _snapshot(folder)
    vault = Vault(vault_dir)
    try:
        run_import(vault, source, path, now=NOW)
    except Exception as error:  # a source that cannot be read is reported, never changed
        assert type(error).__name__ in ("ImportSourceError",), error
    finally:
        vault.close()
    assert _snapshot(folder) == before


def test_the_import_command_reports_what_it_made_and_skipped_and_why(vault_dir, sources, cli):
    path = sources / "cursor-rules"
    dry = cli("--vault", str(vault_dir), "import", "cursor-rules", str(path), "--dry-run")
    assert dry.code == 0, dry.err
    assert "Would make 2 memories from cursor-rules, propose 0 replacements" in dry.out
    assert "Dry run" in dry.err
    assert not (vault_dir / "memories").exists()
    result = cli("--vault", str(vault_dir), "import", "cursor-rules", str(path))
    assert result.code == 0, result.err
    assert "skipped   " in result.out and "memoryctl's own export" in result.out
    assert "Made 2 memories from cursor-rules, proposed 0 replacements, skipped 1." in result.out
    data = cli("--vault", str(vault_dir), "import", "cursor-rules", str(path), "--json").json()
    assert data["made"] == [] and data["commit"] is None
    assert len(data["skipped"]) == 3
    pins = cli("--vault", str(vault_dir), "list", "--pinned", "--json").json()
    assert [p["title"] for p in pins] == ["TypeScript conventions for the whole repository"]
    assert pins[0]["source"]["kind"] == "import"


def test_importing_what_is_not_there_is_a_clear_error(vault_dir, tmp_path, cli):
    result = cli("--vault", str(vault_dir), "import", "mem0", str(tmp_path / "nope.json"))
    assert result.code == 1 and "no such file" in result.err
    (tmp_path / "bad.json").write_text("{not json")
    bad = cli("--vault", str(vault_dir), "import", "mem0", str(tmp_path / "bad.json"))
    assert bad.code == 1 and "not a JSON file" in bad.err
    unknown = cli("--vault", str(vault_dir), "import", "notion", str(tmp_path))
    assert unknown.code == 2 and "invalid choice" in unknown.err


def test_an_edit_of_an_imported_memory_is_the_persons_and_an_unchanged_source_leaves_it(
    vault_dir, sources, cli
):
    path = sources / "gemini-md" / "GEMINI.md"
    imported(vault_dir, "gemini-md", path)
    style = next(m for m in memories(vault_dir).values() if m.title == "Coding style")
    edited = cli("--vault", str(vault_dir), "replace", style.id, "Use tabs, not spaces.")
    assert edited.code == 0, edited.err
    again = imported(vault_dir, "gemini-md", path)
    assert again.proposed == [] and again.commit is None
    raw = notefile.parse_bytes((vault_dir / style.path).read_bytes()).data
    assert raw["source"]["kind"] == "import" and len(raw["source"]["digest"]) == 16


@pytest.mark.parametrize("source", ["claude-code", "basic-memory", "letta", "many"])
def test_the_memories_an_import_indexes_as_it_writes_are_those_a_rebuild_reads(
    vault_dir, sources, source
):
    if source == "many":  # past the count where new files are written side by side
        folder = sources / "many"
        folder.mkdir()
        for number in range(40):
            (folder / f"topic_{number}.md").write_text(
                f"---\nname: Topic {number}\ndescription: about {number}\ntype: project\n"
                f"---\n\nRemember {number}.\n"
            )
        imported(vault_dir, "claude-code", folder)
    else:
        imported(vault_dir, source, sources / SOURCE_PATHS[source])
    vault = Vault(vault_dir)
    try:
        rows = "SELECT path, size, mtime_ns, sha, doc, body FROM notes ORDER BY path"
        as_written = vault.index._execute(rows)
        vault.index.rebuild()
        assert vault.index._execute(rows) == as_written
    finally:
        vault.close()


@pytest.mark.parametrize(
    ("source", "relpath"),
    [
        ("claude-code", "memory/broken.md"),
        ("letta", "letta/broken.md"),
        ("basic-memory", "notes/broken.md"),
        ("cursor-rules", "project/.cursor/rules/broken.mdc"),
    ],
)
def test_a_source_file_whose_frontmatter_cannot_be_read_is_skipped_with_the_reason(
    vault_dir, tmp_path, cli, source, relpath
):
    """Not imported as text that begins with broken YAML (titled "---"): skipped, by
    path and line, and the file is left as it was for the person to mend."""
    broken = tmp_path / relpath
    broken.parent.mkdir(parents=True)
    raw = b"---\nname: [unclosed\n---\nUses tabs.\n"
    broken.write_bytes(raw)
    (broken.parent / "fine.md").write_text("Prefers dark mode.\n", encoding="utf-8")
    root = tmp_path / relpath.split("/")[0]
    result = cli("--vault", str(vault_dir), "import", source, str(root), "--json")
    assert result.code == 0, result.err
    data = result.json()
    reasons = {s["ref"].rsplit("/", 1)[-1]: s["reason"] for s in data["skipped"]}
    assert reasons[broken.name].startswith("its frontmatter could not be read (")
    assert reasons[broken.name].endswith("at line 3)")  # as `doctor` counts it
    assert [m["ref"].rsplit("/", 1)[-1] for m in data["made"]] == ["fine.md"]  # the rest comes in
    assert broken.read_bytes() == raw


def test_the_report_counts_one_memory_as_one(vault_dir, sources, cli):
    export = sources / "mem0" / "export.json"
    one = export.parent / "one.json"
    one.write_text('{"results": [{"id": "1", "memory": "Likes tea"}]}', encoding="utf-8")
    result = cli("--vault", str(vault_dir), "import", "mem0", str(one))
    assert result.code == 0, result.err
    assert "Made 1 memory from mem0, proposed 0 replacements, skipped 0." in result.out


def test_ctrl_c_while_an_import_writes_says_so_in_one_line_and_leaves_no_memory(
    vault_dir: Path, tmp_path: Path
):
    """Ctrl-C reaches every process the terminal started: memoryctl's own, and the one
    that makes the index rows aside. The import stops, says so once, and takes back the
    files it had written: the vault is as it was, with nothing left uncommitted."""
    import os
    import signal
    import sys
    import time

    source = tmp_path / "AGENTS.md"
    parts = [f"## Part {n}\n\nGuidance number {n}, in a few more words.\n" for n in range(20000)]
    source.write_text("# Notes\n\n" + "\n".join(parts))
    before = commits(vault_dir)
    command = ["import", "agents-md", str(source)]
    process = subprocess.Popen(
        [sys.executable, "-m", "memoryctl", "--vault", str(vault_dir), *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, as a terminal's foreground job has
    )
    folder = vault_dir / "memories" / "default"
    while process.poll() is None and not (folder.is_dir() and any(folder.iterdir())):
        time.sleep(0.005)  # until the first memory is written
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert err.splitlines() == ["interrupted"]
    assert not list((vault_dir / "memories").rglob("*.md"))
    assert commits(vault_dir) == before
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=vault_dir, capture_output=True, text=True
    )
    assert status.stdout == ""


def test_ctrl_c_while_an_import_commits_takes_its_new_files_back(
    vault_dir: Path, tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
):
    """The key can land once every file is written, while git makes the commit: the
    commit is not made, so the files are taken back too, and nothing is left for
    `doctor` to report as saved but not committed."""
    from memoryctl.storage import gitcommit

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    source = tmp_path / "AGENTS.md"
    parts = [f"## Part {n}\n\nGuidance number {n}, in a few more words.\n" for n in range(40)]
    source.write_text("# Notes\n\n" + "\n".join(parts))
    before = commits(vault_dir)
    monkeypatch.setattr(gitcommit, "commit", interrupted)
    result = cli("--vault", str(vault_dir), "import", "agents-md", str(source))
    monkeypatch.undo()
    assert result.code == 130 and result.err.splitlines() == ["interrupted"]
    assert not list((vault_dir / "memories").rglob("*.md"))
    assert commits(vault_dir) == before
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=vault_dir, capture_output=True, text=True
    )
    assert status.stdout == ""
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert doctor.code == 0 and "not committed" not in doctor.out, doctor.out


def test_ctrl_c_once_git_has_made_the_import_commit_leaves_git_s_index_with_it(
    vault_dir: Path, tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
):
    """The key can land after the commit is made, while git's index is brought up to it:
    the import stays (it is committed), and the index must say so, or `git status` would
    show every memory it made as deleted, staged, for the next `git commit` to delete."""
    from memoryctl.storage import gitcommit

    stage = gitcommit._IndexLock.stage
    pressed = []

    def interrupted_once(self, *args):
        if not pressed:
            pressed.append(True)
            raise KeyboardInterrupt
        return stage(self, *args)

    source = tmp_path / "AGENTS.md"
    parts = [f"## Part {n}\n\nGuidance number {n}, in a few more words.\n" for n in range(40)]
    source.write_text("# Notes\n\n" + "\n".join(parts))
    monkeypatch.setattr(gitcommit._IndexLock, "stage", interrupted_once)
    result = cli("--vault", str(vault_dir), "import", "agents-md", str(source))
    monkeypatch.undo()
    assert result.code == 130 and result.err.splitlines() == ["interrupted"]
    assert commits(vault_dir)[0].startswith("Import agents-md: 40 made")
    assert len(list((vault_dir / "memories").rglob("*.md"))) == 40
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=vault_dir, capture_output=True, text=True
    )
    assert status.stdout == ""
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert "not committed" not in doctor.out, doctor.out
