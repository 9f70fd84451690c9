"""Figures for the vault and index: cold index, warm open, one edit, search, size, RSS.

Search is timed three ways: 300 keyword queries and 300 messages through `search`, and
the same messages recalled as the bundle recalls them (`message_recall`).

python -m bench.index_bench --n 100000
"""

from __future__ import annotations

import os
import random
import resource
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
from bench.synthvault import SynthSpec, keyword_queries, message_queries
from memoryctl.storage.vault import Vault


def run(n: int, workdir: Path, queries: int = 300) -> dict[str, object]:
    info = synth_vault(workdir, f"index-{n}", SynthSpec(n=n, pins=30))
    fresh_cache(workdir, f"index-{n}")

    cpu_before = _cpu_seconds()
    with timer() as cold:
        vault = Vault(info.root)
        _ = vault.index
    cold_cpu = _cpu_seconds() - cpu_before
    report = vault.last_sync
    assert report is not None and report.scanned == n, report
    vault.close()
    log(f"cold index {cold[0]:.2f} s ({cold_cpu:.1f} s of CPU with its workers)")

    cpu_before = _cpu_seconds()
    with timer() as warm:
        vault = Vault(info.root)
        _ = vault.index
    warm_cpu = _cpu_seconds() - cpu_before
    log(f"warm open {warm[0]:.2f} s")

    edited = info.root / "memories" / info.ids[n // 2][:2] / f"{info.ids[n // 2]}.md"
    relpath = edited.relative_to(info.root).as_posix()
    edited.write_text(edited.read_text() + "\nOne more sentence about the wimbledon.\n")
    with timer() as one_edit:
        vault.index.sync_paths([relpath])
    found = vault.index.search("wimbledon", include_retired=True)
    assert [m.id for m in found] == [info.ids[n // 2]]
    edited.write_text(edited.read_text() + "\nAnd a second edit.\n")
    with timer() as edit_full_sync:
        vault.index.sync()

    rng = random.Random(11)
    keyword = latencies(
        lambda q: vault.index.search(q, limit=20), keyword_queries(info, queries, rng)
    )
    messages = message_queries(info, queries, rng)
    message = latencies(lambda q: vault.index.search(q, limit=20), messages)
    # The same messages as the bundle recalls for one (`bundle.build_bundle`): every word
    # in its other forms, the people it names, the turns after a match, and as many
    # matches as the bundle reads for the default profile.
    reads = max(vault.config.profile(None).recall * 3, 30)
    message_recall = latencies(
        lambda q: vault.index.search_rows(q, limit=reads, statuses=None, message=True), messages
    )
    log(
        f"search keyword p95 {keyword['p95_ms']} ms, message p95 {message['p95_ms']} ms, "
        f"a message recalled as the bundle does p95 {message_recall['p95_ms']} ms"
    )
    figures = {
        "benchmark": "index",
        "memories": n,
        "machine": machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cold_index_s": round(cold[0], 2),
        # CPU seconds of this process and its parsing workers: comparable between runs on
        # a busy machine, where the wall-clock figures are not.
        "cold_index_cpu_s": round(cold_cpu, 2),
        "warm_open_s": round(warm[0], 3),
        "warm_open_cpu_s": round(warm_cpu, 3),
        "reindex_one_edit_ms": ms(one_edit[0]),
        "edit_then_full_sync_ms": ms(edit_full_sync[0]),
        "keyword_search": keyword,
        "message_search": message,
        "message_recall": message_recall,
        "index_size_mb": round(vault.index.size_bytes() / 1e6, 1),
        "peak_rss": peak_rss_mb(),
        "targets_at_100k": {
            "cold_index_s": 14.3,
            "warm_open_s": 1,
            "reindex_one_edit_ms": 50,
            "keyword_search_p95_ms": 20,
            "message_search_p95_ms": 20,
            "message_recall_p95_ms": 20,
            "index_size_mb": 541,
            "peak_rss_mb": 500,
        },
    }
    vault.close()
    return figures


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


if __name__ == "__main__":
    bench_main(run, __doc__)
