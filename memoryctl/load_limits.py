"""What each agent loads of the file memoryctl exports to, and what it would leave out.

Agents read their instruction files only up to a limit, and say nothing about the rest:

- Codex reads AGENTS.md files up to `project_doc_max_bytes`, 32 KiB by default, for
  all of them together (developers.openai.com/codex/guides/agents-md).
- Claude Code loads the first 200 lines or 25 KB of an auto-memory `MEMORY.md`,
  whichever comes first (code.claude.com/docs/en/memory). memoryctl counts 25 KB as
  25,000 bytes, so that it warns early rather than late. CLAUDE.md itself is loaded
  whole.

docs/BUNDLE.md lists the same limits and their sources.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    tool: str
    file: str
    max_bytes: int | None
    max_lines: int | None

    def describe(self) -> str:
        parts = []
        if self.max_lines:
            parts.append(f"{self.max_lines} lines")
        if self.max_bytes:
            parts.append(f"{self.max_bytes:,} bytes")
        return f"{self.tool} reads the first {' or '.join(parts)} of {self.file}"


LIMITS = {
    "AGENTS.md": Limit("Codex", "AGENTS.md", 32 * 1024, None),
    "MEMORY.md": Limit("Claude Code", "MEMORY.md", 25_000, 200),
}


@dataclass(frozen=True)
class Load:
    """What one tool loads of one file's text."""

    limit: Limit
    total_bytes: int
    total_lines: int
    kept_bytes: int
    kept_lines: int
    cut_lines: tuple[str, ...]  # the lines of memoryctl's block that it never reads

    @property
    def is_cut(self) -> bool:
        return self.kept_bytes < self.total_bytes

    def message(self) -> str:
        size = f"{self.total_bytes:,} bytes, {self.total_lines} lines"
        if not self.is_cut:
            return f"{self.limit.describe()}: all of it is loaded ({size})"
        entries = [line for line in self.cut_lines if line.startswith("- ")]
        lost = (
            f"{len(self.cut_lines)} lines of the memory block"
            + (f" ({len(entries)} memories, from {entries[0][:60]!r})" if entries else "")
            if self.cut_lines
            else "none of the memory block, only the file's own text"
        )
        return f"{self.limit.describe()}: the file has {size}, so it would cut {lost}"


def what_is_loaded(name: str, text: str, block: str | None = None) -> Load | None:
    """What the tool that reads a file called `name` loads of `text`; None when no tool
    is known to cut that file. `block` is memoryctl's part of the text, if it has one."""
    limit = LIMITS.get(name)
    if limit is None:
        return None
    data = text.encode("utf-8")
    lines = text.splitlines(keepends=True)
    kept = len(data) if limit.max_bytes is None else min(len(data), limit.max_bytes)
    if limit.max_lines is not None and len(lines) > limit.max_lines:
        kept = min(kept, len("".join(lines[: limit.max_lines]).encode("utf-8")))
    start = 0
    if block is not None:
        block = block.replace("\n", "\r\n") if "\r\n" in text and "\r\n" not in block else block
        found = text.find(block)
        start = len(text[:found].encode("utf-8")) if found >= 0 else len(data)
        part = block if found >= 0 else ""
    else:
        part = text
    cut = []
    offset = start
    for line in part.splitlines(keepends=True):
        size = len(line.encode("utf-8"))
        if offset + size > kept:
            cut.append(line.rstrip("\r\n"))
        offset += size
    kept_lines = len(data[:kept].decode("utf-8", errors="ignore").splitlines())
    return Load(limit, len(data), len(lines), kept, kept_lines, tuple(cut))
