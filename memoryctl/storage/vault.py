"""A vault on disk: its folder, settings, index and git repository, and safe writes.

Every change memoryctl makes to a memory goes through `Vault.write`: read the file,
change only what was asked, write it atomically if nobody changed it meanwhile,
re-index that file, and commit it with a message that says what and why.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from memoryctl.lifecycle import lifecycle_writes
from memoryctl.memory import Memory
from memoryctl.moments import CREATED_KEYS, dated_by, dates_in_file_style, moment
from memoryctl.storage import gitrepo, notefile, seal, writelock
from memoryctl.storage.atomic import ChangedOnDisk, create_all, current_sha, write_atomic
from memoryctl.storage.config import CONFIG_NAME, VaultConfig, load_config
from memoryctl.storage.own_writes import OwnWrites
from memoryctl.storage.scan import is_memory_path
from memoryctl.wording import first_few

if TYPE_CHECKING:  # the index pulls in SQLAlchemy; import it only when it is opened
    from memoryctl.storage.index import Index, SyncReport
    from memoryctl.storage.parsing import RowsAside

INDEX_FILE = "index.sqlite3"
# Beside the index: the paths memoryctl saved but has not committed yet.
PENDING_FILE = "uncommitted.txt"


# How long a writer waits for another one to finish before giving up.
LOCK_TIMEOUT_SECONDS = 10.0


def lock_timeout() -> float:
    """How long a writer waits for the vault: `MEMORYCTL_LOCK_TIMEOUT` seconds, or 10."""
    try:
        return max(float(os.environ.get("MEMORYCTL_LOCK_TIMEOUT", "")), 0.0)
    except ValueError:
        return LOCK_TIMEOUT_SECONDS


class VaultError(Exception):
    """A problem the user can fix; the message says how."""


class FileGone(VaultError):
    """A file memoryctl was about to read is no longer there."""

    def __init__(self, relpath: str, why: str = "no longer exists") -> None:
        self.relpath = relpath
        super().__init__(f"{relpath} {why}")


class SealedFile(VaultError):
    """A secret memory this device has no key for: never read as text, never written."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} is {seal.SEALED_TITLE}; it was not changed")
        self.path = path


def read_file(root: Path, relpath: str, why: str = "no longer exists") -> bytes:
    """The bytes of a vault file; FileGone (saying `why`) when it is not there."""
    try:
        return (root / relpath).read_bytes()
    except FileNotFoundError:
        raise FileGone(relpath, why) from None


class IdInSeveralFiles(VaultError):
    """A reference names an id that several files carry, so which memory is meant is unclear."""

    def __init__(self, ref: str, paths: list[str]) -> None:
        super().__init__(f"id {ref!r} is used by several files ({', '.join(paths)})")
        self.ref = ref
        self.paths = paths


class VaultBusy(VaultError):
    """Another writer held the vault for longer than a writer waits."""

    def __init__(self, holder: str | None, waited: float) -> None:
        super().__init__(
            f"the vault is busy (held by {holder or 'another process'}); nothing was written"
        )
        self.holder = holder
        self.waited = waited


@dataclass(frozen=True)
class Committed:
    """What memoryctl's last commit recorded, and what it left for the person."""

    sha: str | None
    # Files whose working copy also holds the person's own uncommitted edits: the commit
    # has only memoryctl's change, and their edits stay in the file, uncommitted.
    left_uncommitted: tuple[str, ...] = ()
    failed: Exception | None = None  # why nothing was committed (git's lock, say)


def index_path(root: Path) -> Path:
    """Where a vault's index lives: a cache folder outside the vault, keyed by its path."""
    base = os.environ.get("MEMORYCTL_CACHE_DIR") or platformdirs.user_cache_dir("memoryctl")
    real = os.path.realpath(root)
    key = hashlib.sha256(real.encode("utf-8")).hexdigest()[:16]
    return Path(base) / "vaults" / f"{Path(real).name}-{key}" / INDEX_FILE


def is_vault(path: Path) -> bool:
    return (path / CONFIG_NAME).is_file()


@dataclass
class Loaded:
    """A memory's file as memoryctl read it: what to change, and what to check before."""

    memory: Memory
    note: notefile.NoteFile
    sha: str


class Vault:
    def __init__(self, root: Path, *, db_path: Path | None = None) -> None:
        if not root.is_dir():
            raise VaultError(f"{root} is not a folder")
        self.root = root.resolve()
        self.config: VaultConfig = load_config(self.root)
        self.db_path = db_path or index_path(self.root)
        self._index: Index | None = None
        self.last_sync: SyncReport | None = None
        self.lock_timeout = lock_timeout()
        self.last_commit: Committed | None = None
        # Each file written in the current write, as it was before memoryctl wrote it.
        self._before: dict[str, bytes] = {}
        # The (size, mtime_ns) of files this process wrote, so its watcher skips them.
        self.own_writes = OwnWrites()
        self._is_git: bool | None = None

    @property
    def index(self) -> Index:
        """The index, opened and brought up to date on first use."""
        if self.last_sync is None:
            index = self.stored_index()
            self.last_sync = index.sync()
            added = self.last_sync.added
            if index.built_fresh and added:
                index.notices.append(
                    f"The index was missing, so it was built from the vault "
                    f"({added} file{'' if added == 1 else 's'})."
                )
            self._repair_git_set_up(index)
            return index
        assert self._index is not None
        return self._index

    def _repair_git_set_up(self, index: Index) -> None:
        """The merge driver and sealing filter, set up again when the Python git runs
        them with is gone, so git does not refuse memory files until the next sync."""
        from memoryctl.storage import gitsync

        try:
            repaired = gitsync.repair(self.root)
        except gitrepo.GitError as error:
            repaired = f"The merge driver and sealing filter could not be set up again: {error}"
        if repaired:
            index.notices.append(repaired)

    def stored_index(self) -> Index:
        """The index as it was last synced, opened without reading the vault's files.

        A person sees the list of a big vault at once, and `index` then syncs it."""
        if self._index is None:
            from memoryctl.storage.index import Index

            self._index = Index.open(self.db_path, self.root, self.config)
        return self._index

    def adopt_sync(self, report: SyncReport) -> Index:
        """Use the index as another process just synced it, without scanning again."""
        index = self.stored_index()
        self.last_sync = report
        return index

    @property
    def notices(self) -> list[str]:
        return self._index.notices if self._index else []

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
            self.last_sync = None

    @property
    def is_git(self) -> bool:
        return (self.root / ".git").exists() and self.git_refusal is None

    @property
    def git_refusal(self) -> str | None:
        """Why git will not work in this vault although it has a `.git`; None when it
        works, or when there is no `.git`. Asked before every commit: once git has
        worked it is not asked again (the folder is checked each time), and while it
        refuses it is asked each time, so a fix made meanwhile is seen."""
        if not (self.root / ".git").exists():
            self._is_git = None
            return None
        if self._is_git is None:
            reason = gitrepo.refusal(self.root)
            if reason is not None:
                return reason
            self._is_git = True
        return None

    # --- reading ------------------------------------------------------------------

    def resolve(self, ref: str) -> Memory:
        """The one memory an id, an id prefix or a path names; a clear error otherwise."""
        if not ref.strip():
            raise VaultError("give a memory's id (or the start of it, or its path)")
        found = self.index.resolve(ref)
        typed = repr(ref if len(ref) <= 40 else f"{ref[:32]}…")  # an error stays one line
        if not found:
            raise VaultError(f"no memory with id {typed}")
        ids = {m.id for m in found}
        if len(ids) > 1:
            shown, more = first_few(sorted(ids), 5)
            sample = ", ".join(shown) + (f", and {more} more" if more else "")
            raise VaultError(f"{typed} matches {len(ids)} memories ({sample}); give more of the id")
        if len(found) > 1:
            raise IdInSeveralFiles(ref, [m.path for m in found])
        return found[0]

    def load(self, memory: Memory) -> Loaded:
        """Read a memory's file as it is now, ready to change."""
        raw = read_file(self.root, memory.path)
        if seal.is_sealed(raw):
            raise SealedFile(memory.path)
        try:
            text = notefile.decode(raw)
            template = notefile.template_split(text)
            if template is not None:
                raise VaultError(
                    f"cannot change {memory.path}: it is a template (its frontmatter holds "
                    f"the placeholder {template[0]!r}), not a memory"
                )
            note = notefile.parse_text(text)
        except notefile.NoteError as error:
            raise VaultError(f"cannot change {memory.path}: {error}; fix the file first") from None
        from memoryctl.memory import memory_from_note

        current = memory_from_note(memory.path, note.data, note.body, memory.created)
        return Loaded(current, note, notefile.sha256(raw))

    def read_text(self, memory: Memory) -> str:
        raw = (self.root / memory.path).read_bytes()
        return raw.decode("utf-8", errors="replace")

    # --- writing ------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the vault's write lock: one writer at a time, whichever face or process.

        Reentrant. Hold it only around a write (read what to change, write, index,
        commit), never while a person decides something. Waits `timeout` seconds for
        another writer (the vault's `lock_timeout` when None) before `VaultBusy`.
        """
        reason = self.git_refusal if self.config.autocommit else None
        if reason is not None:
            raise gitrepo.GitRefused(self.root, reason)  # before a change it cannot commit
        lock = writelock.for_vault(self.root)
        try:
            lock.acquire(self.lock_timeout if timeout is None else timeout)
        except writelock.Busy as busy:
            raise VaultBusy(busy.holder, busy.waited) from None
        if lock.depth == 1:
            self.last_commit = None  # what this write commits, not an earlier one
            self.own_writes.write_began()
        try:
            yield
        finally:
            if lock.depth == 1:
                self._before.clear()
                self.own_writes.write_ended()
            lock.release()

    def write(
        self,
        loaded: Loaded,
        changes: dict[str, Any],
        message: str,
        *,
        body: str | None = None,
        extra_paths: list[str] | None = None,
    ) -> Memory:
        """Change keys (and maybe the body) of one memory file, then index and commit it."""
        note = self.changed_note(loaded, changes, body)
        with self.writing():
            self._put(loaded.memory.path, note.to_bytes(), loaded.sha)
            self.index.sync_paths([loaded.memory.path])
            self.commit([loaded.memory.path, *(extra_paths or [])], message)
            return self._as_indexed(loaded.memory.path, note, loaded.memory.created)

    def _as_indexed(self, relpath: str, note: notefile.NoteFile, created: str) -> Memory:
        """The memory just written, as the index holds it; read from the written note if
        a sync elsewhere has not caught up with it, so a write that succeeded says so."""
        found = self.index.by_path(relpath)
        if found is None:
            self.index.sync_paths([relpath])
            found = self.index.by_path(relpath)
        if found is None:
            from memoryctl.memory import memory_from_note

            found = memory_from_note(relpath, note.data, note.body, created)
        return found

    def changed_note(
        self, loaded: Loaded, changes: dict[str, Any], body: str | None = None
    ) -> notefile.NoteFile:
        """A memory's file with these changes, not yet written.

        A state goes where this note keeps its lifecycle (never over the owner's own
        `status`), and a moment is written in the style the file already uses for it.
        """
        data = loaded.note.data
        changes = dates_in_file_style(data, lifecycle_writes(data, changes))
        if not loaded.memory.has_id and "id" not in changes:
            # The first write gives a file its id: the one it has been known by.
            changes = {"id": loaded.memory.id, **changes}
        if "created" not in data and "created" not in changes and not dated_by(data, CREATED_KEYS):
            # A file dated by no key is dated by its mtime, which every write moves;
            # writing the date down keeps the memory as old as it was.
            changes = {**changes, "created": moment(loaded.memory.created)}
        try:
            return loaded.note.with_changes(changes, body=body)
        except notefile.NoteError as error:
            raise VaultError(
                f"the change would make {loaded.memory.path} unreadable: {error}"
            ) from None

    def write_many(
        self,
        notes: list[tuple[Loaded, notefile.NoteFile]],
        files: list[tuple[str, bytes, str | None]],
        message: str,
    ) -> str | None:
        """Write several memories (as `changed_note` made them) and other vault files
        (relpath, bytes, the sha they must still have, or None for a new file), then
        index the memories and make one commit of everything. Returns the commit.

        Every file is checked before any is written, so a file changed on disk stops
        the whole change rather than half of it.
        """
        with self.writing():
            return self._write_many(notes, files, message)

    def _write_many(
        self,
        notes: list[tuple[Loaded, notefile.NoteFile]],
        files: list[tuple[str, bytes, str | None]],
        message: str,
    ) -> str | None:
        for loaded, _ in notes:
            if current_sha(self.root / loaded.memory.path) != loaded.sha:
                raise VaultError(
                    f"{loaded.memory.path} changed on disk since memoryctl read it; "
                    "not overwritten. Read it again and retry."
                )
        for relpath, _, expected in files:
            if current_sha(self.root / relpath) != expected:
                state = "exists" if expected is None else "changed on disk since memoryctl read it"
                raise VaultError(f"{relpath} {state}; not overwritten. Read it again and retry.")
        for loaded, note in notes:
            self._put(loaded.memory.path, note.to_bytes(), loaded.sha)
        fresh = [(self.root / path, data) for path, data, expected in files if expected is None]
        stamps: list[tuple[int, int]] | None = None
        if len(fresh) > 16:
            # Many new files (an import, a thousand proposals): one flush to disk for all.
            try:
                stamps = create_all(fresh)
            except ChangedOnDisk as error:
                raise VaultError(str(error)) from None
        try:
            for (path, _), stamp in zip(fresh, stamps or [], strict=stamps is not None):
                self.own_writes.remember(path.relative_to(self.root).as_posix(), stamp)
            rest = [file for file in files if file[2] is not None] if stamps is not None else files
            if len(rest) > 16:
                # Each write waits for its fsync; run side by side, the file system groups
                # them, and a thousand proposals are written in a third of the time.
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(8) as pool:
                    list(pool.map(lambda file: self._put(*file), rest))
            else:
                for relpath, data, expected in rest:
                    self._put(relpath, data, expected)
            memory_paths = [loaded.memory.path for loaded, _ in notes]
            if memory_paths:
                self.index.sync_paths(memory_paths)
            written = {relpath: data for relpath, data, _ in files}
            return self.commit([*memory_paths, *written], message, written)
        except KeyboardInterrupt:
            self._take_back([path for path, _ in fresh])
            raise

    def _take_back(self, made: list[Path]) -> None:
        """The new files of a write stopped (Ctrl-C) before its commit was made: removed,
        so the change is undone whole rather than left saved and not committed. Once the
        commit holds them they stay, as committed."""
        relpaths = [path.relative_to(self.root).as_posix() for path in made]
        if not relpaths or (self.is_git and gitrepo.committed_blobs(self.root, relpaths)):
            return
        for path in made:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._note_pending(relpaths, done=True)

    def rows_aside(self, files: list[tuple[str, bytes, notefile.NoteFile]]) -> RowsAside:
        """Start making the index rows of new memory files (relpath, bytes, the note they
        parse as) before they are written, for `index_written`; close it when done."""
        from memoryctl.storage.parsing import RowsAside

        return RowsAside(files)

    def index_written(
        self, files: list[tuple[str, bytes, notefile.NoteFile]], rows: RowsAside | None = None
    ) -> None:
        """Index new memory files this vault just wrote (relpath, bytes, the note they
        parse as) from what the caller holds (`rows`, from `rows_aside`, has made their
        rows meanwhile), with the size and time each was written with: a file changed
        since is read again by the next sync, as any other."""
        from memoryctl.storage.parsing import RowsAside

        rows = rows or RowsAside([])
        held = []
        again = []
        for relpath, data, note in files:
            stamp = self.own_writes.get(relpath)
            if stamp is None or not is_memory_path(relpath, self.config):
                again.append(relpath)
            else:
                held.append(rows.row_of(relpath, data, note, *stamp))
        self.index.sync_written(held)
        if again:
            self.index.sync_paths(again)

    def create(self, relpath: str, note: notefile.NoteFile, message: str) -> Memory:
        with self.writing():
            self._put(relpath, note.to_bytes(), None)
            self.index.sync_paths([relpath])
            self.commit([relpath], message)
            return self._as_indexed(relpath, note, str(note.data.get("created", "")))

    def write_file(self, relpath: str, data: bytes, expected_sha: str | None) -> None:
        """Write a file of the vault (a memory, a proposal) safely, under the write lock."""
        with self.writing():
            self._put(relpath, data, expected_sha)

    def _put(self, relpath: str, data: bytes, expected_sha: str | None) -> None:
        """`write_file` for a caller that holds the write lock (or runs for one that does)."""
        path = self.root / relpath
        if expected_sha is not None and relpath not in self._before and self._keyed(relpath):
            with contextlib.suppress(OSError):
                self._before[relpath] = path.read_bytes()
        try:
            write_atomic(path, data, expected_sha)
        except ChangedOnDisk as error:
            raise VaultError(str(error)) from None
        with contextlib.suppress(OSError):
            st = path.stat()
            self.own_writes.remember(relpath, (st.st_size, st.st_mtime_ns))

    def commit(
        self, relpaths: list[str], message: str, written: Mapping[str, bytes] | None = None
    ) -> str | None:
        """Commit these paths. Where memoryctl rewrote a memory that also holds the
        person's own uncommitted edits, only memoryctl's change is committed; the file
        keeps both, and `last_commit.left_uncommitted` names it. `written` holds the
        bytes this write just wrote at some paths: those still as written (by their size
        and time) are not read again."""
        if not self.config.autocommit or not self.is_git:
            return None
        from memoryctl.storage import gitsync

        with self.writing():
            # Noted before committing, cleared after: a commit that fails (or a process
            # killed before it) leaves the paths for `doctor` to name.
            self._note_pending(relpaths)
            try:
                staged, kept = self._only_ours(relpaths)
                paths = [p for p in relpaths if p not in kept or p in staged]
                message = gitsync.without_secrets(message, self._secrets_named(message))
                known = self._still_as_written(written or {})
                plan = gitsync.commit_plan(self.root, paths, message, self._keyed, staged, known)
                self.index.notices.extend(plan.notices)
                sha = (
                    gitrepo.commit(
                        self.root,
                        plan.paths,
                        plan.message,
                        plan.stored or staged,
                        plan.options,
                        known,
                    )
                    if paths
                    else None
                )
            except gitrepo.GitError as error:
                self.last_commit = Committed(None, failed=error)
                self.index.notices.append(f"The change was saved but not committed: {error}")
                return None
            self._note_pending(relpaths, done=True)
            self.last_commit = Committed(sha, tuple(kept))
            for relpath in kept:
                self.index.notices.append(
                    f"{relpath} also holds edits of your own that are not committed; "
                    "memoryctl committed only its change and left yours for you to commit"
                    if relpath in staged
                    else f"{relpath} holds edits of your own that are not committed, and "
                    "memoryctl's change could not be told apart from them; nothing of it "
                    "was committed"
                )
            return sha

    def _keyed(self, relpath: str) -> bool:
        """Whether this path is a memory or a proposal: a file memoryctl changes key by
        key (so it commits only its own change to one the person also edited), and the
        only files it seals, never a template or any other file of the person's,
        whatever its frontmatter says."""
        from memoryctl.storage.merge import merges_by_key

        return merges_by_key(relpath, self.config)

    def _still_as_written(self, written: Mapping[str, bytes]) -> dict[str, bytes]:
        """Of the bytes this process wrote at these paths, those whose files still have
        the size and time they were written with."""
        found = {}
        for relpath, data in written.items():
            stamp = self.own_writes.get(relpath)
            try:
                st = os.stat(os.path.join(self.root, relpath))
            except OSError:
                continue
            if stamp == (st.st_size, st.st_mtime_ns):
                found[relpath] = data
        return found

    def _secrets_named(self, message: str) -> list[tuple[str, str, str]]:
        """(id, title, text) of each secret memory a commit message names by its id."""
        words = set(re.findall(r"[^\s,;()\[\]'\"]+", message))
        found = self.index.get_many(words) if words else {}
        return [(m.id, m.title, m.body) for m in found.values() if m.visibility == "secret"]

    @property
    def _pending_file(self) -> Path:
        return self.db_path.parent / PENDING_FILE

    def pending_commits(self) -> list[str]:
        """Paths memoryctl saved whose commit failed or was cut short (kept beside the
        index, and cleared by the next commit of the same path)."""
        try:
            text = self._pending_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        return sorted({line for line in text.splitlines() if line})

    def _note_pending(self, relpaths: list[str], *, done: bool = False) -> None:
        """Add these paths to the pending commits, or (done) take them out."""
        pending = set(self.pending_commits())
        changed = pending - set(relpaths) if done else pending | set(relpaths)
        if changed == pending:
            return
        with contextlib.suppress(OSError):
            self._pending_file.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(
                self._pending_file,
                "".join(f"{p}\n" for p in sorted(changed)).encode("utf-8"),
                current_sha(self._pending_file),
                durable=False,  # a note for doctor, written twice a commit
            )

    def _only_ours(self, relpaths: list[str]) -> tuple[dict[str, bytes], list[str]]:
        """For each memory or proposal written in this write whose file held uncommitted
        edits before memoryctl changed it: the bytes to commit instead (memoryctl's change
        applied to the committed version), and the list of such paths."""
        written = {p: self._before.pop(p) for p in relpaths if p in self._before and self._keyed(p)}
        if not written:
            return {}, []
        committed = gitrepo.committed_blobs(self.root, list(written))
        staged: dict[str, bytes] = {}
        kept: list[str] = []
        for relpath, before in written.items():
            blob = committed.get(relpath)
            if blob is None or blob == gitrepo.blob_id(before):
                continue  # new to git, or clean before memoryctl wrote it
            from memoryctl.storage import gitsync

            if gitsync.seals_to(self.root, before, blob):
                continue  # a secret memory, clean: git holds it sealed
            kept.append(relpath)
            ours = notefile.replayed(
                gitrepo.read_blob(self.root, blob), before, (self.root / relpath).read_bytes()
            )
            if ours is not None:
                staged[relpath] = ours
        return staged, kept

    def free_path(self, folder: str, stem: str) -> str:
        """A new file name under folder that no file uses yet."""
        candidate = f"{folder}/{stem}.md"
        number = 2
        while (self.root / candidate).exists():
            candidate = f"{folder}/{stem}-{number}.md"
            number += 1
        return candidate
