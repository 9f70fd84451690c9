"""Keeping the index current while files change (an editor, `git pull`, Obsidian)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

from memoryctl.storage.index import SyncReport
from memoryctl.storage.scan import is_memory_path
from memoryctl.storage.vault import Vault


def relevant_paths(vault: Vault, changes: set[tuple[object, str]]) -> list[str]:
    """The vault-relative memory paths in a batch of watchfiles changes, without the
    files this process wrote itself (it indexed them as it wrote them)."""
    paths = []
    for _, absolute in changes:
        try:
            relpath = os.path.relpath(absolute, vault.root).replace(os.sep, "/")
        except ValueError:
            continue
        if not relpath.startswith("..") and is_memory_path(relpath, vault.config):
            paths.append(relpath)
    return sorted(p for p in set(paths) if not _written_here(vault, p))


def _written_here(vault: Vault, relpath: str) -> bool:
    own = vault.own_writes.get(relpath)
    if own is None:
        return False
    try:
        st = os.stat(vault.root / relpath)
    except OSError:
        return False
    return (st.st_size, st.st_mtime_ns) == own


def is_temporary(absolute: str) -> bool:
    """memoryctl's own temporary file (`.NAME.RANDOM.tmp`, see `atomic.write_atomic`),
    or another program's hidden file: never a memory, and never a folder of them."""
    name = os.path.basename(absolute)
    return name.startswith(".") or name.endswith((".tmp", "~"))


def watch_vault(
    vault: Vault,
    stop: threading.Event | None = None,
    debounce_ms: int = 150,
    watching: threading.Event | None = None,
) -> Iterator[tuple[SyncReport, list[str]]]:
    """Re-index changed memory files as they change; yields each batch it handled.

    With `watching`, the event is set as soon as changes are being watched, and the index
    is then synced in full once: a file edited after the caller last synced but before
    the watch began would otherwise stay stale until it changed again.

    A change to the index that no file explains (another process rebuilt it in place
    with `reindex --full`) is noticed by the index's generation, within a second, and
    yielded as a batch of no paths, so whatever shows the index reads it again.
    """
    from watchfiles import watch  # deferred: only long-running commands need it

    seen = _generation(vault)
    for changes in watch(
        vault.root,
        stop_event=stop,
        debounce=debounce_ms,
        step=50,
        raise_interrupt=False,
        rust_timeout=1000,
        yield_on_timeout=True,
    ):
        if watching is not None and not watching.is_set():
            watching.set()
            yield vault.index.sync(), []
            seen = _generation(vault)
        if not changes:
            now = _generation(vault)
            if now != seen:
                seen = now
                yield SyncReport(), []
            continue
        paths = relevant_paths(vault, changes)
        if any(_is_folder_change(vault, path) for _, path in changes):
            # A folder renamed or removed reports only the folder, not the files in it.
            yield vault.index.sync(), paths
        elif paths:
            yield vault.index.sync_paths(paths), paths
        else:
            continue
        seen = _generation(vault)


def _generation(vault: Vault) -> int | None:
    try:
        return vault.index.generation()
    except Exception:  # a broken index is reported where it is read, not by the watcher
        return None


def _is_folder_change(vault: Vault, absolute: str) -> bool:
    if absolute.lower().endswith(".md") or is_temporary(absolute) or os.path.isfile(absolute):
        return False
    relpath = os.path.relpath(absolute, vault.root).replace(os.sep, "/")
    top = relpath.split("/", 1)[0]
    return not relpath.startswith("..") and not top.startswith(".")
