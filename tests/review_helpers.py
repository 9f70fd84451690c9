"""Small helpers shared by the review-queue tests: write memories by hand, read git."""

from __future__ import annotations

import subprocess
from pathlib import Path


def note_text(mid: str, title: str, body: str = "", **keys: object) -> str:
    """A memory file as a person would write it; list values are written as flow lists."""
    lines = ["---", f"id: {mid}", f'title: "{title}"']
    keys.setdefault("created", "2026-06-01T00:00:00Z")
    for key, value in keys.items():
        if isinstance(value, list | tuple):
            value = "[" + ", ".join(str(v) for v in value) + "]"
        lines.append(f"{key}: {value}")
    lines += ["---", "", body or f"{title}.", ""]
    return "\n".join(lines)


def write_note(root: Path, relpath: str, mid: str, title: str, body: str = "", **keys) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note_text(mid, title, body, **keys), encoding="utf-8")
    return path


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def commit_all(root: Path, message: str = "hand-written notes") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def subjects(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def status(root: Path) -> str:
    return git(root, "status", "--porcelain")
