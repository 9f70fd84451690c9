"""What a person (or a script) can do to a vault. The CLI, the TUI and the MCP server
call these functions and hold no logic of their own.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from memoryctl import matching, review_actions
from memoryctl.memory import DEFAULT_NAMESPACE, SOURCE_KINDS, VISIBILITIES, Anchor, Memory, new_id
from memoryctl.moments import iso, moment, parse_moment
from memoryctl.storage import clear_secrets, gitrepo, gitsync, notefile
from memoryctl.storage.config import CONFIG_NAME, DEFAULT_CONFIG_TEXT
from memoryctl.storage.merge import merges_by_key
from memoryctl.storage.vault import Vault, VaultError, read_file
from memoryctl.wording import counted

VAULT_README = """\
# Memory vault

This folder is a memoryctl vault: each Markdown file with YAML frontmatter is one
memory. Edit notes in any editor; memoryctl notices. Every change memoryctl makes is a
git commit, so `git log` shows what changed and why.

Settings live in `memoryctl.toml`. The search index lives outside this folder and can
always be rebuilt with `memoryctl reindex --full`.
"""
VAULT_GITIGNORE = ".memoryctl/\n*.tmp\n.DS_Store\n"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class InitReport:
    """What `init_vault` did: what it created, and what of the folder it took in."""

    created: list[str]
    memories: int  # memory files in the folder
    others: list[str]  # files git neither tracks nor ignores: left for the person to commit
    ignores_added: list[str] = field(default_factory=list)  # lines added to a .gitignore
    sealed: list[str] = field(default_factory=list)  # secret memories committed sealed
    notices: list[str] = field(default_factory=list)  # the key made, or secrets left out


def init_vault(path: Path, *, every_file: bool = False) -> InitReport:
    """Make `path` a vault. Existing files are kept as they are. In a new repository the
    first commit holds the settings and the memories, and only those unless `every_file`
    is asked for; an existing `.gitignore` gets the vault's ignores it lacks."""
    from memoryctl.storage.config import load_config
    from memoryctl.storage.scan import scan

    path = path.resolve()  # git runs in the vault: a path relative to here would not hold there
    path.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    gitrepo.refuse_unless_usable(path)
    new_repo = not gitrepo.is_repo(path)
    if new_repo:
        gitrepo.init(path)
        created.append("git repository")
    for name, text in (
        (".gitignore", VAULT_GITIGNORE),
        (CONFIG_NAME, DEFAULT_CONFIG_TEXT),
        ("README.md", VAULT_README),
    ):
        target = path / name
        if not target.exists():
            target.write_text(text, encoding="utf-8")
            created.append(name)
    added = [] if ".gitignore" in created else add_ignores(path / ".gitignore")
    # The sealing filter is set up before anything is committed, so that a secret memory
    # the person commits by hand is sealed (or refused) from the vault's first day.
    setup = gitsync.install(path)
    if setup.attributes:
        created.append(gitsync.ATTRIBUTES)
    if setup.config:
        created.append("the memory merge driver and the sealing filter")
    settings = [
        n for n in (".gitignore", CONFIG_NAME, "README.md", gitsync.ATTRIBUTES) if n in created
    ]
    if added or new_repo:  # a new repository takes the vault's settings, however they came
        settings = sorted({*settings, ".gitignore", CONFIG_NAME})
    config = load_config(path)
    memories = [f.relpath for f in scan(path, config).files]
    report = InitReport(created, len(memories), [], added)
    if new_repo:
        # The first commit names the vault on every device (its sealing key is filed under
        # it), so it carries a random id: two vaults made alike in one second stay two.
        # There is no key before it, so it holds no secret memory: those follow, sealed.
        sealable = partial(merges_by_key, config=config)
        held_back = clear_secrets.untracked_secrets(path, sealable)
        if every_file:
            taken, leave_out = ["."], held_back
        else:
            taken, leave_out = sorted({*settings, *memories} - set(held_back)), []
        message = f"Initialize memoryctl vault\n\nVault-Id: {secrets.token_hex(8)}"
        gitrepo.first_commit(path, taken, message, leave_out=leave_out, options=gitsync.NO_FILTER)
        if held_back:
            _commit_sealed(path, held_back, sealable, report)
        report.others = [p for p in gitrepo.untracked(path) if p not in held_back]
    else:
        gitrepo.commit(path, settings, "Add memoryctl vault settings", options=gitsync.NO_FILTER)
    return report


def _commit_sealed(
    root: Path, paths: list[str], sealable: Callable[[str], bool], report: InitReport
) -> None:
    """Commit a new vault's secret memories sealed, making its key; with no keyring to
    keep a key in, they stay uncommitted, in clear only in the folder."""
    from memoryctl.storage import sealkey

    count = counted(len(paths), "secret memory", "secret memories")
    try:
        plan = gitsync.commit_plan(root, paths, f"Add {count}, sealed", sealable)
    except sealkey.SealingKeyError as error:
        report.notices.append(
            f"Left {count} uncommitted ({_some(paths)}): a secret memory is committed "
            f"only sealed, and no key could be made. {error}"
        )
        return
    gitrepo.commit(root, plan.paths, plan.message, plan.stored, plan.options)
    report.sealed = list(paths)
    report.notices += plan.notices
    report.notices.append(f"Committed {count} sealed ({_some(paths)}).")


def _some(paths: list[str], most: int = 5) -> str:
    return ", ".join(paths[:most]) + (", …" if len(paths) > most else "")


def add_ignores(gitignore: Path) -> list[str]:
    """Append the vault's ignores that an existing `.gitignore` lacks; return them."""
    raw = gitignore.read_text(encoding="utf-8")
    have = {line.strip() for line in raw.splitlines()}
    missing = [line for line in VAULT_GITIGNORE.splitlines() if line not in have]
    if missing:
        lead = "" if not raw or raw.endswith("\n") else "\n"
        gitignore.write_text(raw + lead + "\n".join(missing) + "\n", encoding="utf-8")
    return missing


def slug(text: str, limit: int = 60) -> str:
    words = re.findall(r"[^\W_]+", text.casefold())
    result = ""
    for word in words:
        if len(result) + len(word) + 1 > limit:
            break
        result = f"{result}-{word}" if result else word
    return result or "memory"


def title_for(body: str) -> str:
    first = next((line.strip(" #") for line in body.splitlines() if line.strip()), "")
    if len(first) <= 72:
        return first or "Untitled"
    cut = first[:72].rsplit(" ", 1)[0]
    return cut + "…"


def parse_anchor(spec: str) -> Anchor:
    path, _, symbol = spec.partition("#")
    if not path.strip():
        raise VaultError(f"anchor {spec!r} needs a path, as PATH or PATH#SYMBOL")
    return Anchor(path=path.strip(), symbol=symbol.strip() or None)


def parse_source(spec: str | None) -> dict[str, str] | None:
    """`user`, `tool:pytest run`, `document:https://…`: a kind and an optional reference."""
    if spec is None:
        return None
    kind, _, ref = spec.partition(":")
    kind = kind.strip()
    if kind not in SOURCE_KINDS:
        raise VaultError(
            f"source kind {kind!r} is not one of {', '.join(SOURCE_KINDS)} (as KIND or KIND:REF)"
        )
    return {"kind": kind, "ref": ref.strip()} if ref.strip() else {"kind": kind}


@dataclass
class NewMemory:
    body: str
    title: str | None = None
    kind: str | None = None
    pinned: bool = False
    tags: Sequence[str] = ()
    namespace: str = DEFAULT_NAMESPACE
    visibility: str | None = None
    source: str | None = None
    source_ref: str | None = None
    created: str | None = None
    deprecates: Sequence[str] = ()
    derived_from: Sequence[str] = ()
    retires: Sequence[str] = ()
    anchors: Sequence[str] = ()
    subject: str | None = None
    predicate: str | None = None
    value: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


def _fresh_id(vault: Vault) -> str:
    while True:
        candidate = new_id(secrets.randbits(50))
        if not vault.index.resolve(candidate):
            return candidate


def frontmatter_for(vault: Vault, new: NewMemory, now: dt.datetime) -> dict[str, object]:
    if not new.body.strip():
        raise VaultError("a memory needs some text")
    if new.visibility is not None and new.visibility not in VISIBILITIES:
        raise VaultError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    for needle in new.deprecates:
        problem = matching.check_needle(needle)
        if problem:
            raise VaultError(problem)
    created = iso(now)
    if new.created:
        try:
            created = parse_moment(new.created)
        except ValueError:
            raise NotAMoment("created", new.created) from None
    data: dict[str, object] = {
        "id": _fresh_id(vault),
        "title": new.title or title_for(new.body),
        "kind": new.kind or ("correction" if new.deprecates else "fact"),
        "status": "active",
    }
    if new.pinned:
        data["pinned"] = True
        data["pin_order"] = _next_pin_order(vault)
    data["created"] = moment(created)
    data["updated"] = moment(iso(now))
    if new.tags:
        data["tags"] = list(dict.fromkeys(new.tags))
    data["namespace"] = new.namespace or DEFAULT_NAMESPACE
    if new.visibility:
        data["visibility"] = new.visibility
    source = parse_source(new.source)
    if source is not None:
        if new.source_ref:
            source["ref"] = new.source_ref
        data["source"] = source
    if new.deprecates:
        data["deprecates"] = list(dict.fromkeys(new.deprecates))
    if new.derived_from:
        missing = [ref for ref in new.derived_from if not vault.index.resolve(ref)]
        if missing:
            raise VaultError(f"derived_from names no memory: {', '.join(missing)}")
        data["derived_from"] = [vault.resolve(ref).id for ref in new.derived_from]
    if new.retires:
        missing = [ref for ref in new.retires if not vault.index.resolve(ref)]
        if missing:
            raise VaultError(f"retires names no memory: {', '.join(missing)}")
        data["retires"] = list(dict.fromkeys(vault.resolve(ref).id for ref in new.retires))
    if new.anchors:
        data["anchors"] = [parse_anchor(spec).as_dict() for spec in new.anchors]
    for key in ("subject", "predicate", "value"):
        if getattr(new, key):
            data[key] = getattr(new, key)
    data.update(new.extra)
    return data


def add_memory(
    vault: Vault, new: NewMemory, *, now: dt.datetime | None = None, why: str | None = None
) -> Memory:
    moment = now or utcnow()
    # Under the write lock from the first read: two writers must not draw the same file
    # name or the same pin_order.
    with vault.writing():
        data = frontmatter_for(vault, new, moment)
        note = notefile.new_note(data, new.body.strip("\n"))
        folder = f"memories/{slug(str(data['namespace']), 40)}"
        # A secret memory's file name is in clear on a remote, so it is named by its id.
        secret = data.get("visibility") == "secret"
        relpath = vault.free_path(folder, str(data["id"]) if secret else slug(str(data["title"])))
        kind = "correction" if new.deprecates else "memory"
        message = f"Add {kind}: {data['title']}" + (f"\n\n{why}" if why else "")
        return vault.create(relpath, note, message)


def same_title_as(vault: Vault, memory: Memory) -> tuple[Memory, ...]:
    """The other current memories of this one's title (folded), kind and namespace,
    oldest first, apart from those it names in `retires`: a new memory that has one is
    shown beneath it in the bundle, and a check proposes retiring the older. Each face
    tells the person (or agent) who adds it, with how to replace it instead."""
    key = memory.title_group
    if key is None:
        return ()
    found = [
        m
        for m in vault.index.of_titles([key[0]])
        if m.title_group == key and m.id != memory.id and m.id not in memory.retires
    ]
    return tuple(sorted(found, key=lambda m: m.order_key))


def _next_pin_order(vault: Vault) -> int:
    orders = [m.pin_order for m in vault.index.pins() if m.pin_order is not None]
    return int(max(orders, default=0)) + 1


class NotPinnable(VaultError):
    """Only a current memory can be pinned; this one is retired or held for review."""

    def __init__(self, memory: Memory) -> None:
        self.memory_id = memory.id
        self.title = memory.title
        self.status = memory.status
        state = "retired" if memory.status == "retired" else "held for review"
        super().__init__(f"{memory.id} ({memory.title}) is {state}; only a current one is pinned")


def can_pin(memory: Memory) -> bool:
    """A pin is always in context, and a retired or held memory is out of it."""
    return memory.status == "active" and not memory.broken


# The decisions a person takes on one memory, by the name `available_actions` gives each.
DIRECT_ACTIONS = {
    "replace": review_actions.REPLACE,
    "retire": review_actions.RETIRE,
    "restore": review_actions.RESTORE,
    "confirm": review_actions.CONFIRM,
    "hold": review_actions.HOLD,
}


def available_actions(memory: Memory) -> frozenset[str]:
    """What a person can do to a memory as it is now: `pin` or `unpin`, and each decision
    whose guard allows it: `replace` (its text, in place), `retire`, `restore`, `confirm`
    (it is current) and `hold` (propose a review). `edit_file` (in an editor of their own)
    replaces the text by hand, so it goes with `replace`; a file memoryctl cannot read
    can only be fixed that way."""
    if memory.broken:
        return frozenset({"edit_file"})
    found = {"unpin"} if memory.pinned else ({"pin"} if can_pin(memory) else set())
    found |= {name for name, action in DIRECT_ACTIONS.items() if action.allows(memory)}
    if "replace" in found:
        found.add("edit_file")
    return frozenset(found)


def set_pinned(vault: Vault, ref: str, pinned: bool) -> Memory:
    with vault.writing():  # two faces pinning at once must not share a pin_order
        return _set_pinned(vault, ref, pinned)


def _set_pinned(vault: Vault, ref: str, pinned: bool) -> Memory:
    memory = vault.resolve(ref)
    loaded = vault.load(memory)
    if loaded.memory.pinned == pinned:
        state = "already pinned" if pinned else "not pinned"
        raise VaultError(f"{memory.id} ({memory.title}) is {state}")
    if pinned and not can_pin(loaded.memory):
        raise NotPinnable(loaded.memory)
    if pinned:
        changes: dict[str, object] = {"pinned": True, "pin_order": _next_pin_order(vault)}
        message = f"Pin {memory.title}"
    else:
        changes = {"pinned": False, "pin_order": None}
        message = f"Unpin {memory.title}"
    return vault.write(loaded, changes, f"{message}\n\nmemory: {memory.id}")


def reorder_pins(vault: Vault, ordered_ids: Sequence[str]) -> list[Memory]:
    """Give pins the order of `ordered_ids` (1, 2, 3 …), in one commit."""
    with vault.writing():
        return _reorder_pins(vault, ordered_ids)


def _reorder_pins(vault: Vault, ordered_ids: Sequence[str]) -> list[Memory]:
    changed: list[str] = []
    for position, mid in enumerate(ordered_ids, start=1):
        memory = vault.resolve(mid)
        if memory.pin_order == position:
            continue
        loaded = vault.load(memory)
        note = vault.changed_note(loaded, {"pin_order": position})
        vault.write_file(memory.path, note.to_bytes(), loaded.sha)
        changed.append(memory.path)
    if changed:
        vault.index.sync_paths(changed)
        vault.commit(changed, "Reorder pins")
    return vault.index.pins()


def record_external_edit(vault: Vault, memory: Memory, before_sha: str) -> Memory | None:
    """After an editor closed: re-index the file and commit it if it changed."""
    raw = read_file(vault.root, memory.path, "was deleted in the editor")
    if notefile.sha256(raw) == before_sha:
        return None
    with vault.writing():
        vault.index.sync_paths([memory.path])
        updated = vault.index.by_path(memory.path)
        vault.commit([memory.path], f"Edit {memory.title}\n\nmemory: {memory.id}")
    return updated


class NotAMoment(VaultError):
    """A moment given for a memory (its `created`) that is not a date."""

    def __init__(self, key: str, value: str) -> None:
        super().__init__(f"{key} {value!r} is not a date (use ISO 8601, like 2026-09-19T17:33:00Z)")
        self.key = key
        self.value = value


class EditConflict(VaultError):
    """The file changed on disk after it was opened for editing; nothing was written."""

    def __init__(self, memory: Memory, disk_text: str) -> None:
        super().__init__(
            f"{memory.path} changed on disk since you opened it; not saved. "
            "Reload it, or look at the difference first."
        )
        self.disk_text = disk_text


def read_for_edit(vault: Vault, memory: Memory) -> tuple[str, str]:
    """A memory's text as it is on disk now, and the file's hash a save must still find."""
    loaded = vault.load(memory)
    return loaded.memory.body, loaded.sha


def replace_in_place(
    vault: Vault, memory: Memory, body: str, before_sha: str, *, now: dt.datetime | None = None
) -> Memory:
    """Replace a memory's text with what the person wrote: the same file and the same id,
    recorded as a replacement (git keeps the old text; what was derived from it is
    proposed for review). Refused, with nothing written, if the file changed on disk
    since `before_sha` was read.
    """
    from memoryctl.decisions import act

    loaded = vault.load(memory)
    if loaded.sha != before_sha:
        raise EditConflict(memory, loaded.memory.body)
    if body.strip() == loaded.memory.body.strip():
        return loaded.memory
    outcome = act(vault, "replace", loaded.memory.id, now=now or utcnow(), body=body)
    return outcome.memory or loaded.memory
