"""Figures for live proposals: what the live checks add to a one-file sync, and a full check.

The vault has N memories (a tenth of them typed facts) plus N/1000 (at least 5) that
name an older memory in `retires`. A full check runs first and files what it finds.
Then, 40 times each, one memory's file is edited as an editor would, the index syncs
that one path (`sync_ms`), and the live checks run over it (`live_ms`): for a plain
memory (`plain_memory`), for a typed fact (`typed_fact`: the rules read the facts
that decide a proposal involving it, among a thousand about its subject under its
predicate), and for a memory that names another in `retires` (`names_in_retires`);
the slowest sync of all 120 is `one_file_sync_max_ms`.
An edit of the text leaves every trigger as it was, so nothing is withdrawn. Last,
`check` runs again over the whole vault, finding everything already proposed
(`check_again_s`), which is what "check everything now" costs on a vault whose queue
is current. Then 2,001 files change at once, as a large pull would, and the live
checks, which then check the whole vault and withdraw what it no longer proposes,
run over it (`bulk_change_live_s`).

The synthetic vault is not a git repository, so filing leaves out git's commit.

    python -m bench.live_bench --n 100000
"""

from __future__ import annotations

import random
from pathlib import Path

from bench.common import bench_main, fresh_cache, log, machine, ms, percentiles, synth_vault, timer
from bench.synthvault import SynthSpec
from memoryctl.checks import run_checks
from memoryctl.live_checks import BULK, check_changes
from memoryctl.moments import moment
from memoryctl.storage.vault import Vault

NOW = moment("2026-11-29T12:00:00Z")
EDITS = 40


def _write_retiring(root: Path, ids: list[str], count: int, rng: random.Random) -> list[str]:
    folder = root / "memories" / "retiring"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number in range(count):
        memory_id = f"rt{number:08d}"
        target = rng.choice(ids)
        (folder / f"{memory_id}.md").write_text(
            f"---\nid: {memory_id}\ntitle: Replaces {target}\ncreated: 2027-01-01T00:00:00Z\n"
            f"retires: [{target}]\n---\n\nThis replaces {target}.\n",
            encoding="utf-8",
        )
        written.append(f"memories/retiring/{memory_id}.md")
    return written


def _edit(vault: Vault, relpath: str, number: int) -> None:
    path = vault.root / relpath
    path.write_text(path.read_text(encoding="utf-8") + f"\nEdited {number}.\n", encoding="utf-8")


def _edits(vault: Vault, paths: list[str], rng: random.Random) -> dict[str, object]:
    sync_times: list[float] = []
    live_times: list[float] = []
    for number in range(EDITS):
        relpath = rng.choice(paths)
        _edit(vault, relpath, number)
        with timer() as synced:
            vault.index.sync_paths([relpath])
        with timer() as checked:
            check_changes(vault, now=NOW)
        sync_times.append(synced[0])
        live_times.append(checked[0])
    return {"sync_ms": percentiles(sync_times), "live_ms": percentiles(live_times)}


def run(n: int, workdir: Path) -> dict[str, object]:
    info = synth_vault(workdir, f"live-{n}", SynthSpec(n=n))
    rng = random.Random(23)
    retiring = _write_retiring(info.root, info.ids, max(5, n // 1000), rng)
    fresh_cache(workdir, f"live-{n}")
    vault = Vault(info.root)
    with timer() as cold:
        _ = vault.index
    log(f"cold index {cold[0]:.2f} s")

    with timer() as first:
        filed = run_checks(vault, now=NOW)
    log(f"first check {first[0]:.2f} s, filed {len(filed.proposed)}")
    vault.index.set_live_mark(vault.index.newest_rowid())

    active = [m for m in vault.index.memories_after(0) if m.status == "active"]
    plain = [m.path for m in active if not m.subject and not m.retires]
    typed = [m.path for m in active if m.subject]
    figures = {
        "plain_memory": _edits(vault, plain, rng),
        "typed_fact": _edits(vault, typed, rng),
        "names_in_retires": _edits(vault, retiring, rng),
    }
    for name, figure in figures.items():
        log(
            f"{name}: sync p95 {figure['sync_ms']['p95_ms']} ms, "  # type: ignore[index]
            f"live checks p95 {figure['live_ms']['p95_ms']} ms"  # type: ignore[index]
        )

    # The slowest one-file sync of all the edits: FTS5 merging its segments during a
    # small write shows here, not in the p95.
    sync_max = max(figure["sync_ms"]["max_ms"] for figure in figures.values())  # type: ignore[index]
    log(f"one-file sync max {sync_max} ms")

    with timer() as again:
        repeated = run_checks(vault, now=NOW)
    log(f"check again {again[0]:.2f} s ({repeated.already} already proposed)")

    # A large pull: more changed rows than the live checks take one by one, so they
    # check the whole vault and withdraw what it no longer proposes, as `check` does.
    pulled = rng.sample(plain, min(len(plain), BULK + 1))
    for number, relpath in enumerate(pulled):
        _edit(vault, relpath, number)
    vault.index.sync_paths(pulled)
    with timer() as bulk:
        bulk_report = check_changes(vault, now=NOW)
    log(f"bulk change of {len(pulled)} files: live checks {bulk[0]:.2f} s")
    vault.close()
    return {
        "benchmark": "live",
        "n": n,
        "machine": machine(),
        "cold_index_s": round(cold[0], 2),
        "first_check_s": round(first[0], 2),
        "first_check_filed": len(filed.proposed),
        "check_again_s": round(again[0], 2),
        "check_again_ms": ms(again[0]),
        "bulk_change_files": len(pulled),
        "bulk_change_whole_vault": bulk_report.whole,
        "bulk_change_live_s": round(bulk[0], 2),
        "one_file_sync_max_ms": sync_max,
        "one_file_edit": figures,
    }


if __name__ == "__main__":
    bench_main(run, __doc__)
