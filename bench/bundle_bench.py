"""Figures for the context bundle: building it for a message, and exporting it to AGENTS.md.

The vault has N memories of which 30 are pinned, and its review queue is current: the
checks have filed what they find among its typed facts (about N/25 proposals), so the
newer and pending lines beneath a shown fact are built and the queue is read as every
face reads it. Each of 300 messages of 8 to 20 words
(like a user's request to an agent) gets a bundle through `context_bundle`, the entry
point every face uses; then one bundle is written into an AGENTS.md that has the
person's own text around the block, through `memoryctl.export.export`.

    python -m bench.bundle_bench --n 100000
"""

from __future__ import annotations

import random
import shutil
import statistics
import time
from pathlib import Path

from bench.common import (
    bench_main,
    fresh_cache,
    latencies,
    log,
    machine,
    ms,
    peak_rss_mb,
    synth_vault,
    timer,
)
from bench.synthvault import SynthSpec, message_queries
from memoryctl.checks import run_checks
from memoryctl.context import context_bundle
from memoryctl.export import Written, export
from memoryctl.moments import moment
from memoryctl.storage.vault import Vault

PINS = 30
NOW = moment("2026-11-29T12:00:00Z")
EXPORT_RUNS = 20
# Thirty synthetic pins (60 to 250 words each) already take about 6,000 tokens, over the
# default budget of 4,000, so at the default nothing is recalled. The roomy budget leaves
# space for the profile's 20 recalled memories, so recall, `now:` lines, conflicts and the
# budget fitting all run: that is the figure to hold against the target.
ROOMY_BUDGET = 12_000


def run(n: int, workdir: Path, messages: int = 300) -> dict[str, object]:
    info = synth_vault(workdir, f"bundle-{n}", SynthSpec(n=n, pins=PINS))
    fresh_cache(workdir, f"bundle-{n}")
    with timer() as cold:
        vault = Vault(info.root)
        _ = vault.index
    log(f"cold index {cold[0]:.2f} s")
    with timer() as checked:
        filed = run_checks(vault, now=NOW)
    log(f"check filed {len(filed.proposed)} proposals in {checked[0]:.2f} s")

    rng = random.Random(17)
    queries = message_queries(info, messages, rng)
    context_bundle(vault, message=queries[0])  # load the registry and warm SQLite's cache
    default_built = []
    built = []
    cpu: list[float] = []  # the CPU of each first ask of a message, as an agent's first call

    def build_default(message: str) -> None:
        default_built.append(context_bundle(vault, message=message))

    def build(message: str) -> None:
        started = time.process_time()
        built.append(context_bundle(vault, message=message, budget=ROOMY_BUDGET))
        cpu.append(time.process_time() - started)

    default_figures = latencies(build_default, queries)
    bundle_figures = latencies(build, queries)
    assert all(len(b.pinned) == PINS for b in built + default_built), "every pin, every time"
    log(
        f"bundle p50 {bundle_figures['p50_ms']} ms, p95 {bundle_figures['p95_ms']} ms "
        f"(default budget: p95 {default_figures['p95_ms']} ms)"
    )

    project = workdir / f"bundle-{n}-project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    agents = project / "AGENTS.md"
    agents.write_text("# Project rules\n\nUse tabs.\n", encoding="utf-8")
    export(built[0], "agents-md", None, project)  # put the block in once
    refresh: list[float] = []
    unchanged: list[float] = []
    build_and_export: list[float] = []
    for number in range(EXPORT_RUNS):
        bundle = built[1 + number % (len(built) - 1)] if len(built) > 1 else built[0]
        with timer() as wrote:
            result = export(bundle, "agents-md", None, project)
        assert isinstance(result, Written)
        refresh.append(wrote[0])
        with timer() as same:
            again = export(bundle, "agents-md", None, project)
        assert isinstance(again, Written) and not again.changed
        unchanged.append(same[0])
        with timer() as whole:  # what `memoryctl export` does after opening the vault
            export(context_bundle(vault, message=queries[number]), "agents-md", None, project)
        build_and_export.append(whole[0])
    assert agents.read_text(encoding="utf-8").startswith("# Project rules\n\nUse tabs.\n")
    log(f"export agents-md median {ms(statistics.median(refresh))} ms")

    figures = {
        "benchmark": "bundle",
        "memories": n,
        "pins": PINS,
        "machine": machine(),
        "tokens": built[0].method,
        "cold_index_s": round(cold[0], 2),
        "pending_proposals": len(filed.proposed),
        "bundle": bundle_figures,
        "bundle_shape": _shape(built),
        "bundle_cpu_ms": {
            "median": ms(statistics.median(cpu)),
            "mean": ms(statistics.fmean(cpu)),
            "runs": len(cpu),
        },
        "bundle_default_budget": default_figures,
        "bundle_default_budget_shape": _shape(default_built),
        "export_agents_md_ms": {
            "refresh_median": ms(statistics.median(refresh)),
            "refresh_max": ms(max(refresh)),
            "unchanged_median": ms(statistics.median(unchanged)),
            "build_and_export_median": ms(statistics.median(build_and_export)),
            "build_and_export_max": ms(max(build_and_export)),
            "runs": EXPORT_RUNS,
        },
        "peak_rss": peak_rss_mb(),
        "targets_at_100k": {"bundle_p95_ms": 50, "export_agents_md_ms": 100},
    }
    vault.close()
    return figures


def _shape(bundles: list) -> dict[str, object]:
    return {
        "budget": bundles[0].budget,
        "tokens_used_median": statistics.median(b.used for b in bundles),
        "recalled_median": statistics.median(len(b.recalled) for b in bundles),
        "held_out_median": statistics.median(len(b.excluded) for b in bundles),
        "with_conflicts": sum(1 for b in bundles if b.conflicts),
        "with_newer_lines": sum(1 for b in bundles if any(e.newer for e in b.pinned + b.recalled)),
        "pins_over_budget": sum(1 for b in bundles if b.pins_over_budget),
    }


if __name__ == "__main__":
    bench_main(run, __doc__)
