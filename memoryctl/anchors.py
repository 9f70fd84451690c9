"""Code anchors: a memory points at the files and symbols it describes, and a check
against the current repository says when that code moved on.

An anchor is `{path, symbol?, sha?}`, its path relative to the code repository. It
breaks when the file is gone, when the symbol no longer appears in it, or, when a
`sha` was recorded, when the file's content changed. A broken anchor proposes
`needs_review` for its memory, saying what changed; nothing is retired or rewritten.
Paths that would leave the repository (`../../etc/passwd`, an absolute path, a symlink
out of it) are refused and never read.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memoryctl.memory import Anchor, Memory
from memoryctl.proposals import Suggestion
from memoryctl.storage.vault import Vault, VaultError

# An anchor's sha is the start of the SHA-256 of the file's bytes; any prefix of at
# least 7 hex digits is compared, and memoryctl writes this many.
SHA_DIGITS = 16
MIN_SHA_DIGITS = 7
_NAME = re.compile(r"\w+")


class AnchorPathError(VaultError):
    """An anchor path that is not a plain path inside the repository."""


def normalize_anchor_path(path: str) -> str:
    """The anchor path in its one written form, or AnchorPathError if it leaves the repo."""
    text = path.strip().replace("\\", "/")
    if not text:
        raise AnchorPathError("an anchor needs a path")
    if text.startswith("/") or re.match(r"[A-Za-z]:", text):
        raise AnchorPathError(
            f"anchor path {path!r} is absolute; give a path relative to the repository"
        )
    normal = posixpath.normpath(text)
    if normal in (".", "..") or normal.startswith("../"):
        raise AnchorPathError(f"anchor path {path!r} escapes the repository; refused")
    return normal


def content_sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha_matches(recorded: str, current: str) -> bool:
    recorded = recorded.strip().lower()
    if len(recorded) < MIN_SHA_DIGITS:
        return recorded == current
    return current.startswith(recorded)


def spec(anchor: Anchor) -> str:
    return anchor.path + (f"#{anchor.symbol}" if anchor.symbol else "")


# --- checking ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RepoFile:
    sha: str  # full SHA-256 hex of the bytes
    names: frozenset[str]  # every word (identifier) in the text


class RepoView(Protocol):
    """What a check needs from a repository (a dict-backed fake will do in tests)."""

    def file(self, path: str) -> RepoFile | None:
        """The file at a normalized path, None if there is none; AnchorPathError if the
        path leads out of the repository."""
        ...


def symbol_present(symbol: str, names: frozenset[str]) -> bool:
    """`publish`, `RegistryClient.push` or `Client::push`: every name in it appears."""
    parts = _NAME.findall(symbol)
    return bool(parts) and all(part in names for part in parts)


@dataclass(frozen=True)
class AnchorBreak:
    anchor: Anchor
    kind: str  # "missing", "symbol", "changed" or "refused"
    detail: str
    current_sha: str | None = None

    @property
    def trigger(self) -> str:
        suffix = f":{self.current_sha[:SHA_DIGITS]}" if self.current_sha else ""
        return f"{spec(self.anchor)}:{self.kind}{suffix}"


def anchor_breaks(memory: Memory, repo: RepoView) -> list[AnchorBreak]:
    """What no longer holds of this memory's anchors, in the order they are written."""
    found = []
    for anchor in memory.anchors:
        try:
            path = normalize_anchor_path(anchor.path)
            state = repo.file(path)
        except AnchorPathError as error:
            found.append(AnchorBreak(anchor, "refused", str(error)))
            continue
        if state is None:
            found.append(AnchorBreak(anchor, "missing", f"{path} no longer exists"))
            continue
        if anchor.symbol and not symbol_present(anchor.symbol, state.names):
            found.append(
                AnchorBreak(anchor, "symbol", f"{anchor.symbol} no longer appears in {path}")
            )
        if anchor.sha and not sha_matches(anchor.sha, state.sha):
            found.append(
                AnchorBreak(
                    anchor,
                    "changed",
                    f"{path} changed since the anchor was recorded "
                    f"(sha {anchor.sha[:MIN_SHA_DIGITS]}, now {state.sha[:MIN_SHA_DIGITS]})",
                    state.sha,
                )
            )
    return found


@dataclass(frozen=True)
class AnchorReport:
    suggestions: list[Suggestion]
    refused: list[tuple[Memory, AnchorBreak]]
    checked: int  # memories with anchors that were checked
    anchors: int


def anchor_suggestions(memories: Iterable[Memory], repo: RepoView) -> AnchorReport:
    """A needs_review proposal for each memory (not retired) whose anchors broke.

    A refused path is reported, not proposed: it says nothing about the code.
    """
    suggestions = []
    refused = []
    checked = anchors = 0
    for memory in memories:
        if memory.status == "retired" or memory.broken or not memory.anchors:
            continue
        checked += 1
        anchors += len(memory.anchors)
        breaks = anchor_breaks(memory, repo)
        refused += [(memory, b) for b in breaks if b.kind == "refused"]
        real = [b for b in breaks if b.kind != "refused"]
        if not real:
            continue
        suggestions.append(
            Suggestion(
                action="needs_review",
                targets=(memory.id,),
                reason="; ".join(b.detail for b in real),
                origin="anchor",
                ref=", ".join(dict.fromkeys(spec(b.anchor) for b in real)),
                trigger=";".join(b.trigger for b in real),
            )
        )
    return AnchorReport(suggestions, refused, checked, anchors)


# --- the repository on disk ---------------------------------------------------------------


class RepoFiles:
    """A code repository's files, each read at most once."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise VaultError(f"the code repository {root} is not a folder")
        self.root = Path(os.path.realpath(root))
        self._files: dict[str, RepoFile | None] = {}

    def file(self, path: str) -> RepoFile | None:
        if path in self._files:
            return self._files[path]
        real = os.path.realpath(self.root / path)
        if os.path.commonpath([real, self.root]) != str(self.root):
            raise AnchorPathError(f"anchor path {path!r} leads outside the repository; refused")
        try:
            with open(real, "rb") as handle:
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            state = None
        else:
            text = data.decode("utf-8", errors="replace")
            state = RepoFile(content_sha(data), frozenset(_NAME.findall(text)))
        self._files[path] = state
        return state


class NoCodeRepository(VaultError):
    """Neither the caller nor memoryctl.toml names the code repository to check against."""

    def __init__(self) -> None:
        super().__init__("no code repository: set repo under [anchors] in memoryctl.toml")


def repo_root(vault_root: Path, configured: str | None, explicit: str | None) -> Path:
    """The repository the caller names (relative to the current folder), else
    `[anchors] repo` (relative to the vault)."""
    if explicit:
        path = Path(explicit).expanduser()
    elif configured:
        path = vault_root / Path(configured).expanduser()
    else:
        raise NoCodeRepository()
    if not path.is_dir():
        raise VaultError(f"the code repository {path} is not a folder")
    return path.resolve()


def anchor_for(repo: RepoFiles, text: str) -> Anchor:
    """An anchor to PATH or PATH#SYMBOL as the code is now, with the file's hash."""
    path, _, symbol = text.partition("#")
    path = normalize_anchor_path(path)
    symbol = symbol.strip()
    state = repo.file(path)
    if state is None:
        raise VaultError(f"{path} is not a file in the repository {repo.root}")
    if symbol and not symbol_present(symbol, state.names):
        raise VaultError(f"{symbol} does not appear in {path}; check the name")
    return Anchor(path=path, symbol=symbol or None, sha=state.sha[:SHA_DIGITS])


def with_anchor(anchors: Iterable[Anchor], new: Anchor) -> list[Anchor]:
    """The anchors with `new` added, or in place of the one with the same path and symbol."""
    current = list(anchors)

    def same(anchor: Anchor) -> bool:
        try:
            path = normalize_anchor_path(anchor.path)
        except AnchorPathError:
            return False
        return (path, anchor.symbol or None) == (new.path, new.symbol)

    for position, anchor in enumerate(current):
        if same(anchor):
            return [*current[:position], new, *(a for a in current[position + 1 :] if not same(a))]
    return [*current, new]


def anchor_memory(vault: Vault, ref: str, text: str, repo: Path) -> tuple[Memory, Anchor]:
    """Point a memory at PATH or PATH#SYMBOL as the code is now (with the file's hash).

    An anchor with the same path and symbol is replaced, so anchoring again after
    checking the code records the current content."""
    memory = vault.resolve(ref)
    anchor = anchor_for(RepoFiles(repo), text)
    loaded = vault.load(memory)
    anchors = with_anchor(loaded.memory.anchors, anchor)
    message = f"Anchor {memory.title} to {spec(anchor)}\n\nmemory: {memory.id}\nsha: {anchor.sha}"
    updated = vault.write(loaded, {"anchors": [a.as_dict() for a in anchors]}, message)
    return updated, anchor
