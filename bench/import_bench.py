"""Figures for `memoryctl import`: a folder of N files (at most 10,000), then again.

The folder is a Claude Code auto-memory folder of topic files (`name`, `description`,
`type`, a body of two sentences) and a MEMORY.md that links each one. The vault is a
real git repository, so the figures include the one commit. The issue names two
figures at 10,000 files: the first import at most 10 s, re-importing the unchanged
folder at most 2 s.

    python -m bench.import_bench --n 10000
"""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
from pathlib import Path

from bench.common import bench_main, cpu_seconds, fresh_cache, log, machine, ms, timer

TYPES = ("user", "feedback", "project", "reference")
WORDS = [
    "release",
    "deploy",
    "staging",
    "lockfile",
    "review",
    "schema",
    "migration",
    "cache",
    "token",
    "budget",
]


def write_folder(folder: Path, files: int) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(16)
    index = ["# Memory index", ""]
    for number in range(files):
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        name = f"topic_{number:05d}.md"
        (folder / name).write_text(
            "---\n"
            f"name: Topic {number} about {rng.choice(WORDS)}\n"
            f"description: One line on {words[:40]}\n"
            f"type: {TYPES[number % 4]}\n"
            "---\n\n"
            f"Remember {number}: {words}.\nWhy: it came up in session {number % 97}.\n"
        )
        index.append(f"- [Topic {number}]({name}) — {words[:30]}")
    (folder / "MEMORY.md").write_text("\n".join(index) + "\n")


def run(n: int, workdir: Path) -> dict[str, object]:
    from memoryctl.actions import init_vault
    from memoryctl.importing import run_import
    from memoryctl.storage.vault import Vault

    files = min(n, 10_000)
    folder = workdir / f"import-source-{files}"
    write_folder(folder, files)
    root = workdir / f"import-vault-{files}"
    shutil.rmtree(root, ignore_errors=True)
    fresh_cache(workdir, f"import-{files}")
    init_vault(root)
    # The folder was just written: its bytes on their way to disk are no part of the
    # import, whose flushes would otherwise wait for them.
    os.sync()
    now = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    vault = Vault(root)
    _ = vault.index
    spent = cpu_seconds()
    with timer() as first:
        report = run_import(vault, "claude-code", folder, now=now)
    first_cpu = cpu_seconds() - spent
    assert len(report.made) == files and report.commit, (len(report.made), report.skipped[:3])
    log(f"imported {files} files in {first[0]:.1f} s")
    vault.close()
    vault = Vault(root)
    _ = vault.index
    spent = cpu_seconds()
    with timer() as again:
        second = run_import(vault, "claude-code", folder, now=now)
    again_cpu = cpu_seconds() - spent
    assert not second.made and not second.proposed and second.commit is None
    log(f"re-imported {files} unchanged files in {again[0]:.2f} s")
    vault.close()
    return {
        "benchmark": "import",
        "files": files,
        "import_ms": ms(first[0]),
        "import_target_ms": 10_000,
        # CPU time of memoryctl and of the git commands and workers it waited for: what
        # the load of a shared machine does not inflate
        "import_cpu_ms": ms(first_cpu),
        "reimport_unchanged_ms": ms(again[0]),
        "reimport_unchanged_cpu_ms": ms(again_cpu),
        "reimport_target_ms": 2_000,
        "load": os.getloadavg()[0],
        "machine": machine(),
    }


if __name__ == "__main__":
    bench_main(run, __doc__)
