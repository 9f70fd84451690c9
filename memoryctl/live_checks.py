"""Live checks: every check that can propose runs whenever the index takes in a change.

A CLI command (when it opens the vault and when it ends), the TUI's watcher and the
MCP server call `check_changes` after the index has synced. It looks only at the
memories that changed since it last ran (every changed file gets a new rowid; see
`storage/changes.py`), plus whatever each change touches: the memories a new
`retires` names and those that name a changed one, the facts about the same subject
that a changed fact may end or be ended by, a changed memory whose `expires` has
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
from dataclasses import dataclass, field

from memoryctl.anchors import RepoFiles, anchor_suggestions, repo_root
from memoryctl.checks import anchored_memories, explicit_suggestions, find_all, retired_lineage
from memoryctl.decisions import Change
from memoryctl.expiry import expiry_suggestions
from memoryctl.memory import Memory
from memoryctl.proposals import Proposal, Suggestion, proposal_id
from memoryctl.rules import exclusions, is_typed, load_registry, rule_suggestions
from memoryctl.storage.config import PROPOSALS_DIR
from memoryctl.storage.vault import Vault, VaultError

# More changed rows than this (a cold build, a large `git pull`) and the whole vault
# is checked at once: at that size one pass over it is quicker than one per change.
BULK = 2000


@dataclass
class LiveReport:
    checked: int = 0  # memories that changed since the last run
    whole: bool = False  # the whole vault was checked
    proposed: list[Proposal] = field(default_factory=list)
    commit: str | None = None


def suggestions_for(vault: Vault, changed: list[Memory], now: dt.datetime) -> list[Suggestion]:
    """What every proposing check finds about these changed memories."""
    index = vault.index
    ids = {m.id for m in changed}

    naming = {m.id: m for m in changed if m.retires}
    naming.update((m.id, m) for m in index.naming_in_retires(ids))
    known = index.get_many({t for m in naming.values() for t in m.retires})
    explicit, _ = explicit_suggestions(list(naming.values()), known)

    registry = load_registry(vault.config)
    typed = [m for m in changed if is_typed(m)]
    excluding = exclusions(registry)
    subjects = sorted({m.subject for m in typed if m.subject})
    predicates = sorted(
        {p for m in typed if m.predicate for p in (m.predicate, *excluding.get(m.predicate, ()))}
    )
    facts = {m.id: m for m in index.facts_about(subjects, predicates)}
    facts.update((m.id, m) for m in typed)
    rules = rule_suggestions(facts.values(), registry)

    expiring = expiry_suggestions([m for m in changed if m.expires], now)
    descending = retired_lineage(vault, [m for m in changed if m.status == "retired"])
    return [*explicit, *rules, *expiring, *descending, *_anchor_suggestions(vault, changed)]


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
    """Run the proposing checks over what changed since they last ran, and file what
    they find that has never been proposed."""
    index = vault.index
    top = index.newest_rowid()
    mark = index.live_mark()
    report = LiveReport()
    if mark is not None and top <= mark:
        return report
    if mark is None or index.rows_after(mark) > BULK:
        report.whole = True
        report.checked = index.count()
        found = find_all(vault, now).suggestions
        found += _anchor_suggestions(vault, anchored_memories(vault))
    else:
        changed = index.memories_after(mark)
        report.checked = len(changed)
        found = suggestions_for(vault, changed, now)
    found = unfiled(vault, found)
    if found:
        change = Change.start(vault, now)
        report.proposed = change.propose(found)
        if report.proposed:
            report.commit = change.commit(_message(report))
    index.set_live_mark(top)
    return report


def unfiled(vault: Vault, found: list[Suggestion]) -> list[Suggestion]:
    """The suggestions whose proposal file is not there. A proposal's file is named
    after its key, so one stat per suggestion tells, where listing a queue of thousands
    to compare keys would take most of a second; `Change.propose` still compares the
    keys of what is left, so a file that merely shares a name proposes nothing twice."""
    folder = vault.root / PROPOSALS_DIR
    return [s for s in found if not (folder / f"{proposal_id(s.key)}.md").exists()]


def _message(report: LiveReport) -> str:
    lines = [f"Check changes: propose {len(report.proposed)}", ""]
    for p in report.proposed:
        lines.append(f"proposal {p.id}: {p.action} {', '.join(p.targets)} ({p.describe_origin()})")
    return "\n".join(lines)
