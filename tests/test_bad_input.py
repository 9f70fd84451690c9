"""Bad input cannot take the vault down: hostile frontmatter, and exports into the files
memoryctl or git own."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.test_export import MESSAGE


def alias_bomb(levels: int) -> str:
    """A few hundred bytes whose aliases, expanded, hold 9 ** levels strings."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 9) + "]")
    return "---\n" + "\n".join([*lines, f"title: *a{levels - 1}"]) + "\n---\nboom\n"


@pytest.mark.parametrize("levels", [8, 9])
def test_an_alias_bomb_is_reported_by_path_and_the_rest_of_the_vault_works(vault_dir, cli, levels):
    v = ("--vault", str(vault_dir))
    kept = cli(*v, "add", "An ordinary memory").out.strip()
    bomb = vault_dir / "memories" / "bomb.md"
    bomb.write_text(alias_bomb(levels))
    assert len(bomb.read_bytes()) < 600
    started = time.monotonic()
    doctor = cli(*v, "doctor")
    assert doctor.code == 1
    assert (
        "error: memories/bomb.md: frontmatter refused: its aliases expand to more than "
        "100 values" in doctor.out
    )
    assert kept in [m["id"] for m in cli(*v, "list", "--json").json()]
    assert cli(*v, "show", kept).code == 0
    assert time.monotonic() - started < 60  # not the minutes a bomb would take


def test_a_few_aliases_are_still_read(vault_dir, cli):
    note = vault_dir / "memories" / "shared.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("---\ntitle: Shared\nsource: &s {kind: user}\nalso: *s\n---\nText\n")
    shown = cli("--vault", str(vault_dir), "show", "memories/shared.md", "--json").json()
    assert shown["title"] == "Shared"


def test_a_text_value_over_64_kb_is_refused_with_its_path(vault_dir, cli):
    note = vault_dir / "memories" / "huge.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("---\ntitle: " + "x" * (64 * 1024 + 1) + "\n---\nText\n")
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert "error: memories/huge.md: frontmatter refused: a text value is longer than 64 KB" in (
        doctor.out
    )


# --- export writes only where an agent reads ---------------------------------------------


@pytest.mark.parametrize(
    ("out", "why"),
    [
        ("memoryctl.toml", "is the settings file of the vault"),
        (".git/config", "is inside .git/"),
        (".git/hooks/post-commit", "is inside .git/"),
        ("proposals/x.md", "is inside proposals/ of the vault"),
        (".memoryctl/notes.md", "is inside .memoryctl/ of the vault"),
        ("memories/default/new.md", "is inside the vault"),
    ],
)
def test_export_refuses_files_that_memoryctl_or_git_own(sample_dir, cli, monkeypatch, out, why):
    monkeypatch.chdir(sample_dir)
    target = sample_dir / out
    before = target.read_bytes() if target.exists() else None
    result = cli("--vault", str(sample_dir), "export", "--format", "agents-md", "--out", out)
    assert result.code == 1
    assert f"{out} {why}" in result.err and "nothing was written" in result.err
    assert (target.read_bytes() if target.exists() else None) == before
    assert cli("--vault", str(sample_dir), "list").code == 0


def test_export_refuses_a_symlink_that_leads_into_git(sample_dir, cli, monkeypatch):
    monkeypatch.chdir(sample_dir)
    (sample_dir / "AGENTS.md").symlink_to(sample_dir / ".git" / "config")
    before = (sample_dir / ".git" / "config").read_bytes()
    result = cli("--vault", str(sample_dir), "export", "--format", "agents-md", "-m", MESSAGE)
    assert result.code == 1 and "is inside .git/" in result.err
    assert (sample_dir / ".git" / "config").read_bytes() == before


def test_export_into_an_agents_file_of_the_vault_still_works(sample_dir, cli, monkeypatch):
    monkeypatch.chdir(sample_dir)
    result = cli("--vault", str(sample_dir), "export", "--format", "agents-md")
    assert result.code == 0, result.err
    assert Path(sample_dir / "AGENTS.md").exists()


def test_a_vault_whose_git_is_gone_refuses_to_write_rather_than_leave_changes_uncommitted(
    vault_dir, cli
):
    """A `.git` that git will not use (it points at a repository that was moved, or
    another user owns the folder): every change would be written and never committed.
    memoryctl says why and writes nothing; reading still works."""
    v = ("--vault", str(vault_dir))
    kept = cli(*v, "add", "Written while git still worked").out.strip()
    shutil.rmtree(vault_dir / ".git")
    (vault_dir / ".git").write_text("gitdir: ../moved-away/.git\n")
    files = sorted(p.name for p in (vault_dir / "memories").rglob("*.md"))
    added = cli(*v, "add", "Written after git went away")
    assert added.code == 1
    [line] = added.err.splitlines()
    assert str(vault_dir) in line and "not a git repository" in line
    assert sorted(p.name for p in (vault_dir / "memories").rglob("*.md")) == files
    pinned = cli(*v, "pin", kept)
    assert pinned.code == 1 and str(vault_dir) in pinned.err
    assert cli(*v, "show", kept, "--json").json()["pinned"] is False
    assert [m["id"] for m in cli(*v, "list", "--json").json()] == [kept]
    doctor = cli(*v, "doctor")
    assert doctor.code == 1 and "not a git repository" in doctor.out
    synced = cli(*v, "sync")
    assert synced.code == 1 and "git will not work in" in synced.err
