"""Reordering pins rewrites only their order: every memory keeps its date and its id."""

from __future__ import annotations

import os
from pathlib import Path

from memoryctl.actions import reorder_pins
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault

HAND_WRITTEN_MTIME = 1_700_000_000  # 2023-11-14T22:13:20Z


def hand_written_pin(vault_dir: Path, name: str, title: str) -> Path:
    """A pin written by hand: no id and no `created`, so its date is its mtime."""
    path = vault_dir / "memories" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {title}\npinned: true\n---\n{title}.\n", encoding="utf-8")
    os.utime(path, (HAND_WRITTEN_MTIME, HAND_WRITTEN_MTIME))
    return path


def test_reordering_pins_keeps_a_hand_written_pin_as_old_as_it_was(vault_dir: Path) -> None:
    first = hand_written_pin(vault_dir, "first", "Use tabs")
    second = hand_written_pin(vault_dir, "second", "Answer in French")
    vault = Vault(vault_dir)
    before = {m.path: (m.id, m.created) for m in vault.index.pins()}
    assert {created for _, created in before.values()} == {"2023-11-14T22:13:20Z"}

    pins = reorder_pins(vault, [before["memories/second.md"][0], before["memories/first.md"][0]])

    assert [m.path for m in pins] == ["memories/second.md", "memories/first.md"]
    assert {m.path: (m.id, m.created) for m in pins} == before
    for path in (first, second):
        data = notefile.parse_bytes(path.read_bytes()).data
        assert data["created"] is not None and "id" in data  # written down, as every write does
