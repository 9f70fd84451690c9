"""What the TUI's workers share."""

from __future__ import annotations

from typing import Any

from textual import work

# A worker's description, given so that Textual does not write one out of the `repr` of
# its arguments on the UI thread as the worker starts: the rowids of 100,000 memories
# took 16 ms to write out, on every keystroke in the filter (bench/tui_bench.py); a
# bundle holds every memory it shows.
QUIET = "(its arguments are not shown)"


def quiet_work(group: str, name: str = "") -> Any:
    """`@work` for a thread that reads or writes for a screen: one at a time in its group
    (a newer one cancels it), its failure worded by the screen (`AppScreen.worker_ended`),
    and its arguments never written out (QUIET)."""
    return work(
        thread=True,
        exclusive=True,
        group=group,
        exit_on_error=False,
        name=name,
        description=QUIET,
    )
