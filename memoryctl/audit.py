"""The audit: what was retired, when, why, and by which decision.

`memoryctl retired` answers "what did you retire, and why?" from the memories
themselves (their `retired` record) and the proposals that decided it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memoryctl.memory import DecisionRecord, Memory
from memoryctl.proposals import Proposal, ProposalStore
from memoryctl.storage.vault import Vault


@dataclass(frozen=True)
class Retirement:
    memory: Memory
    at: str | None  # None: retired by hand, without a record
    reason: str | None
    proposal_id: str | None
    proposal: Proposal | None

    @property
    def by_hand(self) -> bool:
        return self.proposal_id is None and not self.on_import

    @property
    def on_import(self) -> bool:
        """Retired as it came in: its source held it out of use (paused in mem0)."""
        record = self.memory.retired_record
        return (
            self.proposal_id is None
            and self.memory.source_kind == "import"
            and record is not None
            and record.reason is not None
        )

    def as_json(self) -> dict[str, Any]:
        p = self.proposal
        return {
            "id": self.memory.id,
            "title": self.memory.title,
            "path": self.memory.path,
            "retired_at": self.at,
            "reason": self.reason,
            "proposal": self.proposal_id,
            "decision": (
                {
                    "origin": {"kind": p.origin, "ref": p.ref},
                    "state": p.state,
                    "at": p.decision.at if p.decision else None,
                    "note": p.decision.note if p.decision else None,
                    "proposed_reason": p.reason,
                }
                if p
                else None
            ),
        }


def retired(vault: Vault, since: str | None = None) -> list[Retirement]:
    """Every retired memory, most recently retired first. With `since`, only those
    retired at or after it (a memory retired by hand has no date and is left out)."""
    proposals = {p.id: p for p in ProposalStore.of(vault).load().proposals}
    found = []
    for memory in vault.index.list(status="retired"):
        if memory.broken:
            continue
        record = memory.retired_record or DecisionRecord()
        at, reason, pid = record.at, record.reason, record.proposal
        if since is not None and (at is None or at < since):
            continue
        found.append(Retirement(memory, at, reason, pid, proposals.get(pid) if pid else None))
    return sorted(found, key=lambda r: (r.at or "", r.memory.id), reverse=True)
