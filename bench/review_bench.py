"""Figures for the review queue: check-anchors, a lineage cascade, listing the queue.

At N = 100,000: 10,000 memories anchored into a generated repository of 2,000 files,
of which 100 change (a third edited, a third with an anchored function renamed, a
third deleted); half of the anchors record the file's hash, as `memoryctl anchor`
does, so edits are caught too. A chain of 1,000 memories, each derived from the one
before, hangs from one root; retiring the root proposes review of all 1,000. Smaller
N scales every count down in proportion (N/10 anchored, N/50 files, N/100 in the chain).

The synthetic vault is not a git repository, so these figures leave out git's commit;
`commit_1000_proposals_ms` times that step alone in a small repository.

    python -m bench.review_bench --n 100000
"""

from __future__ import annotations

import io
import os
import random
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

from bench.common import bench_main, fresh_cache, log, machine, ms, synth_vault, timer
from bench.synthvault import SynthInfo, SynthSpec, mutate_repo
from memoryctl.anchors import SHA_DIGITS, content_sha
from memoryctl.moments import moment
from memoryctl.storage import gitrepo, notefile
from memoryctl.storage.vault import Vault

NOW = moment("2026-11-29T12:00:00Z")


def _record_shas(info: SynthInfo) -> int:
    """Give every other anchored memory the hash of its file, as `memoryctl anchor` would."""
    assert info.repo is not None
    count = 0
    for memory_id in info.anchored_ids[::2]:
        path = info.root / "memories" / memory_id[:2] / f"{memory_id}.md"
        relpath, symbol = info.anchors[memory_id]
        sha = content_sha((info.repo / relpath).read_bytes())[:SHA_DIGITS]
        note = notefile.parse_bytes(path.read_bytes())
        anchors = [{"path": relpath, "symbol": symbol, "sha": sha}]
        path.write_bytes(note.with_changes({"anchors": anchors}).to_bytes())
        count += 1
    return count


def _write_chain(root: Path, length: int) -> list[str]:
    """A root memory and `length` descendants, each derived from the one before."""
    folder = root / "memories" / "chain"
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"ch{i:08d}" for i in range(length + 1)]
    for position, memory_id in enumerate(ids):
        lines = [
            "---",
            f"id: {memory_id}",
            f"title: Chain link {position}",
            "kind: summary" if position else "kind: fact",
            "status: active",
            f"created: 2026-11-01T{position // 3600 % 24:02d}:{position // 60 % 60:02d}:"
            f"{position % 60:02d}Z",
        ]
        if position:
            lines.append(f"derived_from: [{ids[position - 1]}]")
        lines += ["---", "", f"Link {position} of a chain of summaries built one on another."]
        (folder / f"{memory_id}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def _commit_cost(workdir: Path, count: int) -> float:
    """git add and commit of `count` new proposal files, in a small repository."""
    repo = workdir / "review-commit"
    shutil.rmtree(repo, ignore_errors=True)
    (repo / "proposals").mkdir(parents=True)
    gitrepo.init(repo)
    paths = []
    for i in range(count):
        relpath = f"proposals/p{i:05d}.md"
        (repo / relpath).write_text(f"---\nid: p{i:05d}\naction: needs_review\n---\n")
        paths.append(relpath)
    with timer() as took:
        gitrepo.commit(repo, paths, f"Propose review of {count} memories")
    return took[0]


def run(n: int, workdir: Path) -> dict[str, object]:
    from memoryctl.checks import check_anchors
    from memoryctl.cli import review as cli_review
    from memoryctl.decisions import act
    from memoryctl.review import queue

    anchored = min(10_000, n // 10)
    repo_files = min(2_000, max(10, n // 50))
    changed = min(100, max(3, repo_files // 20))
    chain = min(1_000, max(10, n // 100))
    spec = SynthSpec(n=n, anchored=anchored, repo_files=repo_files)
    info = synth_vault(workdir, f"review-{n}", spec)
    with_sha = _record_shas(info)
    chain_ids = _write_chain(info.root, chain)
    fresh_cache(workdir, f"review-{n}")
    vault = Vault(info.root)
    with timer() as cold:
        _ = vault.index
    log(f"cold index of {n + chain + 1} memories in {cold[0]:.1f} s")

    mutate_repo(info, changed, random.Random(3))
    assert info.repo is not None
    with timer() as anchors_took:
        report = check_anchors(vault, info.repo, now=NOW)
    proposed = len(report.proposed)
    assert proposed > 0 and report.checked["memories"] == anchored, report.checked
    with timer() as anchors_again:
        again = check_anchors(vault, info.repo, now=NOW)
    assert not again.proposed and not again.withdrawn
    log(f"check-anchors: {proposed} proposals in {anchors_took[0]:.2f} s")

    with timer() as cascade:
        outcome = act(vault, "retire", chain_ids[0], now=NOW, reason="the source was wrong")
    assert len(outcome.filed) == chain, len(outcome.filed)
    log(f"lineage cascade over {chain} descendants in {cascade[0] * 1000:.0f} ms")

    def listing(origin: str | None) -> tuple[float, int]:
        out = io.StringIO()
        with timer() as took, redirect_stdout(out):
            found = queue(vault, origin=origin)
            for item in found.items:
                cli_review._print_item(item)
        return took[0], len(found.items)

    list_lineage, lineage_count = listing("lineage")
    list_all, pending_count = listing(None)
    assert lineage_count == chain
    log(f"review: {pending_count} pending listed in {list_all * 1000:.0f} ms")

    # The whole command as a person runs it: Python start-up, opening (and syncing) the
    # index of N memories, listing.
    env = {**os.environ, "MEMORYCTL_CACHE_DIR": os.environ["MEMORYCTL_CACHE_DIR"]}
    command = [sys.executable, "-m", "memoryctl", "--vault", str(info.root), "review"]
    with timer() as whole:
        subprocess.run(command, env=env, check=True, capture_output=True)

    figures = {
        "benchmark": "review",
        "memories": n + chain + 1,
        "machine": machine(),
        "anchored_memories": anchored,
        "anchors_with_sha": with_sha,
        "repo_files": repo_files,
        "repo_files_changed": changed,
        "check_anchors_s": round(anchors_took[0], 3),
        "check_anchors_proposed": proposed,
        "check_anchors_again_s": round(anchors_again[0], 3),
        "lineage_chain": chain,
        "lineage_cascade_ms": ms(cascade[0]),
        "commit_1000_proposals_ms": ms(_commit_cost(workdir, 1000)),
        "review_list_lineage_ms": ms(list_lineage),
        "review_list_lineage_count": lineage_count,
        "review_list_pending_ms": ms(list_all),
        "review_list_pending_count": pending_count,
        "review_command_end_to_end_ms": ms(whole[0]),
        "targets_at_100k": {
            "check_anchors_s": 5,
            "lineage_cascade_ms": 1000,
            "review_list_pending_ms": 300,
        },
    }
    vault.close()
    return figures


if __name__ == "__main__":
    bench_main(run, __doc__)
