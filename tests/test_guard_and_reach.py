"""The guard scales with the vault, and an inactive correction reaches nothing.

A deprecated string that would reach more than a share of the vault (10% by default,
once that is more than 10 memories) or more than the absolute cap asks first: the CLI
needs --force, the TUI asks, MCP refuses. A retired or needs-review correction reaches
no memory, and `reach` and `show` say so.
"""

from __future__ import annotations

import pytest
from test_bundle import edit_frontmatter, path_of

from memoryctl.reach import Guard

CORE_MOVED = "ed8xn3kjds"  # deprecates metalcraftai/ufo
CORE_RENAMED = "q0csfnqc07"  # deprecates ufo-ai/ufo-core, and reaches CORE_MOVED


def v(root) -> tuple[str, str]:
    return ("--vault", str(root))


# --- the guard ---------------------------------------------------------------------------


def test_the_share_of_a_small_vault_has_a_floor_and_the_cap_bounds_a_large_one():
    small = Guard(cap=2000, share=0.1, floor=10, size=45)
    assert small.limit == 10
    assert small.rule(10) is None and small.rule(11) == "share"
    large = Guard(cap=2000, share=0.1, floor=10, size=100_000)
    assert large.limit == 2000
    assert large.rule(2001) == "cap"
    middle = Guard(cap=2000, share=0.1, floor=10, size=5000)
    assert middle.limit == 500 and middle.rule(501) == "share"


def test_deprecating_a_word_that_names_much_of_the_vault_needs_force(sample_dir, cli):
    memories = sample_dir / "memories"
    before = sorted(p.name for p in memories.rglob("*.md"))
    for command in ("correct", "add"):
        refused = cli(*v(sample_dir), command, "UFO is now Saucer.", "--deprecates", "UFO")
        assert refused.code == 1, command
        assert "'UFO' would reach 17 memories" in refused.err
        assert "more than 10% of the vault's 45; the guard is 10" in refused.err
        assert "--force" in refused.err
    assert sorted(p.name for p in memories.rglob("*.md")) == before
    forced = cli(*v(sample_dir), "correct", "UFO is Saucer.", "--deprecates", "UFO", "--force")
    assert forced.code == 0, forced.err
    assert "This correction reaches 17 older memories." in forced.err


def test_a_real_correction_of_the_sample_vault_passes_the_guard(sample_dir, cli):
    result = cli(
        *v(sample_dir), "correct", "GitHub work moved to Forgejo.", "--deprecates", "GitHub"
    )
    assert result.code == 0, result.err
    assert "This correction reaches 8 older memories." in result.err


def test_the_share_and_its_floor_come_from_the_vault_settings(sample_dir, cli):
    config = sample_dir / "memoryctl.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + "\n[corrections]\nguard_share = 0.5\n",
        encoding="utf-8",
    )
    result = cli(*v(sample_dir), "correct", "UFO is Saucer.", "--deprecates", "UFO")
    assert result.code == 0, result.err


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("guard_share = 0", "guard_share must be a number above 0 and at most 1"),
        ("guard_share = 1.5", "guard_share must be a number above 0 and at most 1"),
        ('guard_share = "a tenth"', "guard_share must be a number above 0 and at most 1"),
        ("guard_floor = -1", "guard_floor must be a whole number"),
    ],
)
def test_a_bad_guard_setting_is_a_clear_error(sample_dir, cli, setting, message):
    config = sample_dir / "memoryctl.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + f"\n[corrections]\n{setting}\n", encoding="utf-8"
    )
    result = cli(*v(sample_dir), "correct", "UFO is Saucer.", "--deprecates", "UFO")
    assert result.code == 1
    assert message in result.err and "memoryctl.toml" in result.err


# --- an inactive correction reaches nothing --------------------------------------------------


@pytest.mark.parametrize(
    ("status", "reason"), [("retired", "retired"), ("needs_review", "needs review")]
)
def test_an_inactive_correction_reaches_nothing_and_reach_and_show_say_so(
    sample_dir, cli, status, reason
):
    active = cli(*v(sample_dir), "--json", "reach", CORE_RENAMED).json()
    assert active["active"] is True and active["count"] == 2
    edit_frontmatter(path_of(sample_dir, CORE_RENAMED), status=status)

    data = cli(*v(sample_dir), "--json", "reach", CORE_RENAMED).json()
    assert data["active"] is False and data["inactive"] == reason
    assert data["count"] == 0 and data["reached"] == [] and data["dormant"] == 2
    text = cli(*v(sample_dir), "reach", CORE_RENAMED).out
    assert f"is inactive ({reason}): it reaches no memory" in text

    shown = cli(*v(sample_dir), "show", CORE_RENAMED).out
    assert f"reach: inactive ({reason}): it reaches no memory" in shown
    shown_json = cli(*v(sample_dir), "--json", "show", CORE_RENAMED).json()
    assert shown_json["reach"] == {"active": False, "inactive": reason, "count": 0, "dormant": 2}
    # The memory it reached no longer shows it: the chain ends at the correction before.
    target = cli(*v(sample_dir), "--json", "show", CORE_MOVED).json()
    assert CORE_RENAMED not in [c["id"] for c in target["now"]]


def test_show_gives_an_active_corrections_reach(sample_dir, cli):
    shown = cli(*v(sample_dir), "show", CORE_RENAMED).out
    assert f"reach: 2 older memories (memoryctl reach {CORE_RENAMED})" in shown


# --- over MCP ------------------------------------------------------------------------------


def test_an_agent_is_refused_a_string_over_the_share_of_the_vault(sample_dir):
    from memoryctl.mcp.view import AgentRefused, Caller
    from memoryctl.mcp.writes import AgentMemory, WriteGate, remember
    from memoryctl.storage.vault import Vault

    vault = Vault(sample_dir)
    try:
        caller = Caller("coding-agent", vault.config.profile(None))
        count = vault.index.count()
        with pytest.raises(AgentRefused) as refused:
            remember(
                vault, caller, AgentMemory(body="UFO is Saucer.", deprecates=["UFO"]), WriteGate(60)
            )
        assert "would reach 17 memories, more than 10% of the vault" in str(refused.value)
        assert "Agents cannot override this" in str(refused.value)
        assert vault.index.count() == count
    finally:
        vault.close()
