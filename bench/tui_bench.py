"""Figures for the TUI, from a headless Pilot run on a synthetic vault with a warm index:
launch to the first painted vault list, a keystroke in the filter to the updated list,
and opening a memory (in the side view, and on its own screen: the note painted; its
lineage, anchors and history tabs are read after); and, through all of that, the longest
time the UI's event loop was kept from running. Then, in several new runs of the app, the
first visit to the Vault, Agents and Preview screens (Preview both after a look at the
list, as the app builds it ahead then, and at once), and the Preview's rebuild after typing.

Keys are sent as the terminal driver delivers them, and each figure ends when the
screen is painted. `Pilot.press` is not used for the timed keys: after each key it waits
for the whole process to go idle, in steps of 20 ms, and that wait would be counted as
latency (about 45 ms a key on the bench machine, even for a key that does nothing).

python -m bench.tui_bench --n 100000
"""

from __future__ import annotations

import asyncio
import gc
import random
import time
from pathlib import Path

from bench.common import bench_main, fresh_cache, log, machine, ms, percentiles, synth_vault, timer
from bench.synthvault import SynthSpec, keyword_queries
from memoryctl.storage.vault import Vault

SIZE = (100, 32)
POLL = 0.002
REBUILDS = 40


async def _until(condition, timeout: float = 30.0) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(POLL)


def _send_key(app, key: str, char: str | None = None) -> None:
    from textual import events

    event = events.Key(key, char if char is not None else (key if len(key) == 1 else None))
    event.set_sender(app)
    app._driver.send_message(event)


class StallWatch:
    """How long the UI's event loop was kept from running: a task that asks to wake every
    5 ms, and notes how late it woke. Everything the app does on its own thread (layout,
    paint, message handlers) delays it; work in thread workers does not, unless it holds
    the GIL."""

    TICK = 0.005

    def __init__(self) -> None:
        self.late: list[float] = []

    async def run(self) -> None:
        while True:
            asked = time.perf_counter()
            await asyncio.sleep(self.TICK)
            self.late.append(time.perf_counter() - asked - self.TICK)

    def summary(self) -> dict[str, float]:
        late = sorted(self.late) or [0.0]
        return {
            "max_ms": ms(late[-1]),
            "p99_ms": ms(late[min(len(late) - 1, int(len(late) * 0.99))]),
            "over_100_ms": sum(1 for t in late if t > 0.1),
            "ticks": len(late),
        }


def _shows(screen, memory) -> bool:
    """The screen is a Memory screen, mounted, whose note is this memory."""
    from memoryctl.tui.screens.memory import MemoryScreen
    from memoryctl.tui.widgets import MemoryView

    if not isinstance(screen, MemoryScreen) or not screen.is_mounted:
        return False
    shown = screen.query_one(MemoryView).shown
    return shown is not None and shown.memory.path == memory.path


async def _measure(root: Path, words: list[str]) -> dict[str, object]:
    from memoryctl.tui.app import make_app
    from memoryctl.tui.screens.vault import VaultScreen
    from memoryctl.tui.widgets import MemoryList

    started = time.perf_counter()
    vault = Vault(root)
    app = make_app(vault, watch=False)
    figures: dict[str, object] = {}
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, VaultScreen)
        memory_list = screen.query_one(MemoryList)
        await _until(lambda: memory_list.pages is not None and not memory_list.loading)
        await pilot.pause(0)  # one refresh: the rows are painted
        figures["launch_to_first_list_s"] = round(time.perf_counter() - started, 3)
        # The list comes from the index as it was; the sync of the files follows it.
        await _until(lambda: screen.vault.last_sync is not None)
        await pilot.pause()
        figures["launch_to_synced_s"] = round(time.perf_counter() - started, 3)
        stalls = StallWatch()
        watching = asyncio.create_task(stalls.run())

        by_length: dict[int, list[float]] = {1: [], 2: [], 3: [], 4: []}
        for word in words:
            await pilot.press("escape")
            await _until(lambda: memory_list.pages is not None and memory_list.pages.text == "")
            await pilot.press("slash")
            await pilot.pause()
            for n, char in enumerate(word[:4], start=1):
                typed = word[:n]
                begun = time.perf_counter()
                _send_key(app, char)  # as typed: the filter's debounce is counted
                await _until(lambda t=typed: memory_list.pages.text == t)
                await pilot.pause(0)  # painted
                by_length[n].append(time.perf_counter() - begun)
                await pilot.pause()
        every = [t for times in by_length.values() for t in times]
        figures["keystroke_to_list"] = percentiles(every)
        figures["keystroke_to_list_by_filter_length"] = {
            n: percentiles(times) for n, times in by_length.items()
        }

        await pilot.press("escape")
        await _until(lambda: memory_list.pages is not None and memory_list.pages.text == "")
        opens: list[float] = []
        full: list[float] = []
        for _ in range(20):
            await pilot.press("down")
            await pilot.pause()
            target = memory_list.current
            begun = time.perf_counter()
            _send_key(app, "enter", "\r")
            await _until(
                lambda t=target: screen.opened is not None and screen.opened.path == t.path
            )
            await pilot.pause(0)  # painted
            opens.append(time.perf_counter() - begun)
            await pilot.pause()
        for _ in range(10):
            await pilot.press("down")
            await pilot.pause()
            target = memory_list.current
            begun = time.perf_counter()
            _send_key(app, "o")
            await _until(lambda t=target: _shows(app.screen, t))
            await pilot.pause(0)  # painted
            full.append(time.perf_counter() - begun)
            # Its lineage, anchors and history are read after the note is painted.
            await _until(lambda: app.screen.details is not None)
            await pilot.press("escape")
            await _until(lambda: isinstance(app.screen, VaultScreen))
        figures["open_memory_in_view"] = percentiles(opens)
        figures["open_memory_screen"] = percentiles(full)
        watching.cancel()
        figures["ui_stalls_after_first_paint"] = stalls.summary()
    vault.close()
    return figures


async def _first_visit(
    root: Path, read_first: float, messages: list[str] | None = None
) -> dict[str, object]:
    """One run of the app, new: the first visit to the Vault, Agents and Preview screens,
    each from the moment it is asked for (the app starting, a number key) to its content
    painted. Agents is asked for as soon as the list is synced, Preview after the person
    has read the list for `read_first` seconds (0: at once).

    With `messages`, the Preview's bundle is then built again for each typed message,
    from the rebuild's start (after the typing pause) to the new bundle painted. The
    typed text is painted before the rebuild starts, as it is when a person types: the
    rebuild waits for a pause."""
    from textual.widgets import Input

    from memoryctl.tui.app import make_app
    from memoryctl.tui.screens.agents import AgentsScreen
    from memoryctl.tui.screens.preview import PreviewScreen
    from memoryctl.tui.widgets import MemoryList

    # A new run of the app is a new process, with nothing of an earlier run left to
    # collect: the app unfreezes what it kept when it ends (`MemoryApp.on_unmount`), and
    # collecting that during this run's start would be charged to this run.
    gc.collect()
    vault = Vault(root)
    app = make_app(vault, watch=False)
    figures: dict[str, object] = {}
    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        memory_list = app.screen.query_one(MemoryList)
        await _until(lambda: memory_list.pages is not None and not memory_list.loading)
        await pilot.pause(0)
        figures["vault"] = time.perf_counter() - started
        await _until(lambda: vault.last_sync is not None)
        await pilot.pause()
        for key, kind, ready, wait in (
            ("6", AgentsScreen, lambda s: s.agents is not None, 0.0),
            ("5", PreviewScreen, lambda s: s.bundle is not None, read_first),
        ):
            await asyncio.sleep(wait)
            begun = time.perf_counter()
            _send_key(app, key)
            await _until(lambda k=kind, r=ready: isinstance(app.screen, k) and r(app.screen))
            await pilot.pause(0)
            figures[kind.__name__.removesuffix("Screen").lower()] = time.perf_counter() - begun
        screen = app.screen
        rebuilds: list[float] = []
        for word in messages or []:
            box = screen.query_one("#preview-message", Input)
            with box.prevent(Input.Changed):
                box.value = f"what about {word}"
            await pilot.pause()  # the typed text painted
            begun = time.perf_counter()
            screen.reload()
            await _until(
                lambda w=word: (
                    screen.bundle is not None and screen.bundle.message == f"what about {w}"
                )
            )
            await pilot.pause(0)
            rebuilds.append(time.perf_counter() - begun)
        if messages:
            figures["rebuilds"] = rebuilds
    vault.close()
    return figures


# A person reads the first list a moment before going to another screen; in that pause the
# app builds Preview ahead (`tui/app.py`, AHEAD).
READ_FIRST = 3.0


async def _first_visits(root: Path, words: list[str], samples: int) -> dict[str, object]:
    """Each first visit in `samples` new runs of the app; Preview both after the person
    has read the list a moment and at once (a key pressed as soon as the list is synced,
    before the app has had an idle moment to build it ahead)."""
    runs = [await _first_visit(root, READ_FIRST) for _ in range(samples - 1)]
    runs.append(await _first_visit(root, READ_FIRST, words))
    at_once = [await _first_visit(root, 0.0) for _ in range(samples)]
    return {
        "vault_first_visit": percentiles([r["vault"] for r in runs + at_once]),
        "preview_first_visit": percentiles([r["preview"] for r in runs]),
        "preview_first_visit_at_once": percentiles([r["preview"] for r in at_once]),
        "agents_first_visit": percentiles([r["agents"] for r in runs + at_once]),
        "preview_rebuild_after_typing": percentiles(runs[-1]["rebuilds"]),
    }


def run(n: int, workdir: Path, words: int = 15) -> dict[str, object]:
    import os

    log(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    info = synth_vault(workdir, f"tui-{n}", SynthSpec(n=n, pins=20))
    fresh_cache(workdir, f"tui-{n}")
    with timer() as cold:
        warmup = Vault(info.root)
        _ = warmup.index
        warmup.close()
    log(f"cold index {cold[0]:.1f} s; the TUI figures use the warm index")
    rng = random.Random(5)
    drawn = [q.split()[0] for q in keyword_queries(info, (words + REBUILDS) * 3, rng)]
    drawn = [w for w in drawn if len(w) >= 4]
    figures = asyncio.run(_measure(info.root, drawn[:words]))
    # Enough rebuilds that the p95 is not simply the slowest one.
    rebuilds = REBUILDS if n >= 10_000 else 8  # a smoke run stays short
    messages = list(dict.fromkeys(drawn))[:rebuilds]  # each differs from the one before
    samples = 7 if n >= 10_000 else 1  # a smoke run stays short
    figures.update(asyncio.run(_first_visits(info.root, messages, samples)))
    return {
        "benchmark": "tui",
        "memories": n,
        "machine": machine(),
        "cold_index_s": round(cold[0], 1),
        **figures,
        "targets_at_100k": {
            "launch_to_first_list_s": 1.5,
            "keystroke_to_list_p95_ms": 100,
            "open_memory_ms": 150,
            "ui_stall_ms": 100,
            "vault_preview_agents_first_visit_p95_ms": 250,
            "preview_rebuild_after_typing_ms": 150,
        },
    }


if __name__ == "__main__":
    bench_main(run, __doc__)
