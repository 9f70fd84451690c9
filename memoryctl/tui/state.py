"""What the TUI remembers between runs: the theme the person chose last.

It is kept as JSON in the user's state folder. A file that cannot be read is reported
and left as it is; the app then starts with its default theme.
"""

from __future__ import annotations

import json
from pathlib import Path

STATE_FILE = "tui.json"


def state_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("memoryctl")) / STATE_FILE


def read_state(path: Path) -> tuple[dict[str, object], str | None]:
    """The saved state, and why it could not be read (None when it could, or is absent)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return {}, f"{path}: {error}"
    if not isinstance(data, dict):
        return {}, f"{path}: not a JSON object"
    return data, None


def saved_theme(path: Path) -> tuple[str | None, str | None]:
    """The theme chosen last, if any, and why the state could not be read."""
    data, problem = read_state(path)
    theme = data.get("theme")
    return (theme if isinstance(theme, str) else None), problem


def save_theme(path: Path, theme: str) -> str | None:
    """Remember the theme; the reason it was not saved, or None. A state file that cannot
    be read is not overwritten: it may be someone's, or hold more than this."""
    from memoryctl.storage.atomic import ChangedOnDisk, current_sha, write_atomic

    data, problem = read_state(path)
    if problem:
        return problem
    if data.get("theme") == theme:
        return None
    before = current_sha(path)
    text = json.dumps({**data, "theme": theme}, indent=2, sort_keys=True) + "\n"
    try:
        write_atomic(path, text.encode("utf-8"), before)
    except (OSError, ChangedOnDisk) as error:
        return str(error)
    return None
