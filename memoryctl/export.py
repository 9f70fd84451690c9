"""Writing a bundle to the file an agent reads, without touching anything else in it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryctl.bundle import Bundle
from memoryctl.bundle_formats import BEGIN, END, marked_block, render
from memoryctl.storage.atomic import ChangedOnDisk, current_sha, write_atomic

DEFAULT_PATHS = {
    "agents-md": "AGENTS.md",
    "claude-md": "CLAUDE.md",
    "cursor-rules": ".cursor/rules/memoryctl.mdc",
}
_BEGIN_PREFIX = BEGIN.split(" (")[0]


class ExportError(Exception):
    pass


def inject(existing: str | None, block: str) -> str:
    """Put the marked block into a document: in place of the old one, or at the end.

    Only the text between (and including) the markers changes. A document whose markers
    are broken is refused, since guessing could delete the person's own text.
    """
    if not existing:
        return block + "\n"
    lines = existing.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.lstrip().startswith(_BEGIN_PREFIX)]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if not begins and not ends:
        separator = "" if existing.endswith("\n") else "\n"
        return existing + separator + "\n" + block + "\n"
    if len(begins) != 1 or len(ends) != 1:
        raise ExportError(
            f"found {len(begins)} opening and {len(ends)} closing memoryctl markers; "
            "expected one pair. Fix the markers by hand (or remove them) and export again"
        )
    start, end = begins[0], ends[0]
    if end < start:
        raise ExportError("the closing memoryctl marker comes before the opening one")
    newline = "\r\n" if lines[end].endswith("\r\n") else "\n" if lines[end].endswith("\n") else ""
    return "".join(lines[:start]) + block + newline + "".join(lines[end + 1 :])


def safe_path(out: str, cwd: Path) -> Path:
    """The export target, which must stay inside the current folder."""
    target = Path(os.path.realpath(cwd / out))
    base = Path(os.path.realpath(cwd))
    if target != base and base not in target.parents:
        raise ExportError(f"{out} is outside the current folder; export inside {base}")
    if target.is_dir():
        raise ExportError(f"{out} is a folder; give a file name")
    if target.exists() and not os.access(target, os.W_OK):
        raise ExportError(f"cannot write {out}: permission denied")
    # The new text goes to a temporary file beside the target, which then replaces it:
    # the folder (or the nearest one that exists, where it will be made) must be writable.
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    if not os.access(folder, os.W_OK):
        raise ExportError(f"cannot write {out}: permission denied on the folder {folder}")
    return target


@dataclass(frozen=True)
class Written:
    path: Path
    changed: bool


def export(
    bundle: Bundle,
    fmt: str,
    out: str | None,
    cwd: Path,
    *,
    refuse: Callable[[Path], str | None] | None = None,
) -> Written | str:
    """Write the bundle for `fmt`; markdown and json without --out return the text.

    `refuse` may veto a target with a reason (the CLI refuses a file the vault would
    then read as a memory, which would feed the bundle back into itself).
    """
    if out is None and fmt not in DEFAULT_PATHS:
        return render(bundle, fmt)
    target = safe_path(out or DEFAULT_PATHS[fmt], cwd)
    reason = refuse(target) if refuse else None
    if reason:
        raise ExportError(reason)
    before = current_sha(target)
    old_text = None
    if before is not None:
        try:
            old_text = target.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise ExportError(f"{target} is not UTF-8 text; not touched") from None
    if fmt in ("agents-md", "claude-md"):
        try:
            text = inject(old_text, marked_block(bundle))
        except ExportError as error:
            raise ExportError(f"{out or DEFAULT_PATHS[fmt]}: {error}; not touched") from None
    else:
        text = render(bundle, fmt)
    if text == old_text:
        return Written(target, changed=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_atomic(target, text.encode("utf-8"), before)
    except ChangedOnDisk as error:
        raise ExportError(str(error)) from None
    return Written(target, changed=True)
