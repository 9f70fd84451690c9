"""Live checks: every check that can propose runs whenever the index takes in a change.

A CLI command (when it opens the vault and when it ends), the TUI's watcher and the
MCP server call `check_changes` after the index has synced. It looks only at the
memories that changed since it last ran (every changed file gets a new rowid; see
`storage/changes.py`), plus whatever each change touches: the memories a new
`retires` names and those that name a changed one, the facts about the same subject
that a changed fact may end or be ended by (the rules propose only what involves the
changed fact, unless it stopped being current), the current memories that share a
changed memory's title (or the title it had), a changed memory whose `expires` has
passed, what descends from a memory that is now retired, and a changed memory's code
anchors when the vault names a repository.

What it finds is filed as pending proposals, all in one commit, and only when a
proposal with the same key does not exist already in any state: a declined proposal
never comes back from the same trigger, and a change that proposes nothing writes
nothing. Nothing is retired: only the person decides. `memoryctl check` stays as
"check everything now", and it also withdraws what no longer applies.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

from memoryctl.anchors import RepoFiles, anchor_suggestions, repo_root
from memoryctl.checks import (
    NO_LONGER_FOUND,
    REOPENED,
    TRIGGER_UNDONE,
    anchored_memories,
    explicit_suggestions,
    file_whole_vault,
    find_all,
    proposal_lines,
    retired_lineage,
    withdraw_stale,
    withdrawn_by_check,
)
from memoryctl.decisions import Change
from memoryctl.expiry import expiry_suggestions
from memoryctl.memory import Memory, normalized, title_key
from memoryctl.proposals import Proposal, ProposalError, Suggestion, proposal_from_file, proposal_id
from memoryctl.rules import (
    Predicate,
    folded_exclusions,
    is_typed,
    load_registry,
    rule_suggestions,
)
from memoryctl.same_title import title_suggestions
from memoryctl.storage.config import PROPOSALS_DIR
from memoryctl.storage.index import Index
from memoryctl.storage.vault import Vault, VaultBusy, VaultError

# The note on a proposal withdrawn because the change that triggered it is undone.
WITHDRAWN = TRIGGER_UNDONE

# More changed rows than this (a cold build, a large `git pull`) and the whole vault
# is checked at once: at that size one pass over it is quicker than one per change.
BULK = 2000
# How long a check waits for another writer before it is put off. Every face runs the
# checks when it opens; a burst of faces at once (the first open of a big vault files
# hundreds of proposals in one write) would otherwise queue each check behind the
# last, and the writes the faces were opened for behind them all.
CHECK_LOCK_WAIT = 2.0


@dataclass
class LiveReport:
    checked: int = 0  # memories that changed since the last run
    whole: bool = False  # the whole vault was checked
    proposed: list[Proposal] = field(default_factory=list)
    withdrawn: list[Proposal] = field(default_factory=list)
    reopened: list[Proposal] = field(default_factory=list)  # a check's withdrawal, undone
    commit: str | None = None
    deferred: bool = False  # another writer held the vault; nothing was filed or marked


def suggestions_for(
    vault: Vault, changed: list[Memory], now: dt.datetime
) -> tuple[list[Suggestion], list[Memory]]:
    """What every proposing check finds about these changed memories, and the typed
    facts the rules judged to find it."""
    index = vault.index
    ids = {m.id for m in changed}

    naming = {m.id: m for m in changed if m.retires}
    naming.update((m.id, m) for m in index.naming_in_retires(ids))
    known = index.get_many({t for m in naming.values() for t in m.retires})
    explicit, _ = explicit_suggestions(list(naming.values()), known)

    registry = load_registry(vault.config)
    typed = [m for m in changed if is_typed(m)]
    if any(m.status != "active" for m in typed):
        # A fact that stops being current by a hand edit may leave another the newest of
        # its predicate, and that one's proposals are new: the rules look at every fact
        # about the subject under these predicates, and propose all they find.
        facts = _facts_about(index, typed, registry, whole=True)
        rules = rule_suggestions(facts, registry)
    else:
        # What the rules propose about the changed facts: a proposal between two facts
        # that did not change was filed when the newer of them came.
        facts = _facts_about(index, typed, registry, whole=False)
        rules = rule_suggestions(facts, registry, ids)

    expiring = expiry_suggestions([m for m in changed if m.expires], now)
    descending = retired_lineage(vault, [m for m in changed if m.status == "retired"])
    found = [*explicit, *rules, *expiring, *descending, *_anchor_suggestions(vault, changed)]
    return found, facts


def shared_titles(
    index: Index, changed: list[Memory], earlier: list[Memory]
) -> tuple[list[Suggestion], list[Suggestion]]:
    """What shared titles propose now among the current memories of every title a
    changed memory has or had, and what they may have proposed before the change (the
    earlier versions are read without their bodies, so whatever their texts said): a
    pending proposal of the second that the first no longer makes is withdrawn."""
    titles = {key for key in map(title_key, [*changed, *earlier]) if key is not None}
    if not titles:
        return [], []
    current = index.of_titles(titles)
    ids = {m.id for m in changed}
    was = [m for m in current if m.id not in ids] + earlier
    return title_suggestions(current), title_suggestions(was, texts=False)


def _facts_about(
    index: Index, typed: list[Memory], registry: dict[str, Predicate], *, whole: bool
) -> list[Memory]:
    """The facts the rules need to judge these changed facts, with them.

    `whole`: every fact about their subjects under their predicates and those that
    exclude them. Otherwise only what decides a proposal that involves a changed fact
    (`rules.rule_suggestions` with `involving`): where it is the newest fact of a
    single-valued predicate, that predicate's every fact and the facts that exclude
    them (it may replace each); else the newest fact of each single-valued predicate
    near it and the facts that hold its value under its predicate, those that exclude
    it, and those that exclude these (what may end it, or what it may end and what
    else may end that). A subject can hold a thousand facts under one predicate; an
    edit to one of the older reads a handful.
    """
    excluding = folded_exclusions(registry)
    single = {normalized(name) for name, p in registry.items() if p.cardinality == "single"}

    def near(predicate: str) -> list[str]:
        return sorted({predicate, *excluding.get(predicate, ())})

    newest = index.newest_facts(
        (m.subject or "", p) for m in typed for p in near(normalized(m.predicate)) if p in single
    )
    newest_of = {(normalized(m.subject), normalized(m.predicate)): m.id for m in newest}
    found = {m.id: m for m in newest}
    for memory in typed:
        subject, predicate = normalized(memory.subject), normalized(memory.predicate)
        if whole or newest_of.get((subject, predicate)) == memory.id:
            found.update((m.id, m) for m in index.facts_about([subject], near(predicate)))
        around = sorted({q for p in near(predicate) for q in near(p)})
        found.update(
            (m.id, m) for m in index.facts_about([subject], around, normalized(memory.value))
        )
    found.update((m.id, m) for m in typed)
    return list(found.values())


def _anchor_suggestions(vault: Vault, memories: list[Memory]) -> list[Suggestion]:
    """Anchored memories against the code, when the vault names a repository that is
    there; the code itself changing is `check-anchors`' to find."""
    anchored = [m for m in memories if m.anchors and m.status != "retired"]
    if not anchored or not vault.config.anchors_repo:
        return []
    try:
        repo = repo_root(vault.root, vault.config.anchors_repo, None)
    except VaultError:
        return []
    return anchor_suggestions(anchored, RepoFiles(repo)).suggestions


def check_changes(vault: Vault, *, now: dt.datetime) -> LiveReport:
    """Run the proposing checks over what changed since they last ran, file what they
    find that has never been proposed, withdraw what a change no longer triggers, and
    bring back what a check withdrew and now finds again."""
    index = vault.index
    top = index.newest_rowid()
    mark = index.live_mark()
    upto = index.removed_upto()
    report = LiveReport()
    if mark is not None and top <= mark and not upto:
        return report
    change: Change | None = None
    if mark is None or index.rows_after(mark) > BULK:
        report.whole = True
        report.checked = index.count()
        found = find_all(vault, now).suggestions
        found += _anchor_suggestions(vault, anchored_memories(vault))
        # As `check` does: the queue is listed once, and what the whole vault no longer
        # proposes is withdrawn.
        change = Change.start(vault, now)
        file_whole_vault(change, found)
    else:
        changed = index.memories_after(mark)
        report.checked = len(changed)
        # A whole-vault pass needs no earlier versions: it withdraws what it no longer
        # finds anywhere. Only here are they read.
        earlier = index.removed(upto)
        before = triggered_by(vault, changed_triggers(earlier, changed))
        found, facts = suggestions_for(vault, changed, now)
        found += handed_back(vault, before, changed)
        titled, titled_before = shared_titles(index, changed, earlier)
        found += titled
        keys = {s.key for s in found}
        stale = _pending(vault, [s for s in [*before, *titled_before] if s.key not in keys])
        superseded = taken_over(vault, changed, found, keys, facts)
        fresh = unfiled(vault, found)
        unfiled_keys = {s.key for s in fresh}
        # A check's withdrawal is written by memoryctl, so its file says so plainly.
        filed = [s for s in found if s.key not in unfiled_keys]
        withdrawn = _filed(vault, filed, b"\nstate: withdrawn\n")
        back = [p for _, p in withdrawn if withdrawn_by_check(p)]
        change = Change.start(vault, now) if fresh or stale or superseded or back else None
        if change is not None:
            change.propose(fresh)
            withdraw_stale(change, stale, keys, WITHDRAWN)
            withdraw_stale(change, superseded, keys, NO_LONGER_FOUND)
            change.reopen(back, REOPENED)
    if change is not None and (change.filed or change.withdrawn or change.reopened):
        written = change
        try:
            report.commit = change.commit(lambda: _message(written), lock_wait=CHECK_LOCK_WAIT)
        except VaultBusy:
            # Another writer has the vault (often another face filing the same
            # proposals): this check is put off, and the next change runs it again.
            return LiveReport(report.checked, report.whole, deferred=True)
        # What is left once another face's writes meanwhile are taken into account.
        report.proposed, report.withdrawn = change.filed, change.withdrawn
        report.reopened = change.reopened
    index.set_live_mark(top)
    index.forget_removed(upto)
    return report


def _filed(
    vault: Vault, suggestions: list[Suggestion], holding: bytes = b""
) -> list[tuple[Suggestion, Proposal]]:
    """The proposals filed with these suggestions' keys, each read from the file its key
    names (so the queue is never listed); with `holding`, only files that hold these
    bytes are parsed."""
    filed = []
    for suggestion in suggestions:
        relpath = f"{PROPOSALS_DIR}/{proposal_id(suggestion.key)}.md"
        try:
            raw = (vault.root / relpath).read_bytes()
            if holding not in raw:
                continue
            proposal = proposal_from_file(relpath, raw, "")
        except (OSError, ProposalError):
            continue  # not filed, or unreadable: `doctor` and the Review screen say so
        if proposal.key == suggestion.key:
            filed.append((suggestion, proposal))
    return filed


def changed_triggers(before: list[Memory], changed: list[Memory]) -> list[Memory]:
    """The earlier versions of changed or removed memories whose trigger differs from
    the memory now (a `retires` it named, a typed fact it held): an edit of the text
    alone costs nothing."""
    now = {m.id: m for m in changed}
    return [m for m in before if _trigger(m) != _trigger(now.get(m.id))]


def triggered_by(vault: Vault, earlier: list[Memory]) -> list[Suggestion]:
    """What these earlier versions proposed, as the checks found it then."""
    if not earlier:
        return []
    registry = load_registry(vault.config)
    known = vault.index.get_many({t for m in earlier for t in m.retires})
    proposed, _ = explicit_suggestions([m for m in earlier if m.retires], known)
    for memory in (m for m in earlier if is_typed(m) and m.status != "retired"):
        facts = {m.id: m for m in _facts_about(vault.index, [memory], registry, whole=True)}
        facts[memory.id] = memory
        proposed += rule_suggestions(facts.values(), registry, {memory.id})
    return proposed


def handed_back(vault: Vault, before: list[Suggestion], changed: list[Memory]) -> list[Suggestion]:
    """What the rules propose now about the facts an earlier version ended.

    Each older fact is proposed once, by the newest fact that ends it. When that ender
    goes (Braga deleted, after Porto, both after Lisbon), the fact before it ends them
    again, and its proposal (retire Lisbon, from Porto) is what the rules find."""
    ids = {m.id for m in changed}
    ended = {t for s in before if s.origin == "rule" for t in s.targets if t not in ids}
    if not ended:
        return []
    registry = load_registry(vault.config)
    facts = [m for m in vault.index.get_many(ended).values() if is_typed(m)]
    facts = _facts_about(vault.index, facts, registry, whole=False)
    return [s for s in rule_suggestions(facts, registry, ended) if ended & set(s.targets)]


def taken_over(
    vault: Vault,
    changed: list[Memory],
    found: list[Suggestion],
    keys: set[str],
    facts: list[Memory],
) -> list[Proposal]:
    """The pending rule proposals that a changed fact takes over: when it becomes the
    newest fact to end an older one (Braga after Porto, both after Lisbon), the
    proposal the ender before it made about that fact (retire Lisbon, from Porto) is no
    longer what the rules find. The earlier ender is found by asking the rules about
    the facts they judged (`facts`, from `suggestions_for`) without the changed ones."""
    ids = {m.id for m in changed}
    ended = {t for s in found if s.origin == "rule" and s.ref in ids for t in s.targets}
    if not ended:
        return []
    registry = load_registry(vault.config)
    before = rule_suggestions([m for m in facts if m.id not in ids], registry, ended)
    return _pending(vault, [s for s in before if s.key not in keys and ended & set(s.targets)])


def _pending(vault: Vault, suggestions: list[Suggestion]) -> list[Proposal]:
    """The pending proposals filed with these suggestions' keys, each once."""
    return list({p.id: p for _, p in _filed(vault, suggestions) if p.is_pending}.values())


def _trigger(memory: Memory | None) -> tuple[object, ...] | None:
    """What a memory's proposals depend on: its status, `retires` and typed fact."""
    if memory is None:
        return None
    return (
        memory.status,
        memory.broken is None,
        memory.created,
        tuple(memory.retires),
        normalized(memory.subject),
        normalized(memory.predicate),
        normalized(memory.value),
    )


def unfiled(vault: Vault, found: list[Suggestion]) -> list[Suggestion]:
    """The suggestions whose proposal file is not there. A proposal's file is named
    after its key, so one stat per suggestion tells, where listing a queue of thousands
    to compare keys would take most of a second; `Change.propose` still compares the
    keys of what is left, so a file that merely shares a name proposes nothing twice."""
    folder = os.path.join(vault.root, PROPOSALS_DIR, "")
    return [s for s in found if not os.path.exists(f"{folder}{proposal_id(s.key)}.md")]


def _message(change: Change) -> str:
    title = f"Check changes: propose {len(change.filed)}"
    if change.withdrawn:
        title += f", withdraw {len(change.withdrawn)}"
    if change.reopened:
        title += f", reopen {len(change.reopened)}"
    lines = proposal_lines(change.filed, change.withdrawn, change.reopened)
    return "\n".join([title, "", *lines])
