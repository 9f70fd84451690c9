"""The TUI's Sync action: its messages, and how the sync state reads in the header."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from textual.message import Message

from memoryctl.sync import SyncReport, SyncState
from memoryctl.wording import counted, first_few

# A sync's notes beyond this many are counted in one toast, not shown one toast each.
NOTICES_SHOWN = 3
CONFLICTS_NAMED = 3


@dataclass
class SyncDone(Message):
    report: SyncReport
    state: SyncState


@dataclass
class SyncFailed(Message):
    error: str
    state: SyncState


@dataclass
class SyncStateRead(Message):
    state: SyncState


def header_text(root: str, state: SyncState, now: dt.datetime) -> str:
    """The header's second line: the vault, and with a remote how far apart they are."""
    if state.remote is None:
        return root
    when = "never synced" if state.last_synced is None else f"synced {_ago(state.last_synced, now)}"
    return f"{root} · ↑{state.ahead} ↓{state.behind} {state.remote} · {when}"


def _ago(moment: str, now: dt.datetime) -> str:
    try:
        then = dt.datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return moment
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    return then.date().isoformat()


def summary(report: SyncReport) -> str:
    where = f"{report.remote}/{report.branch}"
    if report.forced:
        return f"This device's history is on {where} again"
    if not report.received and not report.sent:
        return f"Up to date with {where}"
    return f"Received {report.received}, sent {report.sent} commits ({where})"


def notice_toasts(report: SyncReport) -> list[str]:
    """A toast for each of the sync's first few notes, and one that counts the rest."""
    shown, more = first_few(report.notices, NOTICES_SHOWN)
    return [*shown, f"…and {counted(more, 'more note')} from this sync"] if more else shown


def conflict_toast(report: SyncReport) -> str | None:
    """One toast for every conflict, naming the first few files."""
    if not report.conflicts:
        return None
    shown, more = first_few([c.path for c in report.conflicts], CONFLICTS_NAMED)
    named = ", ".join(shown) + (f" and {more:,} more" if more else "")
    count = counted(len(report.conflicts), "conflict")
    return f"{count} from sync to decide on the Review screen, which lists them all: {named}"
