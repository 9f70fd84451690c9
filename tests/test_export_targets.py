"""Exports each tool reads as intended: GEMINI.md, markers the owner quotes in a code
fence, CRLF files, CLAUDE.md that imports AGENTS.md, and what each tool would cut."""

from __future__ import annotations

from pathlib import Path

from memoryctl.bundle_formats import BEGIN, END
from memoryctl.export import imports_agents_md, inject, outside_code
from memoryctl.load_limits import what_is_loaded

MESSAGE = "Where do I open a pull request for the UFO core?"


def export(cli, vault: Path, *args: str):
    return cli("--vault", str(vault), "export", *args)


def test_gemini_md_gets_the_marked_block_like_agents_md(sample_dir, project, cli):
    result = export(cli, sample_dir, "--format", "gemini-md", "-m", MESSAGE)
    assert result.code == 0, result.err
    text = (project / "GEMINI.md").read_text()
    assert text.startswith(BEGIN) and text.rstrip().endswith(END)
    assert export(cli, sample_dir, "--format", "gemini-md", "-m", MESSAGE).out.startswith(
        "Unchanged:"
    )


QUOTED = (
    "# Contributing\n\n"
    "memoryctl keeps its block between markers, like this:\n\n"
    "```markdown\n"
    f"{BEGIN}\n"
    "# Memory\n"
    "- an example the owner wrote\n"
    f"{END}\n"
    "```\n"
)


def test_a_marker_pair_inside_a_code_fence_is_the_owners_text(sample_dir, project, cli):
    target = project / "AGENTS.md"
    target.write_text(QUOTED)
    assert export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE).code == 0
    first = target.read_text()
    assert first.startswith(QUOTED)
    assert "- an example the owner wrote" in first
    assert first.count(BEGIN) == 2
    assert export(cli, sample_dir, "--format", "agents-md").code == 0
    second = target.read_text()
    assert second.startswith(QUOTED) and second != first


def test_a_fence_of_tildes_and_a_longer_closing_fence_are_code_too():
    lines = ["~~~~", BEGIN, "```", END, "~~~~~", "after"]
    assert outside_code(lines) == [False, False, False, False, False, True]


def test_a_crlf_file_gets_a_crlf_block_and_separator(sample_dir, project, cli):
    target = project / "AGENTS.md"
    target.write_bytes(b"# Rules\r\n\r\nUse tabs.\r\n")
    assert export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE).code == 0
    data = target.read_bytes()
    assert data.startswith(b"# Rules\r\n\r\nUse tabs.\r\n\r\n" + BEGIN.encode() + b"\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE).out.startswith(
        "Unchanged:"
    )


def test_inject_keeps_lf_files_lf():
    assert inject("a\n", f"{BEGIN}\nx\n{END}") == f"a\n\n{BEGIN}\nx\n{END}\n"


def test_claude_md_with_its_own_block_and_the_import_is_refused(sample_dir, project, cli):
    claude = project / "CLAUDE.md"
    before = f"@AGENTS.md\n\n{BEGIN}\nold\n{END}\n"
    claude.write_text(before)
    result = export(cli, sample_dir, "--format", "claude-md")
    assert result.code == 1 and "read the bundle twice" in result.err
    assert claude.read_text() == before and not (project / "AGENTS.md").exists()


def test_an_import_inside_code_is_no_import():
    assert imports_agents_md("See @AGENTS.md for the rules.\n")
    assert imports_agents_md("@./AGENTS.md\n")
    assert not imports_agents_md("```\n@AGENTS.md\n```\n")
    assert not imports_agents_md("Write `@AGENTS.md` to import it.\n")
    assert not imports_agents_md("mail me at someone@AGENTS.md.example\n")


def test_codex_would_cut_a_block_past_32_kib_and_says_which_memories():
    owner = "# Rules\n" + ("x" * 99 + "\n") * 330  # 33,008 bytes of the owner's text
    block = f"{BEGIN}\n# Memory\n\n- first memory\n- second memory\n{END}"
    load = what_is_loaded("AGENTS.md", inject(owner, block), block)
    assert load is not None and load.is_cut and load.kept_bytes == 32 * 1024
    assert "- first memory" in load.cut_lines and "- second memory" in load.cut_lines
    assert "Codex reads the first 32,768 bytes of AGENTS.md" in load.message()
    assert "2 memories" in load.message()


def test_claude_code_loads_200_lines_of_memory_md():
    block = f"{BEGIN}\n# Memory\n\n" + "".join(f"- memory {i}\n" for i in range(250)) + END
    load = what_is_loaded("MEMORY.md", block + "\n", block)
    assert load is not None and load.is_cut and load.kept_lines == 200
    assert load.cut_lines[0] == "- memory 197" and load.cut_lines[-1] == END


def test_a_small_file_is_loaded_whole_and_claude_md_has_no_limit():
    load = what_is_loaded("AGENTS.md", "# Rules\n")
    assert load is not None and not load.is_cut and "all of it is loaded" in load.message()
    assert what_is_loaded("CLAUDE.md", "x" * 100_000) is None


def test_claude_md_that_imports_agents_md_gets_the_bundle_once(sample_dir, project, cli):
    claude = project / "CLAUDE.md"
    claude.write_text("@AGENTS.md\n")
    result = export(cli, sample_dir, "--format", "claude-md", "-m", MESSAGE)
    assert result.code == 0, result.err
    assert claude.read_text() == "@AGENTS.md\n"
    agents = (project / "AGENTS.md").read_text()
    assert agents.count(BEGIN) == 1
    assert "CLAUDE.md imports AGENTS.md" in result.out + result.err
    # Exporting agents-md as well puts nothing anywhere a second time.
    again = export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE)
    assert again.out.startswith("Unchanged:")
    assert claude.read_text() == "@AGENTS.md\n"


def test_export_reports_what_codex_would_cut(sample_dir, project, cli):
    (project / "AGENTS.md").write_text("# Rules\n" + ("y" * 99 + "\n") * 340)
    result = export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE)
    assert result.code == 0
    assert "Codex reads the first 32,768 bytes of AGENTS.md" in result.err
    assert "would cut" in result.err


def test_preview_says_what_each_tool_will_load_here(sample_dir, project, cli):
    (project / "CLAUDE.md").write_text("@AGENTS.md\n")
    (project / "AGENTS.md").write_text("# Rules\n" + ("z" * 99 + "\n") * 340)
    result = cli("--vault", str(sample_dir), "preview", "-m", MESSAGE, "--targets")
    assert result.code == 0
    lines = {line.split(":", 1)[0]: line for line in result.err.splitlines()}
    assert "would cut" in lines["agents-md"]
    assert "CLAUDE.md imports AGENTS.md" in lines["claude-md"]
    assert lines["gemini-md"].startswith("gemini-md: Gemini CLI loads GEMINI.md whole")
    assert sorted(p.name for p in project.iterdir()) == ["AGENTS.md", "CLAUDE.md"]
