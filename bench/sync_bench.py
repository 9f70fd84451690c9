"""Sync figures: a sync with N changed memories on each side, a sync with nothing to do,
and what sealing adds to a commit of one memory. Against a bare remote on local disk.

The vault holds 2N memories: the laptop changes the first N, the desktop the other N,
and a few on both sides (a pin on one, an edit of the text on the other), so the merge
also merges files key by key. The keyring is a file in the work folder, never the
person's own.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from bench.common import cpu_seconds, fresh_cache, log, machine, ms


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def _note(number: int, secret: bool = False) -> str:
    visibility = "visibility: secret\n" if secret else ""
    return (
        f"---\nid: m{number:07d}\ntitle: Memory {number}\nkind: fact\nstatus: active\n"
        f"{visibility}created: 2026-01-01T00:00:00Z\nnamespace: default\n---\n\n"
        f"Fact number {number} about the owls of the valley.\nSecond line.\n"
    )


def _environment(workdir: Path) -> None:
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    os.environ["XDG_DATA_HOME"] = str(workdir / "keyring")
    for who in ("AUTHOR", "COMMITTER"):
        os.environ[f"GIT_{who}_NAME"] = "Bench"
        os.environ[f"GIT_{who}_EMAIL"] = "bench@example.com"


def _change(root: Path, numbers: range, old: str, new: str, message: str) -> None:
    for number in numbers:
        path = root / "memories" / f"m{number:07d}.md"
        path.write_text(path.read_text().replace(old, new))
    _git(root, "commit", "-q", "-a", "-m", message)


def run(n: int, workdir: Path) -> dict[str, object]:
    from memoryctl.actions import init_vault, utcnow
    from memoryctl.storage import gitsync
    from memoryctl.storage.vault import Vault
    from memoryctl.sync import sync

    base = workdir / "sync"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    _environment(base)
    fresh_cache(base, "sync")
    remote, laptop, desktop = base / "remote.git", base / "laptop", base / "desktop"
    _git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    init_vault(laptop)
    _git(laptop, "checkout", "-q", "-B", "main")
    (laptop / "memories").mkdir()
    both = max(1, min(50, n // 20))
    for number in range(2 * n):
        (laptop / "memories" / f"m{number:07d}.md").write_text(_note(number))
    _git(laptop, *gitsync.NO_FILTER, "add", "memories")
    _git(laptop, "commit", "-q", "-m", "Add memories")
    _git(laptop, "remote", "add", "origin", str(remote))
    sync(Vault(laptop), now=utcnow())
    _git(base, "clone", "-q", str(remote), str(desktop))
    sync(Vault(desktop), now=utcnow())
    log(f"sync bench: {2 * n} memories on two devices")

    _change(laptop, range(n), "Second line.", "Second line, from the laptop.", "Laptop")
    _change(desktop, range(n, 2 * n), "Second line.", "Second line, from the desktop.", "Desk")
    pinned = range(2 * n - both, 2 * n)  # the desktop changed their text
    _change(laptop, pinned, "status: active", "status: active\npinned: true", "Pins")
    laptop_vault, desktop_vault = Vault(laptop), Vault(desktop)
    for vault in (laptop_vault, desktop_vault):
        vault.index.sync()  # opened before timing
    started = time.perf_counter()
    sync(laptop_vault, now=utcnow())
    push_only = time.perf_counter() - started
    started = time.perf_counter()
    report = sync(desktop_vault, now=utcnow())
    merged = time.perf_counter() - started
    started = time.perf_counter()
    idle = sync(desktop_vault, now=utcnow())
    nothing = time.perf_counter() - started
    assert not report.conflicts and not idle.received and not idle.sent

    commits = _commit_costs(laptop_vault, 11)
    return {
        "benchmark": "sync",
        "n_changed_each_side": n,
        "memories": 2 * n,
        "changed_on_both_sides": both,
        "sync_send_only_s": round(push_only, 3),
        "sync_merge_and_send_s": round(merged, 3),
        "sync_nothing_to_do_s": round(nothing, 3),
        **commits,
        "load": os.getloadavg()[0],
        **machine(),
    }


def _commit_costs(vault, rounds: int) -> dict[str, float]:
    """A commit of one changed memory, plain and secret, in a vault with sealing set up
    (a plain memory's commit is the one a vault without sealing makes). Taken in turns,
    so both see the same load: the medians of each, and of the differences in each turn,
    in milliseconds of wall time and of CPU time."""
    root = vault.root
    plain = root / "memories" / "plain.md"
    secret = root / "memories" / "secret.md"
    plain.write_text(_note(9_000_001))
    secret.write_text(_note(9_000_002, secret=True))
    vault.commit(["memories/plain.md", "memories/secret.md"], "Two to change")
    wall: dict[Path, list[float]] = {plain: [], secret: []}
    cpu: dict[Path, list[float]] = {plain: [], secret: []}
    for turn in range(rounds):
        for path in (plain, secret):
            path.write_text(path.read_text() + f"Change {turn}.\n")
            started, spent = time.perf_counter(), cpu_seconds()
            vault.commit([str(path.relative_to(root))], f"Change {turn}")
            wall[path].append(time.perf_counter() - started)
            cpu[path].append(cpu_seconds() - spent)

    def adds(times: dict[Path, list[float]]) -> float:
        pairs = zip(times[plain], times[secret], strict=True)
        return ms(statistics.median([s - p for p, s in pairs]))

    return {
        "commit_one_memory_ms": ms(statistics.median(wall[plain])),
        "commit_one_secret_memory_ms": ms(statistics.median(wall[secret])),
        "sealing_adds_ms": adds(wall),
        "commit_one_memory_cpu_ms": ms(statistics.median(cpu[plain])),
        "commit_one_secret_memory_cpu_ms": ms(statistics.median(cpu[secret])),
        "sealing_adds_cpu_ms": adds(cpu),
    }
