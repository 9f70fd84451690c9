"""Many faces on one vault at once: parallel writers, and many HTTP agents reading.

- 4 CLI writer processes, each running `memoryctl add` 50 times, while an MCP agent
  (the SDK's client over stdio) calls `remember` 50 times: errors, duplicates and
  uncommitted paths (all must be 0), writes a second, and the p95 wait for the vault's
  write lock;
- 20 HTTP MCP clients x 100 calls (get_context and recall, drawn from 200 messages and
  200 keyword sets, so four calls in five repeat one asked before) against `serve
  --http --workers 2`, then against one process twice, taking turns with the baseline
  server (bench/baseline_server.py: the server before it had workers, remembered
  answers or a bound on first asks at once) on a copy of the vault: errors, p95 and
  calls a second of each, and each one's calls a second over the baseline's, measured
  back to back on this machine (`over_baseline`); with each, the CPU time a call of the
  server's processes and of the clients (`server_cpu_ms_per_call`,
  `client_cpu_ms_per_call`), the figures that stay comparable on a busy machine;
- the same load with no call asked twice (`http_distinct_calls`, two workers, and
  `http_distinct_calls_one_process`), against the baseline's one process: the load
  above asks each message about five times, and the server gives a remembered answer
  again while the vault is unchanged, so this is the figure for agents that never
  repeat themselves;
- the same load asked again of one process that has answered it once already
  (`http_asked_again`): nearly every answer is remembered, so this is the transport's figure,
  what agents asking the same each turn (the same pins, the same message) cost.

At the smoke size (--n 1000) each writer makes 3 writes and each HTTP client 5 calls.

    python -m bench.concurrency_bench --n 10000
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client

from bench import baseline_server
from bench.common import bench_main, fresh_cache, log, machine, ms, synth_vault
from bench.mcp_bench import MEMORYCTL, PROFILE, _env, _http_load, _start_http, _stdio
from bench.synthvault import SynthSpec, keyword_queries, message_queries
from memoryctl.actions import init_vault
from memoryctl.live_checks import check_changes
from memoryctl.storage.vault import Vault

WRITERS = 4
CLIENTS = 20
HTTP_WORKERS = 2

# One writer process: `memoryctl add` through the CLI's own entry point, N times, then
# its errors and the waits its write lock recorded, as JSON on stdout.
WRITER = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from memoryctl.cli import main
    from memoryctl.storage import writelock
    vault, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    errors = []
    for n in range(count):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(["--vault", vault, "add", f"Writer {writer} wrote note {n}"])
        said = [s for s in err.getvalue().splitlines() if not s.startswith("The index")]
        if code or said:
            errors.append(err.getvalue()[:300])
    print(json.dumps({"errors": errors, "waits": list(writelock.WAITS)}))
    """
)


async def _agent_writes(root: Path, env: dict[str, str], count: int) -> list[str]:
    errors = []
    async with Client(_stdio(root, env)) as client:
        for n in range(count):
            result = await client.call_tool("remember", {"body": f"Agent wrote note {n}"})
            if result.is_error:
                errors.append(str(result.content)[:300])
    return errors


def _writers(root: Path, env: dict[str, str], writes: int) -> dict[str, Any]:
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(w), str(writes)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    agent_errors = anyio.run(_agent_writes, root, env, writes)
    outputs = [json.loads(p.communicate()[0]) for p in processes]
    wall = time.perf_counter() - started
    errors = [e for out in outputs for e in out["errors"]] + agent_errors
    waits = sorted(w for out in outputs for w in out["waits"])
    vault = Vault(root)
    try:
        titles = [m.title for m in vault.index.list() if "wrote note" in m.title]
    finally:
        vault.close()
    counts = collections.Counter(titles)
    expected = {f"Writer {w} wrote note {n}" for w in range(WRITERS) for n in range(writes)}
    expected |= {f"Agent wrote note {n}" for n in range(writes)}
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    total = writes * (WRITERS + 1)
    return {
        "writers": f"{WRITERS} CLI processes x {writes} writes + an MCP agent x {writes}",
        "errors": len(errors),
        "first_errors": errors[:3],
        "duplicates": sum(c - 1 for c in counts.values() if c > 1),
        "missing": len(expected - counts.keys()),
        "uncommitted_paths": len(status.splitlines()),
        "writes_per_s": round(total / wall, 2),
        "lock_wait_p50_ms": ms(waits[len(waits) // 2]) if waits else None,
        "lock_wait_p95_ms": ms(waits[min(len(waits) - 1, int(len(waits) * 0.95))])
        if waits
        else None,
        "lock_wait_max_ms": ms(waits[-1]) if waits else None,
    }


def _token(root: Path, env: dict[str, str]) -> tuple[str, str]:
    agent = f"bench-load-{os.getpid()}"
    added = subprocess.run(
        [*MEMORYCTL, "agents", "add", agent, "--profile", "work", "--vault", str(root), "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return agent, json.loads(added.stdout)["token"]


def run(n: int, workdir: Path) -> dict[str, object]:
    name = f"concurrency-{n}"
    info = synth_vault(workdir, name, SynthSpec(n=n, pins=30))
    root = info.root
    (root / "memoryctl.toml").write_text(
        "[git]\nautocommit = true\n\n[mcp]\nwrites_per_minute = 1000\n" + PROFILE,
        encoding="utf-8",
    )
    init_vault(root)  # a new repository: its first commit holds the whole vault
    fresh_cache(workdir, name)
    env = _env(workdir)
    vault = Vault(root)
    # A vault in use: its index built and the live checks run once over it. Their first
    # whole-vault run files a few hundred proposals in one write; the figure is about
    # the writes that follow.
    check_changes(vault, now=dt.datetime.now(dt.UTC))
    vault.close()
    smoke = n < 10_000
    writes = 3 if smoke else 50
    calls = 5 if smoke else 100

    written = _writers(root, env, writes)
    log(
        f"writers: {written['errors']} errors, {written['duplicates']} duplicates, "
        f"{written['uncommitted_paths']} uncommitted, {written['writes_per_s']} writes/s, "
        f"lock wait p95 {written['lock_wait_p95_ms']} ms"
    )

    rng = random.Random(17)
    messages = message_queries(info, 200, rng)
    keywords = keyword_queries(info, 200, rng)
    # The same load with no call asked twice: what the server's remembered answers add
    # to the figures above, which ask each of 200 messages about five times.
    unique_messages = list(dict.fromkeys(message_queries(info, 3 * CLIENTS * calls, rng)))
    unique_keywords = list(dict.fromkeys(keyword_queries(info, 20 * CLIENTS * calls, rng)))
    distinct_lists = (unique_messages[: CLIENTS * calls], unique_keywords[: CLIENTS * calls])
    if min(len(xs) for xs in distinct_lists) < CLIENTS * calls:
        raise RuntimeError("too few distinct queries for the distinct-call load")
    repeated = (messages, keywords)
    loads: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    served = {"today": (root, env)}
    source = baseline_server.package(workdir)
    if source is not None:
        copy = baseline_server.vault_copy(root)
        cache = workdir / f"cache-{name}-baseline"
        shutil.rmtree(cache, ignore_errors=True)
        baseline_env = baseline_server.environment(env, source, cache)
        if baseline_server.runs_from(baseline_env, source):
            served["baseline"] = (copy, baseline_env)
        else:
            log(f"no baseline server: python -m memoryctl does not import {source}")
    # Today's server and the baseline take turns on the one-process loads, so a change in
    # the machine's load meets both alike; `over_baseline` compares their medians.
    runs = [
        ("today", "repeated", HTTP_WORKERS, repeated, 1),
        *[(who, "alone", 1, repeated, 1) for _ in range(2) for who in served],
        *[
            (who, "distinct", workers, distinct_lists, 1)
            for who, workers in (("today", HTTP_WORKERS), ("today", 1), ("baseline", 1))
            if who in served
        ],
        ("today", "again", 1, repeated, 2),  # the second round is measured
    ]
    tokens = {who: _token(folder, served_env) for who, (folder, served_env) in served.items()}
    try:
        for who, label, workers, lists, rounds in runs:
            folder, served_env = served[who]
            tag = f"{who}-{label}-{workers}"
            log_path = workdir / f"{name}-http-{tag}.log"
            try:
                process, url = _start_http(folder, served_env, log_path, workers)
            except RuntimeError as error:  # the baseline, most likely: said, not fatal
                log(f"{tag}: the server did not start: {str(error)[-300:]}")
                continue
            try:
                for _ in range(rounds):
                    figures = anyio.run(
                        _http_load,
                        url,
                        tokens[who][1],
                        *lists,
                        CLIENTS,
                        calls,
                        process.pid,
                        label == "distinct",
                    )
                figures["workers"] = workers
                loads[tag].append(figures)
            finally:
                process.terminate()
                process.wait(timeout=30)
    finally:
        for who, (folder, served_env) in served.items():
            subprocess.run(
                [*MEMORYCTL, "agents", "revoke", tokens[who][0], "--vault", str(folder)],
                env=served_env,
                capture_output=True,
            )
    load = loads[f"today-repeated-{HTTP_WORKERS}"][0]
    alone = _steadiest(loads["today-alone-1"])
    distinct = loads[f"today-distinct-{HTTP_WORKERS}"][0]
    distinct_alone = loads["today-distinct-1"][0]
    again = loads["today-again-1"][0]
    baseline = {
        "revision": baseline_server.REVISION,
        "measured": "baseline-alone-1" in loads,
        "one_process": _steadiest(loads.get("baseline-alone-1", [])),
        "distinct_one_process": (loads.get("baseline-distinct-1") or [None])[0],
    }
    load["over_one_process"] = round(load["calls_per_s"] / alone["calls_per_s"], 2)
    for figures, base in (
        (load, baseline["one_process"]),
        (alone, baseline["one_process"]),
        (distinct, baseline["distinct_one_process"]),
        (distinct_alone, baseline["distinct_one_process"]),
    ):
        if base is not None:
            figures["over_baseline"] = round(figures["calls_per_s"] / base["calls_per_s"], 2)
    for what, figures in (
        (f"{HTTP_WORKERS} workers", load),
        ("one process", alone),
        (f"{HTTP_WORKERS} workers, no call asked twice", distinct),
        ("one process, no call asked twice", distinct_alone),
        ("one process, the same load asked again", again),
        ("the baseline, one process", baseline["one_process"]),
        ("the baseline, one process, no call asked twice", baseline["distinct_one_process"]),
    ):
        if figures is not None:
            log(f"HTTP {CLIENTS}x{calls}, {what}: {_said(figures)}")
    if not baseline["measured"]:
        log("no baseline measured: over_baseline is left out (see bench/baseline_server.py)")
    return {
        "benchmark": "concurrency",
        "memories": n,
        "machine": machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "parallel_writes": written,
        "http_concurrent": load,
        "http_one_process": alone,
        "http_distinct_calls": distinct,
        "http_distinct_calls_one_process": distinct_alone,
        "http_asked_again": again,
        "baseline": baseline,
        "targets_at_10k": {
            "errors": 0,
            "duplicates": 0,
            "uncommitted_paths": 0,
            "http_errors": 0,
            "http_over_baseline": 2.0,
        },
    }


def _steadiest(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Of a few runs of one load, the one of median calls a second (the lower of two),
    with every run's calls a second beside it."""
    if not runs:
        return None
    ordered = sorted(runs, key=lambda figures: figures["calls_per_s"])
    chosen = dict(ordered[(len(ordered) - 1) // 2])
    chosen["calls_per_s_of_each_run"] = [figures["calls_per_s"] for figures in runs]
    return chosen


def _said(figures: dict[str, Any]) -> str:
    over = figures.get("over_baseline")
    return (
        f"{figures['errors']} errors, p95 {figures['p95_ms']} ms, "
        f"{figures['calls_per_s']} calls/s"
        + (f" ({over}x the baseline)" if over is not None else "")
        + f"; CPU a call: server {figures['server_cpu_ms_per_call']} ms, "
        f"clients {figures['client_cpu_ms_per_call']} ms"
    )


if __name__ == "__main__":
    bench_main(run, __doc__)
