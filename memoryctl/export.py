"""Writing a bundle to the file an agent reads, without touching anything else in it."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memoryctl.bundle import Bundle
from memoryctl.bundle_formats import BEGIN, END, marked_block, render
from memoryctl.load_limits import Load, what_is_loaded
from memoryctl.storage.atomic import ChangedOnDisk, current_sha, write_atomic
from memoryctl.storage.config import (
    CONFIG_NAME,
    PROPOSALS_DIR,
    ConfigError,
    VaultConfig,
    load_config,
)
from memoryctl.storage.scan import is_memory_path
from memoryctl.storage.vault import is_vault

DEFAULT_PATHS = {
    "agents-md": "AGENTS.md",
    "claude-md": "CLAUDE.md",
    "gemini-md": "GEMINI.md",
    "cursor-rules": ".cursor/rules/memoryctl.mdc",
}
# The formats that put the marked block into a file the person also writes in.
MARKED = ("agents-md", "claude-md", "gemini-md")
BEGIN_PREFIX = BEGIN.split(" (")[0]
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# Claude Code's import of AGENTS.md from CLAUDE.md: `@AGENTS.md` or `@./AGENTS.md`.
_IMPORTS_AGENTS = re.compile(r"(?:^|\s)@(?:\./)?AGENTS\.md(?=\s|$)")
_CODE_SPAN = re.compile(r"(`+).*?\1")


class ExportError(Exception):
    pass


def outside_code(lines: Sequence[str]) -> list[bool]:
    """For each line: is it outside every fenced code block?

    A marker pair quoted in a fence (a README showing what the block looks like) is the
    owner's text, not the live block.
    """
    outside = []
    fence: str | None = None
    for line in lines:
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                outside.append(False)
                continue
            outside.append(True)
            continue
        outside.append(False)
        closes = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
        if closes and not line[match.end() :].strip():
            fence = None
    return outside


def newline_of(text: str) -> str:
    """The line ending most of the file uses: what memoryctl's block and separator use."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def inject(existing: str | None, block: str) -> str:
    """Put the marked block into a document: in place of the old one, or at the end.

    Only the text between (and including) the markers changes, and the block takes the
    file's line endings. Markers inside a fenced code block are the owner's text. A
    document whose markers are broken is refused, since guessing could delete the
    person's own text.
    """
    if not existing:
        return block + "\n"
    newline = newline_of(existing)
    if newline != "\n":
        block = block.replace("\n", newline)
    lines = existing.splitlines(keepends=True)
    live = outside_code(lines)
    begins = [
        i for i, line in enumerate(lines) if live[i] and line.lstrip().startswith(BEGIN_PREFIX)
    ]
    ends = [i for i, line in enumerate(lines) if live[i] and line.strip() == END]
    if not begins and not ends:
        separator = "" if existing.endswith("\n") else newline
        return existing + separator + newline + block + newline
    if len(begins) != 1 or len(ends) != 1:
        raise ExportError(
            f"found {len(begins)} opening and {len(ends)} closing memoryctl markers; "
            "expected one pair. Fix the markers by hand (or remove them) and export again"
        )
    start, end = begins[0], ends[0]
    if end < start:
        raise ExportError("the closing memoryctl marker comes before the opening one")
    after = "\r\n" if lines[end].endswith("\r\n") else "\n" if lines[end].endswith("\n") else ""
    return "".join(lines[:start]) + block + after + "".join(lines[end + 1 :])


def has_block(text: str) -> bool:
    lines = text.splitlines(keepends=True)
    live = outside_code(lines)
    return any(live[i] and line.lstrip().startswith(BEGIN_PREFIX) for i, line in enumerate(lines))


def imports_agents_md(text: str) -> bool:
    """Does this CLAUDE.md import AGENTS.md? Claude Code ignores imports in code."""
    lines = text.splitlines()
    live = outside_code(lines)
    return any(
        live[i] and _IMPORTS_AGENTS.search(_CODE_SPAN.sub("", line)) for i, line in enumerate(lines)
    )


def owned_target(target: Path) -> str | None:
    """Why a file is not one an agent reads but one memoryctl or git owns, or None.

    Refused: anything under a `.git` folder; and inside a vault (any folder up the tree
    with `memoryctl.toml`) its settings, its `proposals/` and `.memoryctl/` folders, and
    every file it reads as a memory.
    """
    if ".git" in target.parts:
        return "is inside .git/, which git owns and no agent reads"
    root = next((folder for folder in target.parents if is_vault(folder)), None)
    if root is None:
        return None
    relpath = target.relative_to(root).as_posix()
    if relpath == CONFIG_NAME:
        return f"is the settings file of the vault {root}"
    for folder in (PROPOSALS_DIR, ".memoryctl"):
        if relpath.startswith(f"{folder}/"):
            return f"is inside {folder}/ of the vault {root}, which memoryctl owns"
    try:
        config = load_config(root)
    except ConfigError:
        config = VaultConfig()
    if is_memory_path(relpath, config):
        return (
            f"is inside the vault {root} and would be read as a memory, so the next "
            "bundle would recall the last one; add it to [vault] ignore in "
            "memoryctl.toml, or export somewhere else"
        )
    return None


def safe_path(out: str, cwd: Path) -> Path:
    """The export target, which must stay inside the current folder and be a file an
    agent reads (see `owned_target`)."""
    target = Path(os.path.realpath(cwd / out))
    base = Path(os.path.realpath(cwd))
    if target != base and base not in target.parents:
        raise ExportError(f"{out} is outside the current folder; export inside {base}")
    owned = owned_target(target)
    if owned:
        raise ExportError(f"{out} {owned}; nothing was written")
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
    load: Load | None = None  # what the tool that reads the file loads of it
    notes: tuple[str, ...] = ()


def _read(target: Path) -> str | None:
    if current_sha(target) is None:
        return None
    try:
        return target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ExportError(f"{target} is not UTF-8 text; not touched") from None


def _redirect(fmt: str, target: Path, cwd: Path) -> tuple[Path, tuple[str, ...]]:
    """Where the claude-md block goes: into AGENTS.md when CLAUDE.md imports it, so
    Claude Code reads the bundle once."""
    if fmt != "claude-md":
        return target, ()
    text = _read(target)
    if text is None or not imports_agents_md(text):
        return target, ()
    if has_block(text):
        raise ExportError(
            f"{target.name} imports AGENTS.md (@AGENTS.md) and also holds a memoryctl block, "
            "so Claude Code would read the bundle twice; delete the block from "
            f"{target.name} and export again; not touched"
        )
    agents = safe_path(os.path.relpath(target.parent / "AGENTS.md", cwd), cwd)
    note = (
        f"{target.name} imports AGENTS.md (@AGENTS.md), so the bundle goes into "
        f"{agents.name} once, not into both"
    )
    return agents, (note,)


def planned(bundle: Bundle, fmt: str, target: Path) -> tuple[str | None, str]:
    """The file's text now (None when there is none) and the text the export would write."""
    old_text = _read(target)
    if fmt not in MARKED:
        return old_text, render(bundle, fmt)
    try:
        return old_text, inject(old_text, marked_block(bundle))
    except ExportError as error:
        raise ExportError(f"{target}: {error}; not touched") from None


def export(
    bundle: Bundle,
    fmt: str,
    out: str | None,
    cwd: Path,
) -> Written | str:
    """Write the bundle for `fmt`; markdown and json without --out return the text.

    Only a file an agent reads is written (see `owned_target`): never git's files,
    a vault's settings or proposals, or a file a vault would read as a memory, which
    would feed the bundle back into itself.
    """
    if out is None and fmt not in DEFAULT_PATHS:
        return render(bundle, fmt)
    target = safe_path(out or DEFAULT_PATHS[fmt], cwd)
    target, notes = _redirect(fmt, target, cwd)
    before = current_sha(target)
    old_text, text = planned(bundle, fmt, target)
    load = what_is_loaded(target.name, text, marked_block(bundle) if fmt in MARKED else None)
    if text == old_text:
        return Written(target, changed=False, load=load, notes=notes)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_atomic(target, text.encode("utf-8"), before)
    except ChangedOnDisk as error:
        raise ExportError(str(error)) from None
    return Written(target, changed=True, load=load, notes=notes)


# The tool that reads each target, for saying what it loads.
READERS = {
    "agents-md": "Codex",
    "claude-md": "Claude Code",
    "gemini-md": "Gemini CLI",
    "cursor-rules": "Cursor",
}


@dataclass(frozen=True)
class TargetLoad:
    """What one export target's tool will load of its file here, as the export would
    write it: all of it, or up to its limit (`load`)."""

    fmt: str
    tool: str
    file: str  # the file's name
    size: int  # bytes
    lines: int
    load: Load | None = None  # None: the tool is not known to cut the file
    notes: tuple[str, ...] = ()
    error: str | None = None  # why this target cannot be exported here

    @property
    def is_cut(self) -> bool:
        return self.load is not None and self.load.is_cut

    def message(self) -> str:
        if self.error is not None:
            return self.error
        if self.load is not None:
            said = self.load.message()
        else:
            said = f"{self.tool} loads {self.file} whole ({self.size:,} bytes)"
        return "; ".join([*self.notes, said])


def tool_loads(bundle: Bundle, cwd: Path) -> list[TargetLoad]:
    """For each export target in `cwd`: what its tool will load of the file as the
    export would write it (nothing is written)."""
    found = []
    for fmt, reader in READERS.items():
        target = Path(os.path.realpath(cwd / DEFAULT_PATHS[fmt]))
        try:
            target, notes = _redirect(fmt, target, cwd)
            _, text = planned(bundle, fmt, target)
        except ExportError as error:
            found.append(TargetLoad(fmt, reader, target.name, 0, 0, error=str(error)))
            continue
        load = what_is_loaded(target.name, text, marked_block(bundle) if fmt in MARKED else None)
        size, lines = len(text.encode("utf-8")), len(text.splitlines())
        found.append(TargetLoad(fmt, reader, target.name, size, lines, load, notes))
    return found
