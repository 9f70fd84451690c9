"""`memoryctl doctor`: everything in a vault that needs a person's attention."""

from __future__ import annotations

from dataclasses import dataclass

from memoryctl.matching import check_needle
from memoryctl.storage.vault import Vault


@dataclass(frozen=True)
class Finding:
    """One thing that needs attention. Its message names no command: what a person can
    do about it is data (`removable`, `decline`), and each face words it."""

    severity: str  # "error" or "warning"
    path: str
    message: str
    removable: bool = False  # a leftover of a stopped write, which the repairs remove
    decline: str | None = None  # the id of a proposal that can only be declined

    def line(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "severity": self.severity,
            "path": self.path,
            "message": self.message,
        }
        if self.removable:
            data["removable"] = True
        if self.decline:
            data["decline"] = self.decline
        return data


def diagnose(vault: Vault) -> list[Finding]:
    index = vault.index
    findings: list[Finding] = []
    broken = set(index.broken_files())  # read once: the loop below asks for every problem
    for path, reason in sorted(broken):
        findings.append(Finding("error", path, reason))
    for path, problem in index.problems():
        if (path, problem) not in broken:
            findings.append(Finding("warning", path, problem))
    for mid, paths in index.duplicate_ids().items():
        for path in paths:
            others = ", ".join(p for p in paths if p != path)
            findings.append(Finding("error", path, f"id {mid} is also used by {others}"))
    for memory in index.with_deprecates():
        for needle in memory.deprecates:
            problem = check_needle(needle)
            if problem:
                findings.append(Finding("warning", memory.path, f"deprecates: {problem}; ignored"))
    for memory in index.without_id():
        if memory.deprecates and not memory.broken:
            findings.append(
                Finding("warning", memory.path, "correction has no id, so it reaches nothing")
            )
    if vault.last_sync:
        for path, reason in vault.last_sync.skipped:
            findings.append(Finding("warning", path, reason))
    findings += review_findings(vault)
    findings += crash_findings(vault)
    if vault.git_refusal is not None:
        findings.append(Finding("error", ".", f"git will not work here: {vault.git_refusal}"))
    elif not vault.is_git:
        findings.append(
            Finding("warning", ".", "the vault is not a git repository; changes have no history")
        )
    unique = list(dict.fromkeys(findings))
    return sorted(unique, key=lambda f: (f.path, f.severity, f.message))


def review_findings(vault: Vault) -> list[Finding]:
    """Lineage cycles, unreadable or unresolved proposals, `retires` that name no memory,
    and anchor paths that would leave the repository."""
    from memoryctl.anchors import AnchorPathError, normalize_anchor_path
    from memoryctl.checks import retires_problems
    from memoryctl.lineage import cycles
    from memoryctl.proposals import ProposalStore
    from memoryctl.rules import fact_problems, load_registry

    index = vault.index
    findings: list[Finding] = []
    edges: dict[str, list[str]] = {}
    paths: dict[str, str] = {}
    for mid, path, source in index.derivations():
        edges.setdefault(mid, []).append(source)
        paths.setdefault(mid, path)
    for cycle in cycles(edges):
        findings.append(
            Finding(
                "warning",
                paths.get(cycle[0], cycle[0]),
                f"derived_from forms a cycle: {' → '.join(cycle)}; lineage stops going round it",
            )
        )
    loaded = ProposalStore.of(vault).load()
    for path, problem in loaded.problems:
        findings.append(Finding("error", path, f"{problem}; this proposal is skipped"))
    pending = [p for p in loaded.proposals if p.is_pending]
    known = index.get_many({t for p in pending for t in p.targets})
    for proposal in pending:
        for target in proposal.targets:
            if target not in known:
                findings.append(
                    Finding(
                        "warning",
                        proposal.path,
                        f"unresolved: its target {target} no longer exists; decline it",
                        decline=proposal.id,
                    )
                )
    naming = index.naming_retires()
    named = index.get_many({t for m in naming for t in m.retires})
    for memory in naming:
        for target in memory.retires:
            if target not in named:
                findings.append(
                    Finding("warning", memory.path, f"retires: {target} is no memory (unreplaced)")
                )
    for memory, problem in retires_problems(naming):
        findings.append(Finding("warning", memory.path, problem))
    registry = load_registry(vault.config)
    for memory in index.with_typed_parts():
        for problem in fact_problems(memory, registry):
            findings.append(Finding("warning", memory.path, problem))
    for memory in index.with_anchors():
        for anchor in memory.anchors:
            try:
                normalize_anchor_path(anchor.path)
            except AnchorPathError as error:
                findings.append(Finding("warning", memory.path, f"anchors: {error}"))
    return findings


def crash_findings(vault: Vault) -> list[Finding]:
    """What a write cut short left: temporary files, a stale git lock, memories saved but
    not committed, and decision records that name a missing proposal."""
    from memoryctl.leftovers import SYNC, leftovers

    findings = []
    for leftover in leftovers(vault):
        if leftover.kind == "temporary":
            what = "a sync" if leftover.detail == SYNC else "a write"
            message = f"a temporary file left by {what} that stopped"
            findings.append(Finding("warning", leftover.path, message, removable=True))
        elif leftover.kind == "git-lock":
            message = (
                f"left by a git that stopped {leftover.detail} ago; no commit can be made "
                "until it is removed"
            )
            findings.append(Finding("error", leftover.path, message, removable=True))
        elif leftover.kind == "uncommitted":
            findings.append(Finding("warning", leftover.path, "saved but not committed"))
        else:
            message = f"retired.proposal names {leftover.detail}, which is no proposal"
            findings.append(Finding("error", leftover.path, message))
    return findings
