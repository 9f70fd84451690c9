"""What opening a vault costs when nothing changed: no live checks are loaded, and the
git config is read once per process, yet a change is still seen at once.

Each story runs memoryctl in a process of its own, as a person's shell does.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from review_helpers import write_note


def run_python(code: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_a_command_on_an_unchanged_vault_loads_no_live_checks(sample_dir, cli):
    cli("--vault", str(sample_dir), "review")  # the first command checks everything
    *_, loaded = run_python(
        f"""
        import sys
        from memoryctl.cli import main
        main(["--vault", {str(sample_dir)!r}, "search", "Lisbon"])
        print("memoryctl.live_checks" in sys.modules)
        """
    )
    assert loaded == "False"


def test_a_command_after_an_edit_still_runs_the_live_checks(sample_dir, cli):
    cli("--vault", str(sample_dir), "review")
    write_note(
        sample_dir,
        "memories/personal/home/lives-in-braga.md",
        "brag4c1ty0",
        "Lives in Braga",
        created="2026-11-01T09:00:00Z",
        subject="user",
        predicate="lives_in",
        value="Braga",
    )
    result = cli("--vault", str(sample_dir), "search", "Braga")
    assert "new proposals to review" in result.err


def test_the_git_config_is_read_once_per_process_while_it_is_unchanged(sample_dir):
    config = Path(sample_dir) / ".git" / "config"
    reads = run_python(
        f"""
        import sys
        from pathlib import Path
        from memoryctl.storage.vault import Vault

        config = {str(config)!r}
        opened = []
        sys.addaudithook(
            lambda event, args: opened.append(1)
            if event == "open" and str(args[0]) == config
            else None
        )
        for _ in range(3):
            vault = Vault(Path({str(sample_dir)!r}))
            vault.index
            vault.close()
        print(len(opened))
        """
    )
    assert reads == ["1"]


def test_a_python_gone_from_the_git_config_is_repaired_in_the_same_process(sample_dir):
    """The config is read again once it changed, so a long-running face that opens the
    vault again still repairs it."""
    config = Path(sample_dir) / ".git" / "config"
    notices = run_python(
        f"""
        from pathlib import Path
        from memoryctl.storage.vault import Vault

        root, config = Path({str(sample_dir)!r}), Path({str(config)!r})
        vault = Vault(root)
        vault.index
        print(any("is gone" in n for n in vault.notices))
        vault.close()
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace({sys.executable!r}, "/no/such/python"), encoding="utf-8")
        vault = Vault(root)
        vault.index
        print(any("/no/such/python is gone" in n for n in vault.notices))
        """
    )
    assert notices == ["False", "True"]
