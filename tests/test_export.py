"""`memoryctl export`: golden files, marker injection, and refusing what is unsafe.

The golden files in tests/golden/ are the exact bytes each export format writes for
sample_vault, one fixed message and a fixed --now. After an intended change to the
bundle, regenerate them and read the diff before committing it:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_export.py -k golden
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import memoryctl.tokens
from memoryctl.bundle_formats import BEGIN, END
from memoryctl.export import ExportError, safe_path

GOLDEN = Path(__file__).resolve().parent / "golden"
MESSAGE = (
    "Where do I open a pull request for the UFO core, how are release artifacts signed, "
    "which editor do I use, is Lisbon still home, and any snack ideas with mangoes?"
)
NOW = "2026-11-29T12:00:00Z"
GOLDEN_FILES = {
    "markdown": "export.markdown.md",
    "json": "export.json",
    "agents-md": "export.agents-md.md",
    "claude-md": "export.claude-md.md",
    "cursor-rules": "export.cursor-rules.mdc",
}
WRITTEN_TO = {
    "agents-md": "AGENTS.md",
    "claude-md": "CLAUDE.md",
    "cursor-rules": ".cursor/rules/memoryctl.mdc",
}


@pytest.fixture(autouse=True)
def estimated_tokens(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Count tokens with the documented estimate, so the goldens do not depend on the machine."""
    monkeypatch.setenv("MEMORYCTL_TOKENIZER", "estimate")
    memoryctl.tokens.counter.cache_clear()
    yield
    memoryctl.tokens.counter.cache_clear()


def export(cli, vault: Path, *args: str):
    return cli("--vault", str(vault), "export", *args)


def marked(text: str) -> str:
    """The part of a file between the markers, markers included."""
    start = text.index(BEGIN)
    return text[start : text.index(END, start) + len(END)]


# --- golden files -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(GOLDEN_FILES))
def test_golden_export(sample_dir, project, cli, fmt):
    result = export(cli, sample_dir, "--format", fmt, "--message", MESSAGE, "--now", NOW)
    assert result.code == 0, result.err
    if fmt in WRITTEN_TO:
        produced = (project / WRITTEN_TO[fmt]).read_bytes()
    else:
        produced = result.out.encode("utf-8")
    golden = GOLDEN / GOLDEN_FILES[fmt]
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(produced)
    assert golden.exists(), f"no golden file yet: run with UPDATE_GOLDEN=1 to write {golden}"
    assert produced == golden.read_bytes(), (
        f"{fmt} export differs from {golden.name}; if the change is intended, "
        "rerun with UPDATE_GOLDEN=1 and read the diff"
    )


def test_every_golden_carries_the_same_text(sample_dir):
    text = (GOLDEN / GOLDEN_FILES["markdown"]).read_text(encoding="utf-8")
    assert json.loads((GOLDEN / GOLDEN_FILES["json"]).read_text(encoding="utf-8"))["text"] == text
    for fmt in ("agents-md", "claude-md"):
        written = (GOLDEN / GOLDEN_FILES[fmt]).read_text(encoding="utf-8")
        assert written == f"{BEGIN}\n{text}{END}\n"
    cursor = (GOLDEN / GOLDEN_FILES["cursor-rules"]).read_text(encoding="utf-8")
    assert cursor.endswith("---\n" + text)


# --- what you preview is what you export --------------------------------------------------------


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_export_prints_what_preview_prints(sample_dir, project, cli, fmt):
    args = ("--message", MESSAGE, "--now", NOW)
    previewed = cli("--vault", str(sample_dir), "preview", "--format", fmt, *args)
    exported = export(cli, sample_dir, "--format", fmt, *args)
    assert exported.out.encode() == previewed.out.encode()
    written = export(cli, sample_dir, "--format", fmt, "--out", "out/bundle.txt", *args)
    assert written.code == 0, written.err
    assert (project / "out" / "bundle.txt").read_bytes() == previewed.out.encode()


def test_the_marked_block_holds_exactly_the_previewed_text(sample_dir, project, cli):
    previewed = cli("--vault", str(sample_dir), "preview", "-m", MESSAGE).out
    export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE)
    assert marked((project / "AGENTS.md").read_text()) == f"{BEGIN}\n{previewed}{END}"


def test_json_has_every_documented_key_and_no_absolute_path(sample_dir, project, cli):
    result = export(cli, sample_dir, "--format", "json", "--message", MESSAGE, "--now", NOW)
    data = json.loads(result.out)
    assert set(data) == {
        "profile",
        "message",
        "budget",
        "sections",
        "pinned",
        "recalled",
        "conflicts",
        "excluded",
        "warnings",
        "text",
    }
    assert data["profile"] == "default" and data["message"] == MESSAGE
    assert set(data["budget"]) == {"limit", "used", "method"}
    assert isinstance(data["budget"]["used"], int) and data["budget"]["method"] == "estimate"
    assert set(data["sections"]) == {"pinned", "recalled", "conflicts"}
    for entry in data["pinned"] + data["recalled"]:
        assert set(entry) == {
            *("id", "title", "text", "block", "tokens", "source", "now", "newer", "notes")
        }
        assert isinstance(entry["tokens"], int)
        assert set(entry["source"]) == {"kind", "ref"}
        assert all(set(c) == {"id", "text", "above"} for c in entry["now"])
        assert all(
            set(n) == {"why", "id", "created", "text", "above", "proposal", "line"}
            for n in entry["newer"]
        )
        assert all(isinstance(n, str) for n in entry["notes"])
    [conflict] = data["conflicts"]
    assert set(conflict) == {"subject", "value", "older", "newer", "text"}
    assert set(conflict["older"]) == {"id", "predicate", "created"}
    assert isinstance(data["excluded"], list) and isinstance(data["warnings"], list)

    def strings(value):
        if isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, str):
            yield value

    for text in strings(data):
        assert str(sample_dir) not in text and str(project) not in text
        assert not text.startswith("/"), text


# --- marker injection ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["agents-md", "claude-md"])
def test_exporting_twice_changes_nothing_the_second_time(sample_dir, project, cli, fmt):
    target = project / WRITTEN_TO[fmt]
    first = export(cli, sample_dir, "--format", fmt, "-m", MESSAGE)
    assert first.code == 0, first.err
    assert first.out.strip() == f"Wrote {target}"
    before = target.read_bytes()
    stat = target.stat()
    second = export(cli, sample_dir, "--format", fmt, "-m", MESSAGE)
    assert second.code == 0, second.err
    assert second.out.strip() == f"Unchanged: {target}"
    assert target.read_bytes() == before
    assert target.stat().st_mtime_ns == stat.st_mtime_ns
    data = export(cli, sample_dir, "--format", fmt, "-m", MESSAGE, "--json").json()
    assert {k: data[k] for k in ("path", "changed", "format", "notes")} == {
        "path": str(target),
        "changed": False,
        "format": fmt,
        "notes": [],
    }
    assert (data["load"] is not None) == (fmt == "agents-md")  # Codex's limit; the others none


def test_a_missing_file_is_created_with_just_the_block(sample_dir, project, cli):
    export(cli, sample_dir, "--format", "claude-md")
    text = (project / "CLAUDE.md").read_text()
    assert text.startswith(BEGIN + "\n# Memory\n") and text.endswith(END + "\n")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_text_outside_the_markers_is_never_touched(sample_dir, project, cli, newline):
    target = project / "AGENTS.md"
    before = f"# Project rules{newline}{newline}Use tabs. Ünïcode stays.{newline}".encode()
    target.write_bytes(before)
    assert export(cli, sample_dir, "--format", "agents-md", "-m", "mangoes").code == 0
    first = target.read_bytes()
    assert first.startswith(before)
    after = f"{newline}## Written by hand after the block{newline}Keep this.  {newline}".encode()
    target.write_bytes(first + after)

    assert export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE).code == 0
    second = target.read_bytes()
    assert second.startswith(before) and second.endswith(after)
    assert marked(second.decode()) != marked(first.decode())
    assert second == first[: len(before)] + second[len(before) : -len(after)] + after

    # The whole file converted to CRLF by an editor: the block is refreshed, the rest stays.
    crlf = second.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    target.write_bytes(crlf)
    outside_before, _, rest = crlf.partition(BEGIN.encode())
    outside_after = rest.partition(END.encode())[2]
    assert export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE).code == 0
    third = target.read_bytes()
    assert third.startswith(outside_before) and third.endswith(outside_after)
    assert outside_after.startswith(b"\r\n")
    again = export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE)
    assert again.out.startswith("Unchanged:") and target.read_bytes() == third


def test_a_file_without_a_final_newline_keeps_its_last_line(sample_dir, project, cli):
    target = project / "AGENTS.md"
    target.write_bytes(b"last line without newline")
    export(cli, sample_dir, "--format", "agents-md")
    assert target.read_bytes().startswith(b"last line without newline\n\n" + BEGIN.encode())


BROKEN = {
    "opening without closing": f"# Rules\n\n{BEGIN}\nold bundle\n",
    "closing without opening": f"# Rules\n\nold bundle\n{END}\n",
    "duplicated pair": f"{BEGIN}\none\n{END}\n\nmine\n\n{BEGIN}\ntwo\n{END}\n",
    "two openings": f"{BEGIN}\n{BEGIN}\nold\n{END}\n",
    "closing before opening": f"# Rules\n{END}\nmine\n{BEGIN}\n",
}


@pytest.mark.parametrize("case", sorted(BROKEN))
@pytest.mark.parametrize("fmt", ["agents-md", "claude-md"])
def test_broken_markers_are_refused_and_the_file_is_not_modified(
    sample_dir, project, cli, case, fmt
):
    target = project / WRITTEN_TO[fmt]
    target.write_bytes(BROKEN[case].encode())
    stat = target.stat()
    result = export(cli, sample_dir, "--format", fmt, "-m", MESSAGE)
    assert result.code == 1
    assert "marker" in result.err
    assert WRITTEN_TO[fmt] in result.err
    if case == "closing before opening":
        assert "closing memoryctl marker comes before the opening one" in result.err
    else:
        assert "expected one pair" in result.err
    assert target.read_bytes() == BROKEN[case].encode()
    assert target.stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in project.iterdir()) == [WRITTEN_TO[fmt]]  # no temp file left


def test_a_file_that_is_not_utf8_is_refused_untouched(sample_dir, project, cli):
    target = project / "AGENTS.md"
    target.write_bytes(b"\xff\xfe# Rules in UTF-16\n")
    result = export(cli, sample_dir, "--format", "agents-md")
    assert result.code == 1 and "not UTF-8" in result.err
    assert target.read_bytes() == b"\xff\xfe# Rules in UTF-16\n"


# --- where an export may write ------------------------------------------------------------------


@pytest.mark.parametrize("out", ["../outside.md", "sub/../../outside.md", "{tmp}/outside.md"])
def test_a_path_outside_the_current_folder_is_refused(sample_dir, project, cli, tmp_path, out):
    out = out.format(tmp=tmp_path)
    result = export(cli, sample_dir, "--format", "agents-md", "--out", out)
    assert result.code == 1
    assert f"{out} is outside the current folder" in result.err
    assert not (tmp_path / "outside.md").exists()


def test_a_symlink_that_leads_outside_the_current_folder_is_refused(
    sample_dir, project, cli, tmp_path
):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("someone else's file\n")
    (project / "AGENTS.md").symlink_to(outside)
    result = export(cli, sample_dir, "--format", "agents-md")
    assert result.code == 1 and "outside the current folder" in result.err
    assert outside.read_text() == "someone else's file\n"


def test_a_folder_is_not_a_file_name(sample_dir, project, cli):
    (project / "docs").mkdir()
    result = export(cli, sample_dir, "--format", "markdown", "--out", "docs")
    assert result.code == 1 and "docs is a folder" in result.err


def _immutable(path: Path, request: pytest.FixtureRequest) -> None:
    """Make `path` unwritable even for root, or skip when that is impossible here."""
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
        pytest.skip(
            "running as root, which may write any file whatever its mode, and `chattr +i` "
            "(the one thing that binds root) is not available on this file system"
        )
    request.addfinalizer(lambda: subprocess.run([chattr, "-i", str(path)], check=False))


def _make_unwritable(path: Path, request: pytest.FixtureRequest) -> None:
    if os.geteuid() == 0:
        _immutable(path, request)
    else:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        request.addfinalizer(lambda: path.chmod(mode))


def test_a_file_the_user_cannot_write_is_refused(sample_dir, project, cli, request):
    target = project / "AGENTS.md"
    target.write_bytes(b"# Read-only rules\n")
    _make_unwritable(target, request)
    assert not os.access(target, os.W_OK)
    result = export(cli, sample_dir, "--format", "agents-md")
    assert result.code == 1
    assert "cannot write AGENTS.md: permission denied" in result.err
    assert target.read_bytes() == b"# Read-only rules\n"


def test_a_folder_the_user_cannot_write_is_refused(sample_dir, project, cli, request):
    folder = project / "locked"
    folder.mkdir()
    (folder / "AGENTS.md").write_bytes(b"# Rules\n")
    _make_unwritable(folder, request)
    result = export(cli, sample_dir, "--format", "agents-md", "--out", "locked/AGENTS.md")
    assert result.code == 1
    assert "cannot write locked/AGENTS.md: permission denied on the folder" in result.err
    assert (folder / "AGENTS.md").read_bytes() == b"# Rules\n"
    assert sorted(p.name for p in folder.iterdir()) == ["AGENTS.md"]


def test_safe_path_keeps_new_folders_inside(project):
    assert safe_path("a/b/c.md", project) == project / "a" / "b" / "c.md"
    with pytest.raises(ExportError, match="outside the current folder"):
        safe_path("a/../../c.md", project)


# --- the formats themselves ---------------------------------------------------------------------


def test_cursor_rules_have_frontmatter_that_parses_and_always_apply(sample_dir, project, cli):
    assert export(cli, sample_dir, "--format", "cursor-rules", "-m", MESSAGE).code == 0
    text = (project / ".cursor" / "rules" / "memoryctl.mdc").read_text()
    assert text.startswith("---\n")
    header, _, body = text[4:].partition("\n---\n")
    front = yaml.safe_load(header)
    assert front["alwaysApply"] is True
    assert isinstance(front["description"], str) and front["description"]
    assert set(front) == {"description", "globs", "alwaysApply"}
    assert body == cli("--vault", str(sample_dir), "preview", "-m", MESSAGE).out


def test_export_without_format_uses_the_profiles_format(sample_dir, project, cli):
    config = sample_dir / "memoryctl.toml"
    config.write_text(config.read_text() + '\n[profiles.claude]\nformat = "claude-md"\n')
    result = export(cli, sample_dir, "--profile", "claude")
    assert result.code == 0, result.err
    assert (project / "CLAUDE.md").read_text().startswith(BEGIN)


def test_exporting_into_the_sample_vault_itself_is_safe_and_idempotent(
    sample_dir, cli, monkeypatch
):
    monkeypatch.chdir(sample_dir)
    first = export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE)
    assert first.code == 0, first.err
    second = export(cli, sample_dir, "--format", "agents-md", "-m", MESSAGE)
    assert second.out.startswith("Unchanged:")
    listed = cli("--vault", str(sample_dir), "list", "--json").json()
    assert "AGENTS.md" not in {m["path"] for m in listed}


def test_a_file_the_vault_would_read_as_a_memory_is_refused(sample_dir, cli, monkeypatch):
    config = sample_dir / "memoryctl.toml"
    config.write_text(config.read_text().replace('"AGENTS.md", ', ""))
    monkeypatch.chdir(sample_dir)
    result = export(cli, sample_dir, "--format", "agents-md")
    assert result.code == 1
    assert "AGENTS.md is inside the vault" in result.err
    assert "would be read as a memory" in result.err
    assert not (sample_dir / "AGENTS.md").exists()
    # Outside the memory files (a dot folder), the same vault may hold an export.
    assert export(cli, sample_dir, "--format", "cursor-rules").code == 0
