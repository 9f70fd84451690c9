"""The CLI end to end on temporary vaults: what a person types, sees, and finds on disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryctl.storage import gitrepo

REQUIRED_JSON_KEYS = {
    "id",
    "path",
    "title",
    "kind",
    "status",
    "pinned",
    "created",
    "updated",
    "tags",
    "namespace",
    "deprecates",
    "derived_from",
    "anchors",
    "body",
}


def git_log(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def git_status(root: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def test_init_creates_a_git_vault_with_settings_and_a_readme(tmp_path, cli):
    result = cli("init", str(tmp_path / "v"))
    assert result.code == 0, result.err
    root = tmp_path / "v"
    assert (root / ".git").is_dir()
    assert (root / "memoryctl.toml").is_file()
    assert (root / "README.md").is_file()
    assert ".memoryctl/" in (root / ".gitignore").read_text()
    assert git_log(root) == ["Initialize memoryctl vault"]
    again = cli("init", str(root))
    assert "already a vault" in again.out


def test_init_makes_the_vault_named_by_vault_not_in_the_current_folder(tmp_path, cli, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    for args in (
        ("init", "--vault", str(tmp_path / "a")),
        ("--vault", str(tmp_path / "b"), "init"),
    ):
        result = cli(*args)
        assert result.code == 0, result.err
    assert (tmp_path / "a" / "memoryctl.toml").is_file()
    assert (tmp_path / "b" / "memoryctl.toml").is_file()
    assert list(here.iterdir()) == []
    twice = cli("init", str(tmp_path / "c"), "--vault", str(tmp_path / "d"))
    assert twice.code == 1 and "give one" in twice.err
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()
    assert cli("init", str(tmp_path / "a"), "--vault", str(tmp_path / "a")).code == 0


def test_two_vaults_made_alike_in_one_second_are_two_vaults(tmp_path, cli):
    # A vault is known on every device by its first commit (its sealing key is filed under
    # it), so two vaults made from the same files at the same moment must still differ.
    firsts = []
    for name in ("a", "b"):
        assert cli("init", str(tmp_path / name)).code == 0
        firsts.append(
            subprocess.run(
                ["git", "rev-list", "--max-parents=0", "HEAD"],
                cwd=tmp_path / name,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
    assert firsts[0] != firsts[1]


def folder_of_notes_and_other_files(root: Path) -> Path:
    """A folder a person already keeps notes in, beside files that are not memories."""
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "one.md").write_text("Ada is my sister.\n")
    (root / "notes" / "two.md").write_text("I live in Porto.\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "backup.sh").write_text("#!/bin/sh\n")
    (root / "photo.jpg").write_bytes(b"\xff\xd8")
    (root / ".gitignore").write_text("node_modules/")
    return root


def test_init_over_a_folder_commits_its_memories_and_names_the_files_it_leaves(tmp_path, cli):
    root = folder_of_notes_and_other_files(tmp_path / "notes-folder")
    result = cli("init", str(root))
    assert result.code == 0, result.err
    assert "It holds 2 memories." in result.out
    assert "Left 2 other files uncommitted (photo.jpg, scripts/backup.sh)" in result.out
    assert "Added to the existing .gitignore: .memoryctl/ *.tmp .DS_Store" in result.out
    tracked = gitrepo._git(root, "ls-files").stdout.split()
    assert sorted(tracked) == [
        ".gitattributes",  # memory files merge key by key (docs/SYNC.md)
        ".gitignore",
        "README.md",
        "memoryctl.toml",
        "notes/one.md",
        "notes/two.md",
    ]
    assert git_status(root) == "?? photo.jpg\n?? scripts/\n"
    # The person's own ignores are kept; the vault's are added below them.
    assert (root / ".gitignore").read_text() == "node_modules/\n.memoryctl/\n*.tmp\n.DS_Store\n"


def test_init_with_all_files_commits_every_file_when_asked(tmp_path, cli):
    root = folder_of_notes_and_other_files(tmp_path / "notes-folder")
    result = cli("init", "--all-files", str(root), "--json")
    assert result.code == 0, result.err
    assert result.json()["memories"] == 2 and result.json()["uncommitted"] == []
    assert git_status(root) == ""
    assert "photo.jpg" in gitrepo._git(root, "ls-files").stdout


def test_a_folder_that_is_not_a_vault_is_refused_before_any_work(tmp_path, cli, monkeypatch):
    root = folder_of_notes_and_other_files(tmp_path / "big-folder")
    for args in (("--vault", str(root), "list"), ("tui", str(root))):
        result = cli(*args)
        assert result.code == 1
        assert result.err.strip() == (
            f"memoryctl: {root} is not a vault; memoryctl init {root} makes one"
        )
        assert result.out == ""
    monkeypatch.setenv("MEMORYCTL_VAULT", str(root))
    assert "is not a vault" in cli("list").err
    assert not (root / ".git").exists()  # nothing was indexed or committed


def test_a_file_given_as_the_vault_is_called_a_file(tmp_path, cli):
    note_file = tmp_path / "note.md"
    note_file.write_text("hello\n")
    result = cli("tui", str(note_file))
    assert result.code == 1
    assert result.err.strip() == f"memoryctl: {note_file} is a file, not a folder"


def test_add_prints_the_new_id_and_show_prints_it_back(vault_dir, cli):
    result = cli(
        "--vault", str(vault_dir), "add", "I prefer tabs over spaces", "--kind", "preference"
    )
    assert result.code == 0, result.err
    memory_id = result.out.strip()
    assert len(memory_id) == 10
    shown = cli("--vault", str(vault_dir), "show", memory_id)
    assert shown.out.endswith("\n\nI prefer tabs over spaces\n")
    data = cli("--vault", str(vault_dir), "show", memory_id, "--json").json()
    assert data.keys() >= REQUIRED_JSON_KEYS
    assert data["kind"] == "preference"
    assert data["now"] == []


def test_add_reads_the_body_from_stdin_and_commits_with_a_message(vault_dir, cli):
    result = cli(
        "--vault", str(vault_dir), "add", "-", "--title", "Coffee", stdin="Black, no sugar.\n"
    )
    assert result.code == 0, result.err
    assert git_log(vault_dir)[0] == "Add memory: Coffee"
    assert git_status(vault_dir) == ""


def test_add_and_correct_take_their_words_without_quotes(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    added = cli(*v, "add", "I", "like", "green", "tea", "--kind", "preference")
    assert added.code == 0, added.err
    data = cli(*v, "show", added.out.strip(), "--json").json()
    assert (data["body"].strip(), data["kind"]) == ("I like green tea", "preference")
    fixed = cli(*v, "correct", "I", "like", "black", "tea", "--deprecates", "green tea")
    assert fixed.code == 0, fixed.err
    assert cli(*v, "show", fixed.out.strip(), "--json").json()["body"].strip() == "I like black tea"


def test_add_back_dates_with_created_and_list_orders_newest_first(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    cli(*v, "add", "older fact", "--created", "2026-01-02")
    cli(*v, "add", "newer fact", "--created", "2026-03-04T05:06:07Z")
    listed = cli(*v, "list", "--json").json()
    assert [m["body"].strip() for m in listed] == ["newer fact", "older fact"]
    assert listed[1]["created"] == "2026-01-02T00:00:00Z"


def test_add_with_every_option_writes_them_to_the_frontmatter(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    source_id = cli(*v, "add", "source note").out.strip()
    result = cli(
        *v,
        "add",
        "Release uses publish()",
        "--title",
        "Release",
        "--tag",
        "release",
        "--tag",
        "ci",
        "--namespace",
        "work",
        "--visibility",
        "shared",
        "--source",
        "tool:pytest run",
        "--derived-from",
        source_id,
        "--anchor",
        "src/release.py#publish",
        "--subject",
        "user",
        "--predicate",
        "likes",
        "--value",
        "mangoes",
        "--pin",
        "--json",
    )
    assert result.code == 0, result.err
    data = result.json()
    assert data["tags"] == ["release", "ci"]
    assert data["namespace"] == "work"
    assert data["visibility"] == "shared"
    assert data["source"] == {"kind": "tool", "ref": "pytest run"}
    assert data["derived_from"] == [source_id]
    assert data["anchors"] == [{"path": "src/release.py", "symbol": "publish"}]
    assert data["pinned"] is True
    assert data["path"].startswith("memories/work/")
    text = (vault_dir / data["path"]).read_text()
    assert "predicate: likes" in text


def test_search_finds_current_memories_and_all_includes_retired(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    keep = cli(*v, "add", "The staging database lives in Frankfurt").out.strip()
    gone = cli(*v, "add", "The old staging database lived in Dublin").out.strip()
    path = vault_dir / cli(*v, "show", gone, "--json").json()["path"]
    path.write_text(path.read_text().replace("status: active", "status: retired"))
    found = [m["id"] for m in cli(*v, "search", "staging database", "--json").json()]
    assert found == [keep]
    everything = {m["id"] for m in cli(*v, "search", "staging database", "--all", "--json").json()}
    assert everything == {keep, gone}


def test_search_takes_its_words_without_quotes(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    keep = cli(*v, "add", "The staging database lives in Frankfurt").out.strip()
    cli(*v, "add", "The staging cluster runs in Dublin")
    found = cli(*v, "search", "staging", "database", "--json")
    assert found.code == 0
    assert [m["id"] for m in found.json()] == [keep]


def test_pin_and_unpin_change_one_key_and_commit(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    memory_id = cli(*v, "add", "Never push to main").out.strip()
    assert cli(*v, "pin", memory_id).code == 0
    assert [m["id"] for m in cli(*v, "list", "--pinned", "--json").json()] == [memory_id]
    assert git_log(vault_dir)[0] == "Pin Never push to main"
    again = cli(*v, "pin", memory_id)
    assert again.code == 1 and "already pinned" in again.err
    assert cli(*v, "unpin", memory_id).code == 0
    assert cli(*v, "list", "--pinned", "--json").json() == []


def test_edit_opens_the_editor_and_commits_the_change(vault_dir, cli, tmp_path, monkeypatch):
    v = ("--vault", str(vault_dir))
    memory_id = cli(*v, "add", "first draft").out.strip()
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\np = sys.argv[1]\nt = open(p).read().replace('first draft', 'second draft')\n"
        "open(p, 'w').write(t)\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    result = cli(*v, "edit", memory_id)
    assert result.code == 0, result.err
    assert "second draft" in cli(*v, "show", memory_id).out
    assert git_log(vault_dir)[0].startswith("Edit ")


def test_an_editor_whose_path_has_a_space_opens_when_quoted(vault_dir, cli, tmp_path, monkeypatch):
    v = ("--vault", str(vault_dir))
    memory_id = cli(*v, "add", "first draft").out.strip()
    folder = tmp_path / "My Editors"
    folder.mkdir()
    editor = folder / "edit it.py"
    editor.write_text(
        "import sys\np = sys.argv[-1]\nt = open(p).read().replace('first', 'second')\n"
        "open(p, 'w').write(t)\n"
    )
    monkeypatch.setenv("VISUAL", f'{sys.executable} "{editor}"')
    result = cli(*v, "edit", memory_id)
    assert result.code == 0, result.err
    assert "second draft" in cli(*v, "show", memory_id).out
    monkeypatch.setenv("VISUAL", str(tmp_path / "no such editor"))
    missing = cli(*v, "edit", memory_id)
    assert missing.code == 1 and "was not found; set $EDITOR" in missing.err


def test_exit_codes_usage_is_2_user_error_is_1_with_one_line(vault_dir, cli):
    assert cli("frobnicate").code == 2
    result = cli("--vault", str(vault_dir), "show", "nosuchid")
    assert result.code == 1
    assert result.err.strip().count("\n") == 0
    assert "no memory with id 'nosuchid'" in result.err
    assert "Traceback" not in result.err


def test_an_id_that_names_no_memory_or_many_says_so_in_a_short_line(sample_dir, cli):
    v = ("--vault", str(sample_dir))
    empty = cli(*v, "show", "")
    assert empty.code == 1
    assert empty.err.splitlines()[-1] == (
        "memoryctl: give a memory's id (or the start of it, or its path)"
    )
    pasted = cli(*v, "show", "x" * 10_000)
    assert pasted.code == 1 and len(pasted.err) < 200
    assert pasted.err.startswith("memoryctl: no memory with id 'xxxxxxxx")
    assert "…" in pasted.err
    several = cli(*v, "pin", "h")
    assert several.code == 1
    assert several.err == (
        "memoryctl: 'h' matches 4 memories (h3jcnchn9x, hafbhwmj2s, hfvse10tn3, hq44kmnt7t); "
        "give more of the id\n"
    )


def test_no_vault_anywhere_is_a_clear_error(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("list")
    assert result.code == 1
    assert "no vault here" in result.err


def test_vault_resolution_order(tmp_path, cli, monkeypatch, isolated_env):
    first = tmp_path / "first"
    second = tmp_path / "second"
    third = tmp_path / "third"
    for path in (first, second, third):
        cli("init", str(path))
        cli("--vault", str(path), "add", f"lives in {path.name}")
    config = isolated_env / "config" / "memoryctl" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'vault = "{third}"\n')
    monkeypatch.chdir(tmp_path)

    def where(*extra: str) -> str:
        return cli(*extra, "list", "--json").json()[0]["body"].strip()

    assert where() == "lives in third"
    monkeypatch.setenv("MEMORYCTL_VAULT", str(second))
    assert where() == "lives in second"
    assert where("--vault", str(first)) == "lives in first"


def test_the_current_folder_is_used_when_it_is_a_vault(vault_dir, cli, monkeypatch):
    cli("--vault", str(vault_dir), "add", "here")
    monkeypatch.chdir(vault_dir)
    assert cli("list", "--json").json()[0]["body"].strip() == "here"


BAD_FILES = {
    "bad-yaml.md": (b"---\ntitle: [unclosed\n---\nbody\n", "malformed YAML"),
    "not-mapping.md": (b"---\n- a\n- b\n---\nbody\n", "not a mapping"),
    "bad-date.md": (b"---\nid: baddate001\ncreated: 2026-13-45\n---\nbody\n", "invalid date"),
    "latin1.md": ("---\ntitle: caf\xe9\n---\n".encode("latin-1"), "not valid UTF-8"),
    "empty.md": (b"", "file is empty"),
    "no-close.md": (b"---\ntitle: x\nbody without a closing fence\n", "no closing"),
}


def test_malformed_files_are_reported_with_path_and_reason_and_never_touched(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    cli(*v, "add", "a good memory")
    for name, (raw, _) in BAD_FILES.items():
        (vault_dir / name).write_bytes(raw)
    big = vault_dir / "huge.md"
    big.write_bytes(b"---\ntitle: big\n---\n" + b"x" * (10 * 1024 * 1024 + 1))
    before = {name: (vault_dir / name).read_bytes() for name in BAD_FILES}

    listed = cli(*v, "list")
    assert listed.code == 0
    assert "a good memory" in listed.out
    for name in BAD_FILES:
        assert name in listed.out
    doctor = cli(*v, "doctor")
    assert doctor.code == 1
    for name, (_, reason) in BAD_FILES.items():
        line = next(line for line in doctor.out.splitlines() if f": {name}:" in line)
        assert reason in line, line
    assert "huge.md: file is larger than 10 MB" in doctor.out
    assert {name: (vault_dir / name).read_bytes() for name in BAD_FILES} == before
    assert big.stat().st_size == 10 * 1024 * 1024 + 1 + len(b"---\ntitle: big\n---\n")


def test_a_malformed_file_cannot_be_changed_until_fixed(vault_dir, cli):
    (vault_dir / "bad.md").write_bytes(b"---\ntitle: [unclosed\n---\nbody\n")
    memory_id = cli("--vault", str(vault_dir), "list", "--json").json()[0]["id"]
    result = cli("--vault", str(vault_dir), "pin", memory_id)
    assert result.code == 1
    assert "bad.md" in result.err and "fix the file first" in result.err
    assert (vault_dir / "bad.md").read_bytes() == b"---\ntitle: [unclosed\n---\nbody\n"


def test_two_files_with_the_same_id_are_both_kept_and_reported(vault_dir, cli):
    for name in ("one.md", "two.md"):
        (vault_dir / name).write_text(f"---\nid: sameid0001\ntitle: {name}\n---\nbody\n")
    listed = cli("--vault", str(vault_dir), "list", "--json").json()
    assert sorted(m["path"] for m in listed) == ["one.md", "two.md"]
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert "one.md: id sameid0001 is also used by two.md" in doctor.out
    assert "two.md: id sameid0001 is also used by one.md" in doctor.out


def test_symlinks_outside_the_vault_git_and_other_files_are_ignored(vault_dir, cli, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: secret outside\n---\nnot yours\n")
    (vault_dir / "link.md").symlink_to(outside)
    (vault_dir / "notes.txt").write_text("not markdown")
    (vault_dir / ".git" / "stray.md").write_text("inside git")
    listed = cli("--vault", str(vault_dir), "list", "--json").json()
    assert listed == []
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert "link.md: symlink points outside the vault" in doctor.out


def test_crlf_and_bom_survive_a_pin(vault_dir, cli):
    raw = (
        "\ufeff---\r\nid: crlfnote01\r\ntitle: Windows note\r\n# a comment\r\n"
        "x-custom: keep\r\n---\r\nLine one\r\nLine two\r\n"
    )
    path = vault_dir / "win.md"
    path.write_bytes(raw.encode("utf-8"))
    assert cli("--vault", str(vault_dir), "pin", "crlfnote01").code == 0
    after = path.read_bytes().decode("utf-8")
    assert after.startswith("\ufeff---\r\n")
    assert "\r\n" in after and "\n" not in after.replace("\r\n", "")
    assert after.endswith("---\r\nLine one\r\nLine two\r\n")
    assert "# a comment\r\nx-custom: keep\r\npinned: true\r\npin_order: 1\r\n" in after


def test_a_file_without_frontmatter_is_a_memory_and_stays_byte_identical(vault_dir, cli):
    path = vault_dir / "plain.md"
    path.write_bytes(b"# Grocery list\n\nEggs, oat milk.\n")
    listed = cli("--vault", str(vault_dir), "list", "--json").json()
    assert listed[0]["title"] == "Grocery list"
    assert path.read_bytes() == b"# Grocery list\n\nEggs, oat milk.\n"
    memory_id = listed[0]["id"]
    assert cli("--vault", str(vault_dir), "pin", memory_id).code == 0
    text = path.read_text()
    assert text.startswith(f"---\nid: {memory_id}\npinned: true\n")
    assert text.endswith("# Grocery list\n\nEggs, oat milk.\n")
    assert cli("--vault", str(vault_dir), "show", memory_id).code == 0


def test_a_corrupt_index_is_rebuilt_and_the_user_is_told(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    cli(*v, "add", "survives")
    from memoryctl.storage.vault import index_path

    db = index_path(vault_dir)
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    result = cli(*v, "list", "--json")
    assert result.code == 0
    assert "rebuilt" in result.err
    assert result.json()[0]["body"].strip() == "survives"


def test_a_missing_index_is_built_on_the_next_command(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    cli(*v, "add", "still here")
    from memoryctl.storage.vault import index_path

    db = index_path(vault_dir)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    result = cli(*v, "list", "--json")
    assert result.json()[0]["body"].strip() == "still here"
    assert "index was missing" in result.err


def test_reindex_full_reports_counts(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    cli(*v, "add", "one")
    cli(*v, "add", "two")
    data = cli(*v, "reindex", "--full", "--json").json()
    assert data["scanned"] == 2
    assert data["problems"] == []


def test_edits_outside_memoryctl_are_left_for_the_user_to_commit(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    first = cli(*v, "add", "first").out.strip()
    second = cli(*v, "add", "second").out.strip()
    path = vault_dir / cli(*v, "show", first, "--json").json()["path"]
    path.write_text(path.read_text() + "\nAn edit made in vim.\n")
    cli(*v, "pin", second)
    assert git_status(vault_dir).strip().endswith(path.name)
    assert git_log(vault_dir)[0].startswith("Pin second")


def test_autocommit_can_be_switched_off(vault_dir, cli):
    config = vault_dir / "memoryctl.toml"
    config.write_text(config.read_text().replace("autocommit = true", "autocommit = false"))
    subprocess.run(["git", "commit", "-qam", "settings"], cwd=vault_dir, check=True)
    cli("--vault", str(vault_dir), "add", "uncommitted")
    assert git_log(vault_dir)[0] == "settings"
    assert "memories/" in git_status(vault_dir)


def test_history_follows_a_memory_across_a_rename(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    memory_id = cli(*v, "add", "Original text", "--title", "Renamed note").out.strip()
    old = cli(*v, "show", memory_id, "--json").json()["path"]
    subprocess.run(["git", "mv", old, "moved.md"], cwd=vault_dir, check=True)
    subprocess.run(["git", "commit", "-qm", "Move note"], cwd=vault_dir, check=True)
    cli(*v, "pin", memory_id)
    history = cli(*v, "history", memory_id, "--json").json()
    assert [c["subject"] for c in history] == [
        "Pin Renamed note",
        "Move note",
        "Add memory: Renamed note",
    ]
    assert history[-1]["path"] == old
    text = cli(*v, "history", memory_id).out
    assert "+Original text" in text


def test_history_in_a_folder_that_is_not_git_says_why(tmp_path, cli):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "memoryctl.toml").write_text("")
    (root / "a.md").write_text("---\nid: plainfold1\n---\nhello\n")
    result = cli("--vault", str(root), "history", "plainfold1")
    assert result.code == 1
    assert "not a git repository" in result.err


def test_the_installed_command_runs_as_a_separate_process(vault_dir):
    env = {**os.environ}
    result = subprocess.run(
        [sys.executable, "-m", "memoryctl", "--vault", str(vault_dir), "add", "from a process"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip()) == 10
    shown = subprocess.run(
        [sys.executable, "-m", "memoryctl", "--vault", str(vault_dir), "show", "nope"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert shown.returncode == 1
    assert shown.stderr.startswith("memoryctl: ")


@pytest.mark.parametrize("args", [["--help"], ["add", "--help"], ["--version"]])
def test_help_and_version_exit_zero(cli, args):
    result = cli(*args)
    assert result.code == 0
    assert "memoryctl" in result.out


def test_git_commit_helper_commits_only_named_paths(vault_dir):
    (vault_dir / "a.md").write_text("a")
    (vault_dir / "b.md").write_text("b")
    gitrepo.commit(vault_dir, ["a.md"], "just a")
    assert "b.md" in git_status(vault_dir)
    assert "a.md" not in git_status(vault_dir)


def test_reindex_full_rebuilds_from_the_files_alone(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    cli(*v, "add", "kept")
    from memoryctl.storage.vault import index_path

    db = index_path(vault_dir)
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("UPDATE notes SET title = 'tampered'")
    conn.commit()
    conn.close()
    data = cli(*v, "reindex", "--full", "--json").json()
    assert data["added"] == 1
    assert cli(*v, "list", "--json").json()[0]["title"] == "kept"


def test_an_unreadable_status_holds_the_memory_for_review(vault_dir, cli):
    (vault_dir / "a.md").write_text("---\nid: oddstatus1\nstatus: Retired\n---\nold plan\n")
    data = cli("--vault", str(vault_dir), "show", "oddstatus1", "--json").json()
    assert data["status"] == "needs_review"
    assert any("held for review" in p for p in data["problems"])


def test_a_symlink_inside_the_vault_is_not_indexed_twice(vault_dir, cli):
    (vault_dir / "real.md").write_text("---\nid: realnote01\n---\nthe real note\n")
    (vault_dir / "alias.md").symlink_to(vault_dir / "real.md")
    listed = cli("--vault", str(vault_dir), "list", "--json").json()
    assert [m["path"] for m in listed] == ["real.md"]


def test_the_first_write_to_an_undated_file_keeps_its_date(vault_dir, cli):
    path = vault_dir / "undated.md"
    path.write_text("---\nid: undated001\n---\nno date\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    before = cli("--vault", str(vault_dir), "show", "undated001", "--json").json()["created"]
    cli("--vault", str(vault_dir), "pin", "undated001")
    assert f"created: {before}" in path.read_text()
    assert (
        cli("--vault", str(vault_dir), "show", "undated001", "--json").json()["created"] == before
    )


def test_a_date_that_is_not_one_is_refused_naming_the_flag_that_gave_it(vault_dir, cli):
    from memoryctl.actions import NewMemory, NotAMoment, add_memory
    from memoryctl.storage.vault import Vault

    result = cli("--vault", str(vault_dir), "add", "a fact", "--created", "soon")
    assert result.code == 1 and "--created 'soon' is not a date" in result.err
    # The core's own sentence names the key, not the command line's flag.
    with pytest.raises(NotAMoment) as refused:
        add_memory(Vault(vault_dir), NewMemory(body="a fact", created="soon"))
    assert str(refused.value).startswith("created 'soon' is not a date")


def test_agents_add_and_list_say_loudly_that_the_keyring_stores_tokens_unencrypted(vault_dir, cli):
    # The suite's keyring is keyrings.alt's plain file (tests/conftest.py).
    added = cli("agents", "add", "claude", "--profile", "default", "--vault", str(vault_dir))
    assert added.code == 0
    assert "WARNING: Agent tokens are stored UNENCRYPTED" in added.err
    assert "keyrings.alt.file.PlaintextKeyring" in added.err
    listed = cli("agents", "list", "--vault", str(vault_dir))
    assert "UNENCRYPTED" in listed.err and "claude" in listed.out


@pytest.mark.parametrize(
    "args",
    [
        ("preview", "--now", "yesterday"),
        ("check", "--now", "yesterday"),
        ("review", "log", "--since", "notadate"),
        ("retired", "--since", "notadate"),
        ("serve", "--http", "--port", "99999"),
        ("serve", "--http", "--port", "eighty"),
    ],
)
def test_a_malformed_option_value_is_a_usage_error_before_any_work(vault_dir, cli, args):
    result = cli("--vault", str(vault_dir), *args)
    assert result.code == 2
    assert "usage:" in result.err and "Traceback" not in result.err
    assert "OverflowError" not in result.err and "no agents" not in result.err


def test_a_proposal_made_on_the_command_line_is_the_persons(vault_dir, cli):
    mid = cli("--vault", str(vault_dir), "add", "I live in Lisbon.").out.strip()
    made = cli("--vault", str(vault_dir), "propose", "retire", mid, "--reason", "moved", "--json")
    assert made.code == 0, made.err
    assert made.json()["origin"] == {"kind": "user", "ref": None}


def test_show_prints_a_memorys_text_with_its_lines_as_written(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    body = "Release steps:\n\n1. Tag the commit.\n2. Push the tag.\n"
    memory_id = cli(*v, "add", "-", "--title", "Release", stdin=body).out.strip()
    shown = cli(*v, "show", memory_id)
    assert shown.out.endswith("\n\n" + body)
    assert cli(*v, "show", memory_id, "--json").json()["body"] == body


def test_replace_ends_the_new_text_with_a_newline_even_in_a_file_written_without_one(
    vault_dir, cli
):
    v = ("--vault", str(vault_dir))
    (vault_dir / "hand.md").write_bytes(b"---\nid: handmade01\ntitle: Hand\n---\nwritten")
    (vault_dir / "other.md").write_bytes(b"---\nid: handmade02\ntitle: Other\n---\nas is")
    assert cli(*v, "replace", "handmade01", "two\nlines").code == 0
    assert (vault_dir / "hand.md").read_bytes().endswith(b"\ntwo\nlines\n")
    # A change of its keys alone leaves the person's text as they wrote it.
    assert cli(*v, "pin", "handmade02").code == 0
    assert (vault_dir / "other.md").read_bytes().endswith(b"---\nas is")


def test_ctrl_c_as_the_command_closes_the_vault_is_one_line_not_a_traceback(
    vault_dir, cli, monkeypatch
):
    from memoryctl.storage.vault import Vault

    close = Vault.close

    def interrupted(self):
        close(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(Vault, "close", interrupted)
    result = cli("--vault", str(vault_dir), "list")
    assert result.code == 130
    assert result.err.splitlines()[-1] == "interrupted"


def test_an_empty_vault_says_it_has_no_memories_yet_and_how_to_add_one(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    empty = cli(*v, "list")
    assert empty.code == 0 and empty.out == ""
    assert empty.err.splitlines()[-1] == "No memories yet: add one with memoryctl add TEXT."
    memory_id = cli(*v, "add", "Tea after lunch").out.strip()
    assert cli(*v, "list", "--kind", "plan").err.splitlines()[-1] == "No memories match."
    unpinned = cli(*v, "unpin", memory_id)
    assert unpinned.code == 1
    assert unpinned.err == f"memoryctl: {memory_id} (Tea after lunch) is not pinned\n"


def test_show_of_a_file_with_broken_frontmatter_prints_the_file_as_it_is(vault_dir, cli):
    """The list marks it `!`; `show` names the problem and prints the file, every line,
    so that the person can see what to mend (as the TUI shows it)."""
    text = "---\nid: brokenbrok\ntitle: [unclosed\n---\nThe body as written.\n"
    (vault_dir / "memories").mkdir(exist_ok=True)
    (vault_dir / "memories" / "broken.md").write_text(text)
    shown = cli("--vault", str(vault_dir), "show", "memories/broken.md")
    assert shown.code == 0
    assert "error: malformed YAML frontmatter" in shown.out
    assert shown.out.endswith("\n" + text)
    data = cli("--vault", str(vault_dir), "show", "memories/broken.md", "--json").json()
    assert data["raw"] == text


def test_memoryctl_with_no_command_is_memoryctl_tui_with_the_options_given(tmp_path):
    # `memoryctl --vault X` opens the TUI on X, as `memoryctl tui` does (it failed with
    # an AttributeError: the TUI's own defaults were never read).
    from memoryctl.cli.maintenance import cmd_tui
    from memoryctl.cli.parser import parsed

    for argv, vault in (([], None), (["--vault", str(tmp_path)], str(tmp_path))):
        args = parsed(argv)
        assert args.func is cmd_tui
        assert (args.screen, args.path, args.vault) == ("vault", None, vault)
