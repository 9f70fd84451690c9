"""memoryctl's one way of committing: exact paths, built from HEAD's trees.

`git commit -- PATHS` reads, refreshes and writes the whole index twice and stats every
file of the work tree: at 10,000 memories that is most of the time a write holds the
vault's lock. This builds the same commit with git's plumbing: the blobs of the paths
(through the vault's attributes and filters, as `git add` would, or given as bytes and
stored as they are), the trees above them (every other tree is HEAD's own), the commit
and the branch (`update-ref`, only if HEAD has not moved). It holds git's own
`index.lock` meanwhile, as `git commit` does, then sets the person's index entries of
exactly these paths to the commit's and leaves whatever else they staged alone.

Many new blobs (an import, a bulk change) are written as one pack instead of one
loose file each. Where the person set up a commit hook, `git commit` itself makes the
commit, from a private index holding the tree built here, so the hooks run and see
only memoryctl's paths. While git is in the middle of a merge, rebase, cherry-pick or
revert, nothing is committed: the change stays saved, and the commit fails saying why.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memoryctl.storage import gitrepo

# The hooks `git commit` runs: where one is set up, memoryctl commits through git commit.
COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")
# States in which a commit would be taken into the person's operation: none is made.
IN_PROGRESS = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply")
# What each of those states is, for the error that says why nothing was committed.
IN_PROGRESS_NAMES = {
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase",
}
# Loose objects in one of git's 256 object folders past which `git gc --auto` is asked
# to look (git's own estimate: gc.auto, 6,700 by default, over 256).
LOOSE_PER_FOLDER = 27
# From this many new blobs on, they are written as one pack: 10,000 loose objects cost
# 10,000 files (three times the time on a busy disk), a pack two.
PACK_FROM = 64
_FILE_MODES = ("100644", "100755")


@dataclass(frozen=True)
class Settings:
    identity: tuple[str, ...]
    hooks: Path
    object_format: str  # sha1, or sha256


_SETTINGS: dict[tuple[str, int], Settings] = {}


def settings(root: Path) -> Settings:
    """The repository's identity, hooks folder and object format, read once per change
    of its config file."""
    try:
        stamp = (_common_dir(root) / "config").stat().st_mtime_ns
    except OSError:
        stamp = 0
    key = (str(root), stamp)
    found = _SETTINGS.get(key)
    if found is None:
        listed = gitrepo._git(
            root,
            "config",
            "-z",
            "--get-regexp",
            r"^(user\.email|core\.hookspath|extensions\.objectformat)$",
            check=False,
        ).stdout
        values = dict(record.partition("\n")[::2] for record in listed.split("\0") if record)
        hooks = values.get("core.hookspath")
        found = Settings(
            identity=() if values.get("user.email") else tuple(gitrepo._FALLBACK_IDENTITY),
            hooks=(root / os.path.expanduser(hooks)) if hooks else _common_dir(root) / "hooks",
            object_format=values.get("extensions.objectformat", "sha1").lower(),
        )
        _SETTINGS.clear()
        _SETTINGS[key] = found
    return found


def _common_dir(root: Path) -> Path:
    """The folder holding the repository's objects, config and hooks (a linked worktree's
    git folder names it in `commondir`)."""
    git_dir = gitrepo._git_dir(root)
    try:
        named = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / named).resolve()


def _in_progress(root: Path) -> str | None:
    git_dir = gitrepo._git_dir(root)
    for name in IN_PROGRESS:
        if (git_dir / name).exists():
            return f"{IN_PROGRESS_NAMES[name]} (.git/{name})"
    return None


def _runs_hooks(root: Path) -> bool:
    hooks = settings(root).hooks
    return any(os.access(hooks / name, os.X_OK) for name in COMMIT_HOOKS)


def commit(
    root: Path,
    paths: Sequence[str],
    message: str,
    staged: Mapping[str, bytes] | None = None,
    options: Sequence[str] = (),
    known: Mapping[str, bytes] | None = None,
) -> str | None:
    """Commit exactly these paths as they are on disk (a missing one is deleted), or as
    `staged` gives their bytes; return the commit id, or None if nothing changed.
    `known` holds bytes some files are thought to hold (the caller just wrote them):
    where git's id for a file is theirs, they are stored without reading it again.
    Raises GitError, before anything is committed, for a path git cannot take from
    memoryctl (`..`, `.git`, a submodule) or while git is in the middle of a merge."""
    staged = staged or {}
    for relpath in paths:
        if not _plain_path(relpath):
            raise gitrepo.GitError(f"{relpath!r} is not a path memoryctl commits")
    busy = _in_progress(root)
    if busy:
        raise gitrepo.GitError(
            f"git is in the middle of {busy}, so nothing is committed until it is finished"
        )
    with _IndexLock(root) as lock:
        head, trees = _head_trees(root, {posixpath.dirname(p) for p in paths})
        entries = _new_entries(
            root, list(dict.fromkeys(paths)), staged, options, trees, known or {}
        )
        tree = _write_trees(root, trees, entries)
        if tree == trees[""].sha or (head is None and not any(entries.values())):
            return None
        if _runs_hooks(root):
            sha = _commit_with_hooks(root, tree, message, options)
        else:
            sha = _commit_tree(root, tree, head, message)
        try:
            lock.stage(entries, head)
            lock.install()
        except KeyboardInterrupt:
            # The commit is made: the person's index must hold it too, or git would show
            # each of its paths as deleted and staged, for their next commit to delete.
            # Done again, whole, and only then is the key obeyed.
            lock.stage(entries, head)
            lock.install()
            raise
    _maybe_gc(root)
    return sha


def _commit_tree(root: Path, tree: str, head: str | None, message: str) -> str:
    parents = ["-p", head] if head else []
    identity = settings(root).identity
    text = _cleaned(message)
    sha = gitrepo._git(root, *identity, "commit-tree", tree, *parents, "-m", text).stdout.strip()
    subject = text.partition("\n")[0]
    gitrepo._git(root, "update-ref", "-m", f"commit: {subject}", "HEAD", sha, head or "")
    return sha


def _commit_with_hooks(root: Path, tree: str, message: str, options: Sequence[str]) -> str:
    """`git commit` of this tree, from an index of its own, so the person's hooks run
    (and see memoryctl's paths only, as for `git commit -- PATHS`)."""
    private = gitrepo._git_dir(root) / f"memoryctl-commit-index.{os.getpid()}"
    env = {"GIT_INDEX_FILE": str(private)}
    try:
        gitrepo._git(root, "read-tree", tree, env=env)
        identity = settings(root).identity
        gitrepo._git(root, *options, *identity, "commit", "-q", "-m", message, env=env)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(private)
    return gitrepo._git(root, "rev-parse", "HEAD").stdout.strip()


def _plain_path(relpath: str) -> bool:
    parts = relpath.split("/")
    return (
        bool(relpath)
        and posixpath.normpath(relpath) == relpath
        and not relpath.startswith("/")
        and ".." not in parts
        and ".git" not in parts
        and "\n" not in relpath
    )


@dataclass
class _Tree:
    """A folder's tree in HEAD: its id (None when HEAD has no such folder), its entries."""

    sha: str | None
    entries: dict[str, tuple[str, str]]  # name -> (mode, object id)


def _head_trees(root: Path, folders: set[str]) -> tuple[str | None, dict[str, _Tree]]:
    """HEAD's commit id and the trees of these folders and every folder above them, read
    by one `git cat-file --batch`."""
    wanted = {""}
    for folder in folders:
        while folder:
            wanted.add(folder)
            folder = posixpath.dirname(folder)
    order = sorted(wanted)
    names = ["HEAD", *("HEAD^{tree}" if f == "" else f"HEAD:{f}" for f in order)]
    try:
        done = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=root,
            input="".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape"),
            capture_output=True,
        )
    except FileNotFoundError:
        raise gitrepo.GitError("git is not installed") from None
    if done.returncode != 0:
        raise gitrepo.GitError(done.stderr.decode("utf-8", "replace").strip() or "git cat-file")
    out, at = done.stdout, 0
    found: list[tuple[str, str, bytes] | None] = []
    for _ in names:
        end = out.index(b"\n", at)
        header = out[at:end].decode("utf-8", "surrogateescape").split(" ")
        at = end + 1
        if header[-1] == "missing" or len(header) != 3:
            found.append(None)
            continue
        sha, kind, size = header
        found.append((sha, kind, out[at : at + int(size)]))
        at += int(size) + 1
    head = found[0][0] if found[0] is not None else None
    trees: dict[str, _Tree] = {}
    for folder, item in zip(order, found[1:], strict=True):
        if item is None:
            trees[folder] = _Tree(None, {})
        elif item[1] != "tree":
            trees[folder] = _Tree(None, {})  # a file where a path needs a folder: replaced
        else:
            trees[folder] = _Tree(item[0], _parse_tree(item[2], len(item[0]) // 2))
    return head, trees


def _parse_tree(raw: bytes, id_bytes: int) -> dict[str, tuple[str, str]]:
    """A tree object's entries: name -> (mode, object id)."""
    entry = re.compile(rb"(\d+) ([^\0]*)\0(.{%d})" % id_bytes, re.DOTALL)
    return {
        name.decode("utf-8", "surrogateescape"): (mode.decode("ascii"), sha.hex())
        for mode, name, sha in entry.findall(raw)
    }


def _new_entries(
    root: Path,
    paths: list[str],
    staged: Mapping[str, bytes],
    options: Sequence[str],
    trees: dict[str, _Tree],
    known: Mapping[str, bytes],
) -> dict[str, tuple[str, str] | None]:
    """What each path becomes in the commit: (mode, blob id), or None where it is gone.
    A new path git ignores is left out, as `git add` would leave it."""
    entries: dict[str, tuple[str, str] | None] = {}
    files: dict[str, str] = {}  # relpath -> mode, for the files hashed from disk
    links: dict[str, bytes] = {}  # relpath -> where a symbolic link points
    for relpath in paths:
        folder, name = posixpath.split(relpath)
        before = trees[folder].entries.get(name)
        if before is not None and before[0] == "160000":
            raise gitrepo.GitError(f"{relpath} is a submodule; memoryctl does not commit it")
        if relpath in staged:
            continue
        try:
            st = (root / relpath).lstat()
        except (FileNotFoundError, NotADirectoryError):
            entries[relpath] = None
            continue
        if stat.S_ISLNK(st.st_mode):
            links[relpath] = os.fsencode(os.readlink(root / relpath))
        elif not stat.S_ISREG(st.st_mode):
            raise gitrepo.GitError(f"{relpath} is not a file; memoryctl commits files")
        elif os.name != "nt":
            files[relpath] = "100755" if st.st_mode & stat.S_IXUSR else "100644"
        else:
            files[relpath] = before[0] if before and before[0] in _FILE_MODES else "100644"
    fresh = [p for p in files if posixpath.basename(p) not in trees[posixpath.dirname(p)].entries]
    for relpath in _untracked(root, _ignored(root, fresh)):
        del files[relpath]
    blobs = _hash_files(root, list(files), options, known)
    for (relpath, mode), blob in zip(files.items(), blobs, strict=True):
        entries[relpath] = (mode, blob)
    given = {**links, **staged}
    for relpath, blob in zip(given, store_blobs(root, list(given.values())), strict=True):
        folder, name = posixpath.split(relpath)
        before = trees[folder].entries.get(name)
        if relpath in links:
            entries[relpath] = ("120000", blob)
        else:
            mode = before[0] if before and before[0] in _FILE_MODES else "100644"
            entries[relpath] = (mode, blob)
    return entries


def _ignored(root: Path, relpaths: list[str]) -> list[str]:
    if not relpaths:
        return []
    # --no-index: these paths are not in HEAD, and the index's lookups cost a
    # millisecond a path (`_untracked` then asks about the few it names).
    listed = _run(root, ["check-ignore", "-z", "--no-index", "--stdin"], relpaths, check=False)
    return [path for path in listed.split("\0") if path]


def _untracked(root: Path, relpaths: list[str]) -> list[str]:
    """Those of these paths git's index does not hold: a file the person added with
    `git add -f` is theirs to track, ignored or not, and memoryctl's change to it is
    committed like any other."""
    if not relpaths:
        return []
    listed = _run(root, ["--literal-pathspecs", "ls-files", "-z", "--cached", "--", *relpaths], [])
    tracked = set(listed.split("\0"))
    return [path for path in relpaths if path not in tracked]


def _hash_files(
    root: Path, relpaths: list[str], options: Sequence[str], known: Mapping[str, bytes]
) -> list[str]:
    """The blob ids of work-tree files, stored, through the attributes of their paths.
    For many, git only works out their ids (`hash-object` without `-w`); each file whose
    bytes have that id is its own blob, and those go into one pack by `fast-import`, the
    rest (a filter or a line-ending rule changed them) through `hash-object -w`."""
    if not relpaths:
        return []
    if len(relpaths) < PACK_FROM:
        return _run(root, [*options, "hash-object", "-w", "--stdin-paths"], relpaths).split()
    ids = _run(root, [*options, "hash-object", "--stdin-paths"], relpaths).split()
    algorithm = settings(root).object_format
    as_is: dict[int, bytes] = {}
    converted: list[int] = []
    for number, (relpath, blob) in enumerate(zip(relpaths, ids, strict=True)):
        data = known.get(relpath)
        if data is None or _blob_id(data, algorithm) != blob:
            try:
                data = (root / relpath).read_bytes()
            except OSError:
                data = None
        if data is not None and _blob_id(data, algorithm) == blob:
            as_is[number] = data
        else:
            converted.append(number)
    stored = dict(zip(as_is, store_blobs(root, list(as_is.values())), strict=True))
    if converted:
        again = [relpaths[number] for number in converted]
        hashed = _run(root, [*options, "hash-object", "-w", "--stdin-paths"], again).split()
        stored.update(zip(converted, hashed, strict=True))
    return [stored[number] for number in range(len(relpaths))]


def _blob_id(data: bytes, algorithm: str) -> str:
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


def store_blobs(root: Path, contents: list[bytes]) -> list[str]:
    """Store each of these as a blob exactly as given (no filter ever sees them); their
    ids, in order. A few go in by one `hash-object`, many by `fast-import`, as one pack."""
    if not contents:
        return []
    if len(contents) >= PACK_FROM:
        return _fast_import(root, contents)
    if len(contents) == 1:
        out = gitrepo._run(root, ["hash-object", "-w", "--no-filters", "--stdin"], contents[0])
        return [out.decode("ascii").strip()]
    folder = Path(tempfile.mkdtemp(prefix="memoryctl-blobs.", dir=gitrepo._git_dir(root)))
    try:
        names = []
        for number, data in enumerate(contents):
            (folder / str(number)).write_bytes(data)
            names.append(str(folder / str(number)))
        return _run(root, ["hash-object", "-w", "--no-filters", "--stdin-paths"], names).split()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fast_import(root: Path, contents: list[bytes]) -> list[str]:
    marks = gitrepo._git_dir(root) / f"memoryctl-marks.{os.getpid()}"
    stream = b"".join(
        b"blob\nmark :%d\ndata %d\n%s\n" % (number, len(data), data)
        for number, data in enumerate(contents, start=1)
    )
    try:
        args = ["-c", "fastimport.unpackLimit=1", "fast-import", "--quiet"]
        gitrepo._run(root, [*args, f"--export-marks={marks}"], stream)
        ids = {}
        for line in marks.read_text(encoding="ascii").splitlines():
            mark, _, sha = line.partition(" ")
            ids[int(mark[1:])] = sha
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(marks)
    return [ids[number] for number in range(1, len(contents) + 1)]


def _write_trees(
    root: Path, trees: dict[str, _Tree], entries: dict[str, tuple[str, str] | None]
) -> str:
    """Store the trees that change, deepest first, with one `git mktree --batch`; the
    root tree's id. Each tree's id is worked out here, so a folder's new id is known
    when its parent is written, and git's answer is checked against it."""
    changes: dict[str, dict[str, tuple[str, str] | None]] = {folder: {} for folder in trees}
    for relpath, entry in entries.items():
        folder, name = posixpath.split(relpath)
        changes[folder][name] = entry
    algorithm = settings(root).object_format
    written: list[tuple[dict[str, tuple[str, str]], str]] = []
    result = ""
    for folder in sorted(trees, key=lambda f: (-f.count("/") - bool(f), f)):
        tree = trees[folder]
        merged = dict(tree.entries)
        for name, entry in changes[folder].items():
            if entry is None:
                merged.pop(name, None)
            else:
                merged[name] = entry
        if merged == tree.entries and tree.sha is not None:
            sha: str | None = tree.sha
        elif not merged and folder:
            sha = None  # an empty folder leaves its parent's tree
        else:
            sha = tree_id(merged, algorithm)
            written.append((merged, sha))
        if folder:
            parent, name = posixpath.split(folder)
            if entries.get(folder) is None:  # else a file took the folder's place
                changes[parent][name] = ("40000", sha) if sha else None
        else:
            result = sha or ""
    if written and _mktrees(root, [tree for tree, _ in written]) != [sha for _, sha in written]:
        raise gitrepo.GitError("git stored the commit's trees with other ids than memoryctl's")
    return result


def tree_id(entries: dict[str, tuple[str, str]], algorithm: str = "sha1") -> str:
    """The id git gives a tree of these entries (name -> (mode, object id))."""
    named = sorted(
        (name.encode("utf-8", "surrogateescape"), mode, sha)
        for name, (mode, sha) in entries.items()
    )
    # git orders a folder's entry as if its name ended in "/"
    named.sort(key=lambda entry: entry[0] + b"/" if entry[1] == "40000" else entry[0])
    body = b"".join(
        mode.encode("ascii") + b" " + name + b"\0" + bytes.fromhex(sha) for name, mode, sha in named
    )
    return hashlib.new(algorithm, b"tree %d\0" % len(body) + body).hexdigest()


def _mktrees(root: Path, trees: list[dict[str, tuple[str, str]]]) -> list[str]:
    kinds = {"40000": "tree", "160000": "commit"}
    lines: list[str] = []
    for number, entries in enumerate(trees):
        if number:
            lines.append("")  # an empty record between two trees
        lines += [
            f"{mode} {kinds.get(mode, 'blob')} {sha}\t{name}"
            for name, (mode, sha) in entries.items()
        ]
    args = ["mktree", "-z", "--missing", *(["--batch"] if len(trees) > 1 else [])]
    return _run(root, args, lines).split()


def _run(
    root: Path,
    args: list[str],
    lines: list[str],
    *,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> str:
    """Run git with these lines on its standard input, NUL-terminated under -z."""
    end = "\0" if "-z" in args else "\n"
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            input="".join(f"{line}{end}" for line in lines).encode("utf-8", "surrogateescape"),
            capture_output=True,
            env=None if env is None else {**os.environ, **env},
        )
    except FileNotFoundError:
        raise gitrepo.GitError("git is not installed") from None
    if check and done.returncode != 0:
        raise gitrepo.GitError(done.stderr.decode("utf-8", "replace").strip() or f"git {args}")
    return done.stdout.decode("utf-8", "surrogateescape")


def _cleaned(message: str) -> str:
    """A message as `git commit -m` keeps it: lines without trailing blanks, no blank
    lines at either end, never two in a row."""
    lines = [line.rstrip() for line in message.splitlines()]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return text


class _IndexLock:
    """git's own `index.lock`, held as `git commit` holds it, and the person's index
    with the commit's entries for the paths, put in place when the commit is made."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.index = gitrepo._index_file(root)
        self.path = self.index.with_name(self.index.name + ".lock")
        self.next = self.index.with_name(f"memoryctl-index.{os.getpid()}")
        self.held = False

    def __enter__(self) -> _IndexLock:
        deadline = time.monotonic() + gitrepo.LOCK_WAIT_SECONDS
        while True:
            try:
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
                self.held = True
                return self
            except FileExistsError:
                locked = gitrepo.GitLocked(".git/index.lock", _age(self.path))
                if locked.stale or time.monotonic() > deadline:
                    raise locked from None
                time.sleep(0.05)

    def stage(self, entries: dict[str, tuple[str, str] | None], head: str | None) -> None:
        """The person's index with these entries, beside it until `install`."""
        index = self.index
        env = {"GIT_INDEX_FILE": str(self.next)}
        if index.exists():
            shutil.copyfile(index, self.next)
        elif head:
            gitrepo._git(self.root, "read-tree", head, env=env)
        zeros = "0" * len(next(iter(e[1] for e in entries.values() if e), "0" * 40))
        lines = [
            f"{entry[0]} {entry[1]}\t{relpath}" if entry else f"0 {zeros}\t{relpath}"
            for relpath, entry in entries.items()
        ]
        _run(self.root, ["update-index", "-z", "--index-info"], lines, env=env)

    def install(self) -> None:
        """Put the staged index in place and let go of the lock, as git does: the new
        index is written as the lock file, which is then renamed over the index."""
        os.replace(self.next, self.path)
        os.replace(self.path, self.index)
        self.held = False

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.next)
        if self.held:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)
            self.held = False


def _age(path: Path) -> float | None:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return None


def _maybe_gc(root: Path) -> None:
    """Ask git to pack loose objects once there are many (as `git commit` does after
    committing); git decides, and packs in the background."""
    try:
        loose = len(os.listdir(_common_dir(root) / "objects" / "17"))
    except OSError:
        return
    if loose > LOOSE_PER_FOLDER:
        gitrepo._git(root, "gc", "--auto", "--quiet", check=False)
