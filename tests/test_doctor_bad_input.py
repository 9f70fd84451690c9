"""Bad `retires` lists and typed facts: each is a clear `doctor` finding naming the
file, never a crash, and never a proposal that comes back round."""

from __future__ import annotations

from test_bundle import edit_frontmatter, path_of, write_memory

HELIX, NEOVIM = "r2qxe7ged0", "vvtwsb0afj"
NOW = "2026-11-30T12:00:00Z"


def v(root) -> tuple[str, str]:
    return ("--vault", str(root))


def findings(cli, root) -> list[dict[str, str]]:
    result = cli(*v(root), "--json", "doctor")
    assert result.code in (0, 1), result.err
    return result.json()


def messages_for(cli, root, relpath: str) -> list[str]:
    return [f["message"] for f in findings(cli, root) if f["path"] == relpath]


def proposed_targets(cli, root) -> list[str]:
    """Every memory a pending proposal is about, after the checks ran on the vault."""
    assert cli(*v(root), "check", "--now", NOW).code == 0
    proposals = cli(*v(root), "review", "--json").json()["proposals"]
    return sorted(t["id"] for p in proposals for t in p["targets"])


def test_a_retires_that_names_a_missing_id_is_reported_with_the_file(sample_dir, cli):
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[vvtwsb0afj, nosuch0001]")
    relpath = "memories/work/preferences/editor-helix.md"
    assert "retires: nosuch0001 is no memory (unreplaced)" in messages_for(cli, sample_dir, relpath)
    assert NEOVIM in proposed_targets(cli, sample_dir)


def test_a_memory_that_retires_itself_is_reported_and_proposes_nothing(sample_dir, cli):
    edit_frontmatter(path_of(sample_dir, HELIX), retires=f"[{HELIX}]")
    relpath = "memories/work/preferences/editor-helix.md"
    assert "retires: names the memory itself; ignored" in messages_for(cli, sample_dir, relpath)
    assert HELIX not in proposed_targets(cli, sample_dir)


def test_a_cycle_of_retires_is_reported_and_never_loops_the_queue(sample_dir, cli):
    edit_frontmatter(path_of(sample_dir, NEOVIM), retires=f"[{HELIX}]")
    relpath = "memories/work/preferences/editor-helix.md"
    [cycle] = [
        f for f in findings(cli, sample_dir) if f["message"].startswith("retires forms a cycle")
    ]
    assert cycle["path"] == relpath  # the cycle is named from its smallest id
    assert f"{HELIX} → {NEOVIM} → {HELIX}" in cycle["message"]
    for _ in range(2):
        targets = proposed_targets(cli, sample_dir)
        assert HELIX not in targets and NEOVIM not in targets
    assert cli(*v(sample_dir), "preview", "--message", "which editor do I use").code == 0


def test_a_typed_fact_with_a_blank_value_is_reported_and_proposes_nothing(sample_dir, cli):
    path = write_memory(
        sample_dir,
        "memories/personal/home/lives-nowhere.md",
        "I live somewhere new.",
        id="blank00001",
        title="Moved again",
        created="2026-11-20T10:00:00Z",
        subject="user",
        predicate="lives_in",
        value='"  "',
    )
    relpath = str(path.relative_to(sample_dir))
    [message] = [m for m in messages_for(cli, sample_dir, relpath) if m.startswith("typed fact")]
    assert message.startswith("typed fact: value is blank;")
    # It replaces neither Lisbon nor Porto.
    assert "aghaak5xqn" not in proposed_targets(cli, sample_dir)


def test_a_typed_fact_with_an_unknown_predicate_is_reported(sample_dir, cli):
    edit_frontmatter(path_of(sample_dir, "brxqnasz8q"), predicate="rides")
    relpath = "memories/personal/bike/owns-road-bike.md"
    [message] = [m for m in messages_for(cli, sample_dir, relpath) if m.startswith("typed fact")]
    assert "predicate 'rides' is not in the predicate registry" in message
    assert "[predicates.NAME] in memoryctl.toml" in message
