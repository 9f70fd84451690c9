"""The person's own editor: `$VISUAL`, else `$EDITOR`, else `vi`, run on one file.

The variable is split the way a shell splits it, so an editor whose path has spaces
works when quoted (`EDITOR='"/Applications/My Editor.app/bin/edit" --wait'`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from memoryctl.storage.vault import VaultError


class EditorNotFound(VaultError):
    def __init__(self, editor: str) -> None:
        self.editor = editor
        super().__init__(f"the editor {editor!r} was not found")


def editor_setting() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"


def editor_command(path: Path, setting: str | None = None) -> list[str]:
    """The command that opens `path` in the editor `setting` names (the environment's
    by default)."""
    setting = setting if setting is not None else editor_setting()
    try:
        words = shlex.split(setting)
    except ValueError:  # an unbalanced quote: take the setting as one path
        words = [setting]
    return [*(words or ["vi"]), str(path)]


def run_editor(path: Path) -> int:
    """Open `path` in the editor and wait for it to close; its exit status."""
    setting = editor_setting()
    try:
        return subprocess.run(editor_command(path, setting)).returncode
    except FileNotFoundError:
        raise EditorNotFound(setting) from None
