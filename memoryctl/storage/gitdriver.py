"""What git runs: the merge driver for memory files and the sealing filter.

    python -m memoryctl.storage.gitdriver merge %O %A %B %P
    python -m memoryctl.storage.gitdriver filter

`merge` merges a memory file key by key (`merge.merge_note`). When both sides changed
the same key or lines, it keeps the local side in the file, records the other side in
the git folder for `memoryctl sync` to turn into a proposal, and reports a clean merge,
so a memory never holds conflict markers. Any other file (the vault's README, a note in
a folder the vault ignores) is the person's, and merges as git merges text, conflict
markers and all. Git hands a driver the files as they are in the
repository, so sealed files are opened, merged and sealed again.

`filter` is a long-running git filter process (gitattributes(5), "Long Running Filter
Process"): one process serves a whole `git add` or checkout. It seals a memory (or a
proposal) that says `visibility: secret` on its way into the repository, and opens it
on its way out; any other file, a template or a README, passes as it is.
A device without the key keeps the sealed file as it is, and git refuses to store a
secret memory this device cannot seal, rather than store it in clear.

This module imports little, so that git starts it quickly.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path

from memoryctl.storage import seal


class Keys:
    """This vault's sealing key, looked up once, the first time it is needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._looked = False
        self._key: bytes | None = None

    def get(self) -> bytes | None:
        if not self._looked:
            from memoryctl.storage import sealkey

            self._looked = True
            key = sealkey.load_key(self.root)
            self._key = key.secret if key else None
        return self._key


# --- the merge driver -----------------------------------------------------------------------


def _record(root: Path, entry: dict[str, object]) -> None:
    from memoryctl.storage import atomic, gitsync

    name = hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()[:20]
    path = gitsync.conflict_folder(root) / f"{os.getpid()}-{name}.json"
    atomic.replace_file(path, json.dumps(entry).encode())


def _id_of(raw: bytes) -> str | None:
    from memoryctl.storage import notefile

    try:
        value = notefile.parse_bytes(raw).data.get("id")
    except notefile.NoteError:
        return None
    return str(value) if value is not None else None


def merge(base_path: str, ours_path: str, theirs_path: str, relpath: str) -> int:
    """Merge one file as git's merge driver: the result goes into `ours_path`."""
    root = Path.cwd()  # git runs a driver at the top of the working tree
    base = Path(base_path).read_bytes() or None  # empty when both sides added the file
    ours, theirs = Path(ours_path).read_bytes(), Path(theirs_path).read_bytes()
    sealed = any(v is not None and seal.is_sealed(v) for v in (base, ours, theirs))
    if not sealed and not _merges_by_key(root, relpath):
        return _merge_as_text(base_path, ours_path, theirs_path)
    merged = merge_stored(root, relpath, base, ours, theirs, Keys(root))
    if merged is None:
        return 1
    Path(ours_path).write_bytes(merged)
    return 0


def _merges_by_key(root: Path, relpath: str) -> bool:
    """Whether the vault treats this file as a memory (or a proposal), by its own
    settings; with settings it cannot read, by the defaults."""
    from memoryctl.storage.config import ConfigError, VaultConfig, load_config
    from memoryctl.storage.merge import merges_by_key

    try:
        config = load_config(root)
    except (ConfigError, OSError):
        config = VaultConfig()
    return merges_by_key(relpath, config)


def _merge_as_text(base_path: str, ours_path: str, theirs_path: str) -> int:
    """A file that is not a memory merges as git merges any text: lines both sides
    changed are left between conflict markers, and git reports the conflict."""
    import subprocess

    labels = ["-L", "ours", "-L", "base", "-L", "theirs"]
    result = subprocess.run(["git", "merge-file", *labels, ours_path, base_path, theirs_path])
    return 0 if result.returncode == 0 else 1


def merge_stored(
    root: Path, relpath: str, base: bytes | None, ours: bytes, theirs: bytes, keys: Keys
) -> bytes | None:
    """Three versions of a file as git stores them, merged as git should store the result.

    What both sides changed differently is recorded for sync to turn into a proposal;
    None means a secret result cannot be sealed on this device."""
    from memoryctl.storage.config import PROPOSALS_DIR
    from memoryctl.storage.merge import approval_holds, merge_note

    stored_ours = ours
    versions = [base, ours, theirs]
    sealed = any(v is not None and seal.is_sealed(v) for v in versions)
    if sealed:
        key = keys.get()
        try:
            if key is None:
                raise seal.SealError("this device has no key to open it")
            versions = [seal.unseal(v, key) if v and seal.is_sealed(v) else v for v in versions]
        except seal.SealError as error:
            # The file stays as this device has it; the other version stays in git.
            _record(root, {"path": relpath, "kind": "sealed", "reason": str(error)})
            return stored_ours
    base, ours, theirs = versions
    assert ours is not None and theirs is not None
    if base is None and ours != theirs and _id_of(ours) != _id_of(theirs):
        # Two memories that happen to have the same file name: keep both.
        _record(root, {"path": relpath, "kind": "both-added", "other": _b64(theirs)})
        return stored_ours
    merged = merge_note(base, ours, theirs)
    proposal = relpath.startswith(f"{PROPOSALS_DIR}/")
    held = approval_holds(merged, ours, theirs) if proposal else None
    if held is not None:
        merged, side = held
        _record(root, {"path": relpath, "kind": "approval-holds", "approved": side})
    text = merged.text
    if seal.is_secret(text) and _merges_by_key(root, relpath):
        key = keys.get()
        if key is None:
            print(f"memoryctl: cannot seal {relpath}: this device has no key", file=sys.stderr)
            return None
        text = seal.seal(text, key)
    if not merged.clean:
        assert merged.other is not None
        _record(
            root,
            {
                "path": relpath,
                "kind": "conflict",
                "keys": list(merged.conflicts),
                "other": _b64(merged.other),
            },
        )
    return text


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


# --- the filter process -------------------------------------------------------------------------


class _Packets:
    """git's pkt-line framing on stdin and stdout."""

    MAX = 65516

    def __init__(self) -> None:
        self.inp = sys.stdin.buffer
        self.out = sys.stdout.buffer

    def read(self) -> bytes | None:
        """One packet's payload; None for a flush packet."""
        head = self.inp.read(4)
        if len(head) < 4:
            raise EOFError
        length = int(head, 16)
        if length == 0:
            return None
        return self.inp.read(length - 4)

    def read_list(self) -> list[str]:
        items = []
        while (packet := self.read()) is not None:
            items.append(packet.decode().rstrip("\n"))
        return items

    def read_content(self) -> bytes:
        chunks = []
        while (packet := self.read()) is not None:
            chunks.append(packet)
        return b"".join(chunks)

    def write(self, payload: bytes) -> None:
        self.out.write(b"%04x" % (len(payload) + 4) + payload)

    def write_list(self, *items: str) -> None:
        for item in items:
            self.write(item.encode() + b"\n")
        self.flush()

    def write_content(self, data: bytes) -> None:
        for start in range(0, len(data), self.MAX):
            self.write(data[start : start + self.MAX])
        self.flush()

    def flush(self) -> None:
        self.out.write(b"0000")
        self.out.flush()


def clean(data: bytes, keys: Keys, relpath: str) -> bytes:
    """A working file as the repository stores it: a secret memory (or a proposal about
    one) sealed, and any other file as it is, whatever its frontmatter says (a template
    for secret notes is not a memory)."""
    if seal.is_sealed(data) or not seal.is_secret(data):
        return data
    if not _merges_by_key(keys.root, relpath):
        return data
    key = keys.get()
    if key is None:
        raise seal.SealError(
            "it is secret and this device has no sealing key for the vault; "
            "run `memoryctl keys import` (or `memoryctl keys new` for a vault with none yet)"
        )
    return seal.seal(data, key)


def smudge(data: bytes, keys: Keys) -> bytes:
    """A stored file as the working tree holds it: opened when this device can."""
    if not seal.is_sealed(data):
        return data
    key = keys.get()
    if key is None:
        return data  # shown as sealed; the file stays exactly as stored
    try:
        return seal.unseal(data, key)
    except seal.SealError:
        return data  # a wrong key or a corrupt file: kept as stored, reported by the index


def serve_filter() -> int:
    packets = _Packets()
    keys = Keys(Path.cwd())
    try:
        if packets.read_list() != ["git-filter-client", "version=2"]:
            return 1
        packets.write_list("git-filter-server", "version=2")
        offered = packets.read_list()
        packets.write_list(*(c for c in ("capability=clean", "capability=smudge") if c in offered))
        while True:
            header = dict(item.split("=", 1) for item in packets.read_list())
            data = packets.read_content()
            try:
                if header.get("command") == "clean":
                    result = clean(data, keys, header.get("pathname", ""))
                else:
                    result = smudge(data, keys)
            except seal.SealError as error:
                print(f"memoryctl: cannot seal {header.get('pathname')}: {error}", file=sys.stderr)
                packets.write_list("status=error")
                continue
            packets.write_list("status=success")
            packets.write_content(result)
            packets.flush()  # the status stays "success"
    except EOFError:
        return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["merge"] and len(argv) == 5:
        return merge(*argv[1:])
    if argv == ["filter"]:
        return serve_filter()
    print("usage: python -m memoryctl.storage.gitdriver merge|filter", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
