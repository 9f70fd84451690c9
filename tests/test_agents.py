"""Agent identities: tokens only in the keyring, shown once, revoked at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from memoryctl.mcp import agents
from memoryctl.mcp.view import AgentRefused
from memoryctl.mcp.writes import WriteGate, writes_per_minute
from memoryctl.storage.config import ConfigError, load_config

PROFILES = """
[profiles.work]
namespaces = ["work"]
"""


@pytest.fixture
def vault(vault_dir: Path) -> Path:
    with open(vault_dir / "memoryctl.toml", "a", encoding="utf-8") as handle:
        handle.write(PROFILES)
    return vault_dir


@pytest.fixture
def no_keyring():
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(before)


def files_containing(folder: Path, needle: bytes) -> list[Path]:
    found = []
    for base, _, names in os.walk(folder):
        for name in names:
            path = Path(base) / name
            if needle in path.read_bytes():
                found.append(path)
    return found


def test_adding_an_agent_prints_its_token_once_and_keeps_it_only_in_the_keyring(vault, cli):
    added = cli("agents", "add", "claude", "--profile", "work", "--vault", str(vault), "--json")
    assert added.code == 0, added.err
    token = added.json()["token"]
    assert len(token) >= 40
    assert added.json()["profile"] == "work"

    listed = cli("agents", "list", "--vault", str(vault))
    assert "claude" in listed.out and "work" in listed.out
    assert token not in listed.out + listed.err
    assert keyring.get_password("memoryctl", f"{agents.vault_key(vault)}:claude") == token
    identities = agents.identities_path().read_text(encoding="utf-8")
    assert token not in identities and "claude" in identities


def test_no_token_is_written_under_the_vault_or_the_index_folder(vault, cli):
    cli("reindex", "--vault", str(vault))
    tokens = [
        cli("agents", "add", name, "-p", "work", "--vault", str(vault), "--json").json()["token"]
        for name in ("one", "two")
    ]
    index_folder = Path(os.environ["MEMORYCTL_CACHE_DIR"])
    assert index_folder.is_dir()
    history = subprocess.run(
        ["git", "log", "--all", "-p"], cwd=vault, capture_output=True, text=True
    ).stdout
    for token in tokens:
        assert files_containing(vault, token.encode()) == []
        assert files_containing(index_folder, token.encode()) == []
        assert token not in history


def test_a_token_is_valid_until_the_agent_is_revoked(vault):
    created = agents.add_agent(vault, "cursor", "work")
    assert agents.authenticate(vault, created.token) == created.agent
    assert agents.authenticate(vault, created.token + "x") is None
    assert agents.authenticate(vault, "") is None
    assert agents.authenticate(vault, "é" * 43) is None
    assert agents.authenticate(vault, "x" * 100_000) is None

    agents.revoke_agent(vault, "cursor")
    assert agents.authenticate(vault, created.token) is None
    assert agents.list_agents(vault) == []
    assert keyring.get_password("memoryctl", f"{agents.vault_key(vault)}:cursor") is None


def test_a_server_remembers_a_verified_token_only_until_the_agent_is_revoked(vault):
    made = agents.add_agent(vault, "cursor", "work")
    tokens = agents.VerifiedTokens(vault)
    assert tokens.authenticate(made.token) == made.agent
    assert tokens.remembered(made.token) == made.agent
    assert tokens.remembered("not-" + made.token) is None
    agents.revoke_agent(vault, "cursor")
    assert tokens.remembered(made.token) is None
    assert tokens.authenticate(made.token) is None


def test_a_token_deleted_from_the_keyring_behind_memoryctls_back_fails_within_the_minute(vault):
    made = agents.add_agent(vault, "cursor", "work")
    tokens = agents.VerifiedTokens(vault)
    assert tokens.authenticate(made.token) == made.agent
    keyring.delete_password(agents.SERVICE, f"{agents.vault_key(vault)}:cursor")
    assert tokens.authenticate(made.token) == made.agent  # remembered, within the minute
    tokens.TTL = 0.0
    assert tokens.authenticate(made.token) is None


def test_two_agents_tokens_are_not_interchangeable(vault):
    one = agents.add_agent(vault, "one", "work")
    two = agents.add_agent(vault, "two", "default")
    assert agents.authenticate(vault, one.token).name == "one"
    assert agents.authenticate(vault, two.token).profile == "default"


def test_an_agent_of_one_vault_has_no_standing_in_another(vault, tmp_path, cli):
    other = tmp_path / "other"
    cli("init", str(other))
    created = agents.add_agent(vault, "claude", "work")
    assert agents.authenticate(other, created.token) is None
    assert agents.list_agents(other) == []


def test_agent_names_profiles_and_duplicates_are_checked(vault, cli):
    assert cli("agents", "add", "Bad Name", "-p", "work", "--vault", str(vault)).code == 1
    missing = cli("agents", "add", "ok", "-p", "nope", "--vault", str(vault))
    assert missing.code == 1 and "valid profiles: default, work" in missing.err
    assert cli("agents", "add", "ok", "-p", "work", "--vault", str(vault)).code == 0
    again = cli("agents", "add", "ok", "-p", "work", "--vault", str(vault))
    assert again.code == 1 and "already exists" in again.err
    gone = cli("agents", "revoke", "nobody", "--vault", str(vault))
    assert gone.code == 1 and "no agent named 'nobody'" in gone.err


def test_revoking_prints_a_confirmation_and_lists_nothing(vault, cli):
    cli("agents", "add", "claude", "-p", "work", "--vault", str(vault))
    revoked = cli("agents", "revoke", "claude", "--vault", str(vault))
    assert revoked.code == 0 and "next request" in revoked.out
    assert cli("agents", "list", "--vault", str(vault), "--json").json() == []


def test_without_a_keyring_the_user_is_told_which_backends_to_install(vault, cli, no_keyring):
    result = cli("agents", "add", "claude", "-p", "work", "--vault", str(vault))
    assert result.code == 1
    assert "keyrings.alt" in result.err and "Secret Service" in result.err
    assert agents.list_agents(vault) == []  # nothing half-created


def test_a_keyring_that_goes_away_fails_token_checks_loudly(vault):
    created = agents.add_agent(vault, "claude", "work")
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        with pytest.raises(agents.KeyringUnavailable, match=r"keyrings\.alt"):
            agents.authenticate(vault, created.token)
    finally:
        keyring.set_keyring(before)


def test_a_broken_identities_file_is_reported_not_overwritten(vault, cli):
    path = agents.identities_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    result = cli("agents", "list", "--vault", str(vault))
    assert result.code == 1 and "agents.json" in result.err
    assert path.read_text(encoding="utf-8") == "{not json"


def test_the_identities_file_is_private_to_the_user(vault):
    agents.add_agent(vault, "claude", "work")
    assert agents.identities_path().stat().st_mode & 0o077 == 0
    data = json.loads(agents.identities_path().read_text(encoding="utf-8"))
    assert list(data["vaults"]) == [os.path.realpath(vault)]


def test_the_agent_is_read_back_from_a_memory_source():
    ref = agents.source_ref_for("claude-code", "chat about the move")
    assert ref == "agent claude-code: chat about the move"
    assert agents.agent_of("inference", ref) == "claude-code"
    assert agents.agent_of("inference", "agent cursor") == "cursor"
    assert agents.agent_of("user", ref) is None
    assert agents.agent_of("inference", "weekly consolidation by the personal agent") is None


# --- the write gate ---------------------------------------------------------------------


def test_each_agent_gets_its_own_writes_a_minute():
    now = [0.0]
    gate = WriteGate(3, clock=lambda: now[0])
    for _ in range(3):
        gate.admit("a")
    with pytest.raises(AgentRefused, match=r"3 writes a minute.*Try again in 61 s"):
        gate.admit("a")
    gate.admit("b")  # another agent is not held up
    now[0] = 30.0
    with pytest.raises(AgentRefused, match="Try again in 31 s"):
        gate.admit("a")
    now[0] = 60.0
    gate.admit("a")


ADMIT_ONE = """
import sys
from pathlib import Path
from memoryctl.mcp.view import AgentRefused
from memoryctl.mcp.writes import WriteGate
try:
    WriteGate(2, ledger=Path(sys.argv[1])).admit("a")
except AgentRefused as refused:
    print(refused)
else:
    print("admitted")
"""


def test_the_writes_a_minute_hold_across_an_http_servers_worker_processes(tmp_path):
    # Each worker process keeps its own gate; the ledger beside the index is the count.
    ledger = tmp_path / "agent-writes.sqlite3"

    def in_another_process() -> str:
        done = subprocess.run(
            [sys.executable, "-c", ADMIT_ONE, str(ledger)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    WriteGate(2, ledger=ledger).admit("a")
    assert in_another_process() == "admitted"
    assert "2 writes a minute" in in_another_process()
    with pytest.raises(AgentRefused, match="2 writes a minute"):
        WriteGate(2, ledger=ledger).admit("a")
    WriteGate(2, ledger=ledger).admit("b")  # another agent is not held up


def test_writes_per_minute_comes_from_memoryctl_toml(tmp_path):
    (tmp_path / "memoryctl.toml").write_text("[mcp]\nwrites_per_minute = 5\n", encoding="utf-8")
    assert writes_per_minute(load_config(tmp_path)) == 5
    (tmp_path / "memoryctl.toml").write_text("", encoding="utf-8")
    assert writes_per_minute(load_config(tmp_path)) == 30
    (tmp_path / "memoryctl.toml").write_text('[mcp]\nwrites_per_minute = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="writes_per_minute"):
        writes_per_minute(load_config(tmp_path))


def test_zero_writes_a_minute_stops_agent_writes():
    with pytest.raises(AgentRefused, match="accepts no writes from agents"):
        WriteGate(0).admit("a")


def test_an_agent_proposing_for_a_retired_memory_is_told_only_the_user_restores_it(sample_dir, cli):
    from memoryctl.mcp.view import Caller
    from memoryctl.mcp.writes import propose
    from memoryctl.storage.vault import Vault

    retired = cli("--vault", str(sample_dir), "retire", "vvtwsb0afj", "--reason", "Helix now")
    assert retired.code == 0, retired.err
    vault = Vault(sample_dir)
    caller = Caller("work-agent", vault.config.profile("default"))
    gate = WriteGate(1)
    for action, body in (("retire", None), ("review", None), ("replace", "Helix, since 2026.")):
        with pytest.raises(AgentRefused) as refused:
            propose(vault, caller, action, "vvtwsb0afj", "stale", body, gate)
        assert str(refused.value) == "vvtwsb0afj is already retired; only the user can restore it"
    # None of the refusals counted as a write: the one write a minute is still there.
    made = propose(vault, caller, "review", "hafbhwmj2s", "moved to Porto?", None, gate)
    assert made.new and made.proposal.action == "needs_review"
