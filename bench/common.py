"""Shared pieces of the benchmarks: a prepared vault, timers and percentiles.

Benchmarks print figures; they never fail on a figure and never run inside the tests.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.synthvault import SynthInfo, SynthSpec, generate


def machine() -> dict[str, object]:
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(terse=True),
    }


def fresh_cache(workdir: Path, name: str) -> Path:
    """An empty index folder, so an index is built cold."""
    cache = workdir / f"cache-{name}"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["MEMORYCTL_CACHE_DIR"] = str(cache)
    return cache


def synth_vault(workdir: Path, name: str, spec: SynthSpec) -> SynthInfo:
    root = workdir / name
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(workdir / f"{name}-repo", ignore_errors=True)
    started = time.perf_counter()
    info = generate(root, spec)
    log(f"generated {spec.n} memories in {time.perf_counter() - started:.1f} s at {root}")
    return info


@contextmanager
def timer() -> Iterator[list[float]]:
    box: list[float] = []
    started = time.perf_counter()
    yield box
    box.append(time.perf_counter() - started)


def cpu_seconds() -> float:
    """CPU seconds spent so far by this process and the programs it waited for (git,
    worker processes): what a step costs, whatever else the machine is doing."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def process_tree_cpu(pid: int) -> float | None:
    """CPU seconds spent so far by a running process and every process it started that
    still runs (a server's worker processes), from /proc; None where there is none."""
    tick = os.sysconf("SC_CLK_TCK")
    total, waiting = 0.0, [pid]
    try:
        while waiting:
            one = waiting.pop()
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{one}/task").iterdir():
                waiting += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        return None
    return total


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def latencies(run: Callable[[object], object], inputs: list) -> dict[str, float]:
    """p50 and p95 of running `run` once on each input, in milliseconds."""
    times = []
    for item in inputs:
        started = time.perf_counter()
        run(item)
        times.append(time.perf_counter() - started)
    return percentiles(times)


def percentiles(times: list[float]) -> dict[str, float]:
    """p50, p95 and the slowest of some timings in seconds, in milliseconds."""
    times = sorted(times)
    return {
        "p50_ms": ms(statistics.median(times)),
        "p95_ms": ms(times[min(len(times) - 1, int(len(times) * 0.95))]),
        "max_ms": ms(times[-1]),
        "runs": len(times),
    }


def peak_rss_mb() -> dict[str, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"process_mb": round(own, 1), "largest_worker_mb": round(children, 1)}


def bench_main(run: Callable[[int, Path], dict], doc: str | None) -> None:
    """The command line of one benchmark: `python -m bench.NAME --n 100000`."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, default=Path(".scratch/bench"))
    args = parser.parse_args()
    print(json.dumps(run(args.n, args.workdir.resolve()), indent=2))


def log(text: str) -> None:
    sys.stderr.write(f"[bench] {text}\n")
    sys.stderr.flush()
