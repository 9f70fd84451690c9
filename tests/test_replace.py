"""Replace in place: the stale note gets the new text in the same file, with the same
id; git keeps the old text, and a `replaced` entry names the commit that holds it.
No second note is written beside the old one (seed 001, on refactoring).
"""

from __future__ import annotations

import sys
from pathlib import Path

from review_helpers import git, status, subjects

from memoryctl.storage import notefile

SETTINGS = "vwv5e7kgqv"  # "Where release settings come from"
SETTINGS_PATH = "memories/work/ufo-hosted/release-settings.md"
NEW_TEXT = "Release settings come only from UFO_HOSTED_* environment variables now."


def v(root: Path) -> tuple[str, str]:
    return ("--vault", str(root))


def md_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "memories").rglob("*.md"))


def test_replacing_keeps_the_file_and_its_id_and_git_keeps_the_old_text(sample_dir, cli):
    path = sample_dir / SETTINGS_PATH
    old = path.read_text()
    files = md_files(sample_dir)
    result = cli(*v(sample_dir), "replace", SETTINGS, NEW_TEXT, "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["memory"]["id"] == SETTINGS and data["memory"]["path"] == SETTINGS_PATH
    assert md_files(sample_dir) == files  # nothing beside it
    note = notefile.parse_bytes(path.read_bytes())
    assert note.body.strip() == NEW_TEXT
    assert note.data["id"] == SETTINGS
    assert str(note.data["updated"]).startswith(data["proposal"]["created"][:10])
    assert note.data["checked"] == note.data["updated"]
    [entry] = note.data["replaced"]
    assert entry["proposal"] == data["proposal"]["id"]
    # The commit it names holds the previous text, byte for byte.
    assert git(sample_dir, "show", f"{entry['commit']}:{SETTINGS_PATH}") == old
    assert subjects(sample_dir)[0] == "Replace Where release settings come from"
    assert status(sample_dir) == ""
    history = cli(*v(sample_dir), "history", SETTINGS)
    assert "-Release settings are read from the `[release]` table" in history.out
    shown = cli(*v(sample_dir), "show", SETTINGS)
    assert NEW_TEXT in shown.out and "[release]" not in shown.out


def test_replace_reads_the_new_text_from_stdin_and_can_retitle(sample_dir, cli):
    result = cli(*v(sample_dir), "replace", SETTINGS, "-", "--title", "Env only", stdin=NEW_TEXT)
    assert result.code == 0, result.err
    memory = cli(*v(sample_dir), "show", SETTINGS, "--json").json()
    assert memory["title"] == "Env only" and memory["body"].strip() == NEW_TEXT


def test_replace_and_propose_replace_take_the_new_text_without_quotes_as_add_does(sample_dir, cli):
    words = NEW_TEXT.split()
    result = cli(*v(sample_dir), "replace", SETTINGS, *words)
    assert result.code == 0, result.err
    note = notefile.parse_bytes((sample_dir / SETTINGS_PATH).read_bytes())
    assert note.body.strip() == NEW_TEXT
    retitled = cli(*v(sample_dir), "replace", SETTINGS, "--title", "Env only", *words)
    assert retitled.code == 0, retitled.err
    assert cli(*v(sample_dir), "show", SETTINGS, "--json").json()["title"] == "Env only"
    proposed = cli(
        *v(sample_dir), "propose", "replace", SETTINGS, "Only", "--origin", "user", "the", "file."
    )
    assert proposed.code == 0, proposed.err
    [proposed] = [
        p
        for p in cli(*v(sample_dir), "review", "--json").json()["proposals"]
        if p["action"] == "replace"
    ]
    shown = cli(*v(sample_dir), "review", "show", proposed["id"])
    assert "+Only the file." in shown.out
    added = cli(*v(sample_dir), "add", "Tea", "--kind", "preference", "after lunch", "--json")
    assert added.code == 0, added.err
    assert added.json()["body"].strip() == "Tea after lunch"
    dashed = cli(*v(sample_dir), "add", "--json", "--", "--dry-run", "writes nothing")
    assert dashed.code == 0, dashed.err
    assert dashed.json()["body"].strip() == "--dry-run writes nothing"


def test_replace_in_the_editor(sample_dir, cli, tmp_path, monkeypatch):
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\np = sys.argv[1]\nt = open(p).read().replace('environment variable', "
        "'ENV var')\nopen(p, 'w').write(t)\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    result = cli(*v(sample_dir), "replace", SETTINGS, "--editor")
    assert result.code == 0, result.err
    assert "ENV var overrides" in (sample_dir / SETTINGS_PATH).read_text()
    monkeypatch.setenv("EDITOR", "true")
    unchanged = cli(*v(sample_dir), "replace", SETTINGS, "--editor")
    assert unchanged.out.strip() == "No change."


def test_an_uncommitted_edit_is_committed_first_so_the_replaced_text_is_never_lost(sample_dir, cli):
    path = sample_dir / SETTINGS_PATH
    path.write_text(path.read_text() + "\nA hand-written line nobody committed.\n")
    result = cli(*v(sample_dir), "replace", SETTINGS, NEW_TEXT)
    assert result.code == 0, result.err
    [entry] = notefile.parse_bytes(path.read_bytes()).data["replaced"]
    kept = git(sample_dir, "show", f"{entry['commit']}:{SETTINGS_PATH}")
    assert "A hand-written line nobody committed." in kept
    assert subjects(sample_dir)[:2] == [
        "Replace Where release settings come from",
        "Record an edit of Where release settings come from before replacing it",
    ]


def test_an_approved_replacement_proposal_writes_in_place_and_undo_puts_the_text_back(
    sample_dir, cli
):
    path = sample_dir / SETTINGS_PATH
    old_body = notefile.parse_bytes(path.read_bytes()).body
    pid = cli(*v(sample_dir), "propose", "replace", SETTINGS, NEW_TEXT).out.strip()
    shown = cli(*v(sample_dir), "review", "show", pid)
    assert f"+{NEW_TEXT}" in shown.out and "-Release settings are read from" in shown.out
    assert cli(*v(sample_dir), "review", "approve", pid).code == 0
    assert notefile.parse_bytes(path.read_bytes()).body.strip() == NEW_TEXT
    undone = cli(*v(sample_dir), "review", "undo", pid)
    assert undone.code == 0, undone.err
    note = notefile.parse_bytes(path.read_bytes())
    assert note.body == old_body
    assert [e.get("proposal", e.get("undo_of")) for e in note.data["replaced"]] == [pid, pid]
    assert pid in {p["id"] for p in cli(*v(sample_dir), "review", "--json").json()["proposals"]}


def test_replacing_a_note_held_for_review_puts_it_back_in_context(sample_dir, cli):
    pid = cli(*v(sample_dir), "propose", "review", SETTINGS, "--reason", "CI changed").out.strip()
    cli(*v(sample_dir), "review", "approve", pid)
    assert cli(*v(sample_dir), "show", SETTINGS, "--json").json()["status"] == "needs_review"
    cli(*v(sample_dir), "replace", SETTINGS, NEW_TEXT)
    assert cli(*v(sample_dir), "show", SETTINGS, "--json").json()["status"] == "active"


def test_replace_refuses_what_it_cannot_do(sample_dir, cli):
    same = cli(
        *v(sample_dir),
        "replace",
        SETTINGS,
        "-",
        stdin=(sample_dir / SETTINGS_PATH).read_text().split("---\n", 2)[2],
    )
    assert same.code == 1 and "is the same as its current text" in same.err
    assert cli(*v(sample_dir), "replace", SETTINGS).code == 1
    cli(*v(sample_dir), "retire", SETTINGS, "--reason", "gone")
    retired = cli(*v(sample_dir), "replace", SETTINGS, NEW_TEXT)
    assert retired.code == 1 and "restore it first" in retired.err
