"""The bundle in each export format. Every format carries the same text the agent sees."""

from __future__ import annotations

import json
from typing import Any

from memoryctl.bundle import Beneath, Bundle, Entry

BEGIN = "<!-- memoryctl:begin (generated; edit memories, not this block) -->"
END = "<!-- memoryctl:end -->"
# A plain YAML scalar: no ": " or " #" inside, so strict YAML and simple parsers agree.
CURSOR_DESCRIPTION = "Memory from memoryctl, the user's pinned facts and current corrections"


def _entry(entry: Entry, texts: bool) -> dict[str, Any]:
    memory = entry.memory
    data: dict[str, Any] = {"id": memory.id, "title": memory.title}
    if texts:
        data |= {"text": memory.text, "block": entry.block}
    return data | {
        "tokens": entry.tokens,
        "source": {"kind": memory.source_kind, "ref": memory.source_ref},
        "now": [
            {"id": b.memory.id, **({"text": b.memory.text} if texts else {}), "above": b.above}
            for b in entry.beneath
            if b.kind == "now" and b.memory is not None
        ],
        "newer": [newer_json(b, texts) for b in entry.newer],
        "notes": list(entry.notes),
    }


def newer_json(line: Beneath, texts: bool = True) -> dict[str, Any]:
    """A contest beneath an entry: the newer memory (or only the pending proposal).

    Without `texts`, the newer memory's text and the line are left out: they are in
    the text beside the report.
    """
    contest = line.contest
    assert contest is not None
    newer = contest.newer
    data: dict[str, Any] = {
        "why": contest.why,
        "id": newer.id if newer else None,
        "created": newer.created if newer else None,
    }
    if contest.about is not None:  # what the two share: a title, or a subject
        data["about"] = contest.about
    if texts:
        data["text"] = newer.text if newer else None
    data |= {
        "above": line.above,
        "proposal": (
            {"id": contest.proposal, "action": contest.action, "created": contest.proposed}
            if contest.proposal
            else None
        ),
    }
    if texts:
        data["line"] = line.line
    return data


def as_json(bundle: Bundle, *, texts: bool = True) -> dict[str, Any]:
    """The bundle's report (docs/BUNDLE.md). Without `texts`, the lean report an agent
    gets beside the text (docs/MCP.md): the same keys less `text`, each memory's text
    and block, and each line's wording, which the text already holds."""
    report: dict[str, Any] = {
        "profile": bundle.profile.name,
        "message": bundle.message,
        "budget": {"limit": bundle.budget, "used": bundle.used, "method": bundle.method},
        "sections": bundle.sections,
        "pinned": [_entry(e, texts) for e in bundle.pinned],
        "recalled": [_entry(e, texts) for e in bundle.recalled],
        "conflicts": [
            {
                "subject": c.subject,
                "value": c.value,
                "older": {
                    "id": c.older.id,
                    "predicate": c.older.predicate,
                    "created": c.older.created,
                },
                "newer": {
                    "id": c.newer.id,
                    "predicate": c.newer.predicate,
                    "created": c.newer.created,
                },
                **({"text": c.line} if texts else {}),
            }
            for c in bundle.conflicts
        ],
        "excluded": [{"id": x.id, "title": x.title, "reason": x.reason} for x in bundle.excluded],
        "warnings": list(bundle.warnings),
    }
    if texts:
        report["text"] = bundle.text
    return report


def render(bundle: Bundle, fmt: str) -> str:
    """The bundle as a whole document in `fmt` (markdown, json or cursor-rules)."""
    if fmt == "json":
        return json.dumps(as_json(bundle), ensure_ascii=False, indent=2) + "\n"
    if fmt == "cursor-rules":
        return (
            "---\n"
            f"description: {CURSOR_DESCRIPTION}\n"
            "globs:\n"
            "alwaysApply: true\n"
            "---\n" + bundle.text
        )
    return bundle.text


def marked_block(bundle: Bundle) -> str:
    """The bundle between markers, for AGENTS.md and CLAUDE.md."""
    return f"{BEGIN}\n{bundle.text}{END}"
