"""The checks that propose: explicit naming, typed-fact rules, shared titles, expiry,
lineage, anchors.

`memoryctl check` runs the first four, `memoryctl check-anchors` the last, and
`check_now` both (the anchors when the vault names its code repository). A check
files a proposal for what it finds unless a proposal with the same key exists, in any
state: running a check twice proposes nothing new, and a declined proposal does not
come back from the same trigger. A pending proposal that the check no longer finds
(the memory was retired another way, the date was moved, the code was fixed) is
withdrawn, with a note, so the queue only holds what still applies.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryctl import lineage
from memoryctl.anchors import AnchorBreak, RepoFiles, anchor_suggestions, repo_root, spec
from memoryctl.decisions import Change
from memoryctl.expiry import expiry_suggestions
from memoryctl.memory import Memory
from memoryctl.proposals import BY_CHECK, Proposal, Suggestion
from memoryctl.rules import load_registry, rule_suggestions
from memoryctl.same_title import title_suggestions
from memoryctl.storage.vault import Vault

# The notes a check writes when it withdraws a proposal because what proposed it no
# longer holds. Such a proposal is memoryctl's to take back and so memoryctl's to bring
# back: a check that finds its key again makes it pending again (`REOPENED`). One the
# person declined, or that a decision withdrew as moot, stays as it is.
NO_LONGER_FOUND = "the check that proposed it no longer finds it"
TRIGGER_UNDONE = "what proposed it changed, and no longer proposes it"
ANCHORS_FINE = "its anchors check out again"
ALREADY_RETIRED = " is already retired"
REOPENED = "what proposed it is back"


def withdrawn_by_check(proposal: Proposal) -> bool:
    """Whether a check (not the person, nor a decision) withdrew this proposal: as its
    decision records it, or, in a file written before decisions said who withdrew, as
    the note a check writes says."""
    if proposal.state != "withdrawn" or proposal.decision is None:
        return False
    if proposal.decision.by is not None:
        return proposal.decision.by == BY_CHECK
    note = proposal.decision.note or ""
    return note in (NO_LONGER_FOUND, TRIGGER_UNDONE, ANCHORS_FINE) or note.endswith(ALREADY_RETIRED)


def found_again(queue: Iterable[Proposal], keys: Collection[str]) -> list[Proposal]:
    """The proposals a check withdrew whose key a check finds again: they come back."""
    return [p for p in queue if p.key in keys and withdrawn_by_check(p)]


@dataclass(frozen=True)
class Unreplaced:
    """A memory names, in `retires`, an id that is no memory: reported, never dropped."""

    memory: Memory
    target: str

    def as_json(self) -> dict[str, str]:
        return {"memory": self.memory.id, "title": self.memory.title, "target": self.target}


def explicit_suggestions(
    memories: Iterable[Memory], known: Mapping[str, Memory]
) -> tuple[list[Suggestion], list[Unreplaced]]:
    """One retirement per id an active memory names in `retires`.

    A named id that is no memory comes back as unreplaced; one already retired needs
    nothing; the memory itself, and memories that name each other round a cycle,
    propose nothing (`doctor` reports them).
    """
    suggestions: list[Suggestion] = []
    unreplaced: list[Unreplaced] = []
    memories = list(memories)
    in_cycles = {mid for cycle in retires_cycles(memories) for mid in cycle}
    for memory in memories:
        if memory.status != "active" or memory.broken or memory.id in in_cycles:
            continue
        for target in dict.fromkeys(memory.retires):
            if target == memory.id:
                continue
            found = known.get(target)
            if found is None:
                unreplaced.append(Unreplaced(memory, target))
            elif found.status != "retired":
                suggestions.append(
                    Suggestion(
                        action="retire",
                        targets=(target,),
                        reason=f"{memory.id} ({memory.title}) names it in retires",
                        origin="explicit",
                        ref=memory.id,
                    )
                )
    return suggestions, unreplaced


def retires_problems(naming: Sequence[Memory]) -> list[tuple[Memory, str]]:
    """`retires` lists that cannot be meant: one that names the memory itself, and
    memories that name each other round a cycle. Neither proposes anything (see
    `explicit_suggestions`), so a hand edit can never make the queue loop."""
    found: list[tuple[Memory, str]] = []
    by_id = {m.id: m for m in naming}
    for memory in naming:
        if memory.id in memory.retires:
            found.append((memory, "retires: names the memory itself; ignored"))
    for cycle in retires_cycles(naming):
        first = by_id[cycle[0]]
        found.append(
            (
                first,
                f"retires forms a cycle: {' → '.join(cycle)}; none of them is proposed for "
                "retirement until one stops naming the next",
            )
        )
    return found


def retires_cycles(naming: Sequence[Memory]) -> list[list[str]]:
    edges = {m.id: [t for t in m.retires if t != m.id] for m in naming if m.has_id}
    return [c for c in lineage.cycles(edges) if all(mid in edges for mid in c)]


@dataclass
class CheckReport:
    proposed: list[Proposal] = field(default_factory=list)
    withdrawn: list[Proposal] = field(default_factory=list)
    reopened: list[Proposal] = field(default_factory=list)  # pending again: see REOPENED
    already: int = 0  # findings a proposal already covers (in any state)
    unreplaced: list[Unreplaced] = field(default_factory=list)
    refused: list[tuple[Memory, AnchorBreak]] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    commit: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "proposed": [p.as_json() for p in self.proposed],
            "withdrawn": [p.as_json() for p in self.withdrawn],
            "reopened": [p.as_json() for p in self.reopened],
            "already_proposed": self.already,
            "unreplaced": [u.as_json() for u in self.unreplaced],
            "refused": [
                {"memory": m.id, "anchor": spec(b.anchor), "reason": b.detail}
                for m, b in self.refused
            ],
            "checked": dict(self.checked),
            "commit": self.commit,
        }


def retired_lineage(vault: Vault, among: Sequence[Memory] | None = None) -> list[Suggestion]:
    """Review of what descends from each retired memory (or each retired one `among`
    these), however it was retired (an approval, `memoryctl retire`, or a hand edit of
    `status`). The trigger names the retiring decision, so this finds exactly what that
    decision's cascade filed."""
    if among is None:
        ancestors = vault.index.retired_with_descendants()
    else:
        ancestors = [m for m in among if m.status == "retired"]
    children = vault.index.derived_children
    suggestions: list[Suggestion] = []
    for ancestor in ancestors:
        record = ancestor.retired_record
        reason, decision = (record.reason, record.proposal) if record else (None, None)
        found = lineage.descendants([ancestor.id], children)
        memories = vault.index.get_many(d.id for d in found)
        event = f"was retired: {reason}" if reason else "was retired"
        suggestions += lineage.lineage_suggestions(
            ancestor, found, memories, event=event, trigger=f"retired:{decision or ''}"
        )
    return suggestions


def withdraw_stale(
    change: Change,
    covers: Iterable[Proposal],
    found: set[str],
    note: str,
) -> None:
    """Withdraw the pending proposals of these origins that the check no longer finds.

    A proposal whose target is gone stays: it is shown as unresolved, for the person.
    """
    stale = [p for p in covers if p.is_pending and p.key not in found]
    if not stale:
        return
    existing = change.vault.index.get_many({t for p in stale for t in p.targets})
    for proposal in stale:
        targets = [existing.get(t) for t in proposal.targets]
        if any(m is None for m in targets):
            continue
        retired = [m.id for m in targets if m is not None and m.status == "retired"]
        why = f"{', '.join(retired)}{ALREADY_RETIRED}" if retired else note
        change.withdraw([proposal], why, by=BY_CHECK)


def file_whole_vault(change: Change, suggestions: list[Suggestion]) -> None:
    """What a check of the whole vault files, as `check` and a bulk live check both do:
    its suggestions proposed, what a check withdrew and finds again reopened, and what
    it no longer finds withdrawn (the change's `filed`, `reopened` and `withdrawn`)."""
    keys = {s.key for s in suggestions}
    change.propose(suggestions)
    change.reopen(found_again(change.queue.proposals, keys), REOPENED)
    withdraw_stale(change, whole_vault_covers(change.queue.proposals), keys, NO_LONGER_FOUND)


def proposal_lines(
    proposed: Sequence[Proposal], withdrawn: Sequence[Proposal], reopened: Sequence[Proposal]
) -> list[str]:
    """The lines of a check's commit message below its title."""
    lines = [
        f"proposal {p.id}: {p.action} {', '.join(p.targets)} ({p.describe_origin()})"
        for p in proposed
    ]
    lines += [f"withdrawn {p.id}: {p.action} {', '.join(p.targets)}" for p in withdrawn]
    lines += [f"reopened {p.id}: {p.action} {', '.join(p.targets)}" for p in reopened]
    return lines


def _commit(change: Change, title: str, report: CheckReport) -> None:
    """Commit what a check filed, withdrew and reopened, and report what that was once
    another face's writes meanwhile are taken into account."""

    def message() -> str:
        head = f"{title}: propose {len(change.filed)}, withdraw {len(change.withdrawn)}"
        if change.reopened:
            head += f", reopen {len(change.reopened)}"
        lines = proposal_lines(change.filed, change.withdrawn, change.reopened)
        return "\n".join([head, "", *lines])

    report.commit = change.commit(message)
    report.proposed, report.withdrawn, report.reopened = (
        change.filed,
        change.withdrawn,
        change.reopened,
    )


@dataclass
class Findings:
    """What the checks found, before anything is filed."""

    suggestions: list[Suggestion]
    unreplaced: list[Unreplaced]
    checked: dict[str, int]


def find_all(vault: Vault, now: dt.datetime) -> Findings:
    """Explicit `retires`, the predicate registry's rules, shared titles, expiry, and
    the lineage of retired memories, over the whole vault."""
    naming = vault.index.naming_retires(active_only=True)
    known = vault.index.get_many({t for m in naming for t in m.retires})
    explicit, unreplaced = explicit_suggestions(naming, known)

    typed = vault.index.current_typed_facts()
    rules = rule_suggestions(typed, load_registry(vault.config))

    titled = vault.index.sharing_titles()
    same_title = title_suggestions(titled)

    dated = vault.index.current_with_expiry()
    expiring = expiry_suggestions(dated, now)

    descending = retired_lineage(vault)
    return Findings(
        [*explicit, *rules, *same_title, *expiring, *descending],
        unreplaced,
        {
            "explicit": len(naming),
            "typed_facts": len(typed),
            "same_title": len(titled),
            "expiring": len(dated),
            "lineage": len(descending),
        },
    )


def run_checks(vault: Vault, *, now: dt.datetime) -> CheckReport:
    """Everything `find_all` finds: file what it proposes, withdraw what it no longer
    finds."""
    change = Change.start(vault, now)
    report = CheckReport()
    found = find_all(vault, now)
    suggestions = found.suggestions
    report.unreplaced = found.unreplaced
    report.checked = found.checked
    file_whole_vault(change, suggestions)
    _commit(change, "Check", report)
    report.already = len({s.key for s in suggestions}) - len(report.proposed) - len(report.reopened)
    return report


def whole_vault_covers(queue: Iterable[Proposal]) -> list[Proposal]:
    """The proposals a check of the whole vault (`find_all`) would make again if they
    still applied: the rest are withdrawn when it no longer finds them."""
    return [
        p
        for p in queue
        if p.origin in ("explicit", "rule", "expiry")
        or (p.origin == "lineage" and "|retired:" in p.key)
    ]


def anchored_memories(vault: Vault) -> list[Memory]:
    return vault.index.with_anchors(include_retired=False)


def check_anchors(vault: Vault, repo: Path, *, now: dt.datetime) -> CheckReport:
    """Every anchored memory against the repository: a needs_review proposal for each
    one whose anchors broke; pending anchor proposals that check out again are withdrawn."""
    change = Change.start(vault, now)
    report = CheckReport()
    memories = anchored_memories(vault)
    found = anchor_suggestions(memories, RepoFiles(repo))
    report.refused = found.refused
    report.checked = {"memories": found.checked, "anchors": found.anchors}
    keys = {s.key for s in found.suggestions}
    change.propose(found.suggestions)
    change.reopen(found_again(change.queue.proposals, keys), REOPENED)
    covers = [p for p in change.queue.proposals if p.origin == "anchor"]
    withdraw_stale(change, covers, keys, ANCHORS_FINE)
    _commit(change, "Check anchors", report)
    report.already = len(keys) - len(report.proposed) - len(report.reopened)
    return report


def check_now(vault: Vault, *, now: dt.datetime) -> CheckReport:
    """Every check the vault is set up for, at once (c on the Review screen): what
    `memoryctl check` runs (`run_checks`), then what `memoryctl check-anchors` runs
    (`check_anchors`) when memoryctl.toml names the code repository (`[anchors] repo`).
    One report of both; `commit` is the last one made."""
    report = run_checks(vault, now=now)
    if not vault.config.anchors_repo:
        return report
    repo = repo_root(vault.root, vault.config.anchors_repo, None)
    anchored = check_anchors(vault, repo, now=now)
    return CheckReport(
        proposed=[*report.proposed, *anchored.proposed],
        withdrawn=[*report.withdrawn, *anchored.withdrawn],
        reopened=[*report.reopened, *anchored.reopened],
        already=report.already + anchored.already,
        unreplaced=report.unreplaced,
        refused=anchored.refused,
        checked={
            **report.checked,
            "anchored_memories": anchored.checked["memories"],
            "anchors": anchored.checked["anchors"],
        },
        commit=anchored.commit or report.commit,
    )
