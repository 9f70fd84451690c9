"""`memoryctl doctor`: everything in a vault that needs a person's attention."""

from __future__ import annotations

from dataclasses import dataclass

from memoryctl.matching import check_needle
from memoryctl.storage.vault import Vault


@dataclass(frozen=True)
class Finding:
    severity: str  # "error" or "warning"
    path: str
    message: str

    def line(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"

    def as_json(self) -> dict[str, str]:
        return {"severity": self.severity, "path": self.path, "message": self.message}


def diagnose(vault: Vault) -> list[Finding]:
    index = vault.index
    findings: list[Finding] = []
    for path, reason in index.broken_files():
        findings.append(Finding("error", path, reason))
    for path, problem in index.problems():
        if (path, problem) not in index.broken_files():
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
    if not vault.is_git:
        findings.append(
            Finding("warning", ".", "the vault is not a git repository; changes have no history")
        )
    unique = list(dict.fromkeys(findings))
    return sorted(unique, key=lambda f: (f.path, f.severity, f.message))
