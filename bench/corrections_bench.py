"""Figures for corrections: reach after `correct`, `now:` resolution, re-sync after an edit.

The vault has N memories, of which 2,000 (or N/50 when smaller) name the old repository.

    python -m bench.corrections_bench --n 100000
"""

from __future__ import annotations

import random
from pathlib import Path

from bench.common import bench_main, fresh_cache, latencies, log, machine, ms, synth_vault, timer
from bench.synthvault import SynthSpec
from memoryctl.actions import NewMemory
from memoryctl.corrections import now_lines
from memoryctl.reach import correct
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault

OLD = "metalcraftai/ufo"


def run(n: int, workdir: Path) -> dict[str, object]:
    named = min(2000, n // 50)
    spec = SynthSpec(n=n, deprecated_string=OLD, deprecated_count=named)
    info = synth_vault(workdir, f"corrections-{n}", spec)
    fresh_cache(workdir, f"corrections-{n}")
    vault = Vault(info.root)
    _ = vault.index

    with timer() as to_reach:
        correction = correct(
            vault,
            NewMemory(body=f"UFO core moved from {OLD} to ufo-ai/ufo.", deprecates=[OLD]),
            force=True,
        )
        reached = vault.index.reach_of(correction.id)
    assert len(reached) == named, (len(reached), named)
    log(f"correct → reach of {len(reached)} in {to_reach[0] * 1000:.0f} ms")

    rng = random.Random(5)
    recalled_sets = []
    for _ in range(100):
        ids = rng.sample(info.deprecated_ids, 10) + rng.sample(info.ids, 40)
        recalled_sets.append(list(vault.index.get_many(ids).values()))
    resolve = latencies(lambda memories: now_lines(vault.index, memories), recalled_sets)
    sample = now_lines(vault.index, recalled_sets[0])
    assert sum(1 for heads in sample.values() if heads) >= 10

    path = vault.root / correction.path
    raw = path.read_bytes()
    note = notefile.parse_bytes(raw).with_changes({"deprecates": [OLD, "ufo-core-legacy"]})
    path.write_bytes(note.to_bytes())
    with timer() as resync:
        vault.index.sync_paths([correction.path])
    assert len(vault.index.reach_of(correction.id)) == named

    figures = {
        "benchmark": "corrections",
        "memories": n,
        "memories_naming_the_string": named,
        "machine": machine(),
        "correct_to_complete_reach_ms": ms(to_reach[0]),
        "now_lines_for_50_recalled": resolve,
        "resync_after_editing_a_correction_ms": ms(resync[0]),
        "targets_at_100k": {
            "correct_to_complete_reach_ms": 1000,
            "now_lines_for_50_recalled_ms": 5,
            "resync_after_editing_a_correction_ms": 200,
        },
    }
    vault.close()
    return figures


if __name__ == "__main__":
    bench_main(run, __doc__)
