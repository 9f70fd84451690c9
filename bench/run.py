"""Run every benchmark at one size and print their figures as JSON lines.

python -m bench.run --n 1000        (CI: keeps the benchmarks working)
python -m bench.run --n 100000      (the figures the issues name)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench import (
    bundle_bench,
    concurrency_bench,
    corrections_bench,
    import_bench,
    index_bench,
    live_bench,
    mcp_bench,
    recall_quality,
    review_bench,
    sync_bench,
    tui_bench,
)

BENCHMARKS = {
    "index": index_bench.run,
    "corrections": corrections_bench.run,
    "bundle": bundle_bench.run,
    "live": live_bench.run,
    "mcp": mcp_bench.run,
    "review": review_bench.run,
    "tui": tui_bench.run,
    "recall": recall_quality.run,
    "import": import_bench.run,
    "concurrency": concurrency_bench.run,
    "sync": sync_bench.run,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--workdir", type=Path, default=Path(".scratch/bench"))
    parser.add_argument("--only", choices=sorted(BENCHMARKS), action="append")
    args = parser.parse_args()
    workdir = args.workdir.resolve()
    for name in args.only or BENCHMARKS:
        print(json.dumps(BENCHMARKS[name](args.n, workdir)), flush=True)


if __name__ == "__main__":
    main()
