"""Where a memory's lifecycle (active, held for review, retired) is kept in its file.

Obsidian vaults, ADR folders and many templates use `status` for their own meaning
(`status: accepted`, `status: ["[[Published]]"]`). memoryctl reads `status` only when its
value is one of memoryctl's states; any other value (or an empty one) is the owner's, and
the memory is current. A near miss of a state (`Retired`, `needs-review`) is taken as a
typo in memoryctl's value. To record a state on a note whose `status` is the owner's,
memoryctl writes a key of its own, `lifecycle`, and never touches `status`. When
`lifecycle` is present it wins over `status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STATES = ("active", "needs_review", "retired")
KEY = "lifecycle"


def is_state(value: Any) -> bool:
    return isinstance(value, str) and value in STATES


def misspelled_state(value: Any) -> str | None:
    """The state a near miss such as `Retired` or `needs-review` was meant to be."""
    if not isinstance(value, str) or is_state(value):
        return None
    folded = value.strip().lower().replace("-", "_").replace(" ", "_")
    return folded if folded in STATES else None


def owner_status(data: Mapping[str, Any]) -> bool:
    """Does the note carry a `status` that is its owner's, not memoryctl's?"""
    if "status" not in data:
        return False
    status = data["status"]
    return not is_state(status) and misspelled_state(status) is None


def _status_state(status: Any) -> str:
    if is_state(status):
        return status
    return "needs_review" if misspelled_state(status) else "active"


def state_of(data: Mapping[str, Any]) -> tuple[str, str | None]:
    """The memory's state, and a problem when memoryctl's own key cannot be read.

    A `lifecycle` value that is not a state is a typo in memoryctl's key, so the memory
    is held for review (fail safe: it may have been meant as `retired`). A `status` that
    is not a state is the owner's and says nothing about the lifecycle.
    """
    if KEY in data:
        value = data[KEY]
        if is_state(value):
            return value, None
        return "needs_review", (
            f"{KEY}: {str(value)!r} is not one of {', '.join(STATES)}; held for review"
        )
    status = data.get("status")
    meant = misspelled_state(status)
    if meant:
        # Fail safe: `Retired` was surely meant as memoryctl's `retired`; hold the memory
        # out of context until a person looks, rather than put a retired memory back.
        return "needs_review", (
            f"status: {status!r} is not one of {', '.join(STATES)}; held for review"
        )
    return _status_state(status), None


def lifecycle_writes(data: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`changes` with a new state written where this note keeps its lifecycle.

    A note without its own `status` (or with one of memoryctl's values there) keeps the
    state in `status`, as memoryctl has always written it. A note whose `status` is the
    owner's gets `lifecycle` instead, and going back to active drops `lifecycle` again,
    so retire then restore leaves the owner's frontmatter as it was.
    """
    if "status" not in changes or (KEY not in data and not owner_status(data)):
        return dict(changes)
    state = changes["status"]
    value = None if state == "active" and _status_state(data.get("status")) == "active" else state
    return {
        (KEY if key == "status" else key): (value if key == "status" else v)
        for key, v in changes.items()
    }
