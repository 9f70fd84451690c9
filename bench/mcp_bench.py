"""Figures for the MCP server, measured with the SDK's own client over real transports.

- stdio: from launching `memoryctl serve` to the first successful tool call (warm index);
- get_context and recall latency over stdio, as the client sees it;
- 20 concurrent HTTP clients (loopback), each making 50 calls: errors and p95;
- what syncing the index before every call would cost instead of the watcher.

    python -m bench.mcp_bench --n 100000
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.common import (
    bench_main,
    fresh_cache,
    log,
    machine,
    ms,
    percentiles,
    process_tree_cpu,
    synth_vault,
    timer,
)
from bench.synthvault import SynthSpec, keyword_queries, message_queries
from memoryctl.storage.vault import Vault

PROFILE = '\n[profiles.work]\nnamespaces = ["work"]\nvisibility = "private"\n'
STARTS = 5
CALLS = 200
CLIENTS = 20
CALLS_PER_CLIENT = 50
MEMORYCTL = (sys.executable, "-m", "memoryctl")


def _env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        XDG_CONFIG_HOME=str(workdir / "mcp-config"),
        XDG_DATA_HOME=str(workdir / "mcp-data"),
        PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring",
    )
    return env


def _stdio(root: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[*MEMORYCTL[1:], "serve", "--vault", str(root), "--profile", "work"],
        env=env,
    )


async def _first_call(params: StdioServerParameters) -> float:
    started = time.perf_counter()
    async with Client(params) as client:
        result = await client.call_tool("pins", {})
        elapsed = time.perf_counter() - started
    assert not result.is_error, result
    return elapsed


async def _stdio_latencies(
    params: StdioServerParameters, messages: list[str], keywords: list[str]
) -> dict[str, Any]:
    context: list[float] = []
    recall: list[float] = []
    async with Client(params) as client:
        await client.call_tool("pins", {})  # warm the server's caches once
        for message in messages:
            started = time.perf_counter()
            result = await client.call_tool("get_context", {"message": message})
            context.append(time.perf_counter() - started)
            assert not result.is_error, result
        for query in keywords:
            started = time.perf_counter()
            result = await client.call_tool("recall", {"query": query, "limit": 10})
            recall.append(time.perf_counter() - started)
            assert not result.is_error, result
    return {"get_context": percentiles(context), "recall": percentiles(recall)}


def _start_http(
    root: Path, env: dict[str, str], log_path: Path, workers: int = 1
) -> tuple[subprocess.Popen, str]:
    more = ["--workers", str(workers)] if workers > 1 else []
    with open(log_path, "wb") as err:
        process = subprocess.Popen(
            [*MEMORYCTL, "serve", "--http", "--port", "0", "--vault", str(root), *more],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        started = text.count("worker process") >= workers - 1  # the load waits for them
        for word in text.split():
            if started and word.startswith("http://") and word.endswith("/mcp"):
                return process, word
        if process.poll() is not None:
            raise RuntimeError(log_path.read_text())
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the HTTP server did not start")


async def _http_load(
    url: str,
    token: str,
    messages: list[str],
    keywords: list[str],
    clients: int = CLIENTS,
    calls_each: int = CALLS_PER_CLIENT,
    server: int | None = None,
    distinct: bool = False,
) -> dict:
    """The load, and what it cost: the CPU time per call of the server's processes
    (`server`'s pid and its workers) and of the clients (this process).

    Each call draws its message or query from the lists, so calls repeat; `distinct`
    gives every call its own, in turn (lists as long as all the calls), so no answer
    the server remembers is asked for again."""
    times: list[float] = []
    errors: list[str] = []

    async def one_client(number: int) -> None:
        rng = random.Random(number)
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            for call in range(calls_each):
                turn = (number * calls_each + call) if distinct else None
                if rng.random() < 0.5:
                    message = rng.choice(messages) if turn is None else messages[turn]
                    tool, arguments = "get_context", {"message": message}
                else:
                    query = rng.choice(keywords) if turn is None else keywords[turn]
                    tool, arguments = "recall", {"query": query}
                started = time.perf_counter()
                try:
                    result = await client.call_tool(tool, arguments)
                    if result.is_error:
                        errors.append(str(result.content)[:200])
                except Exception as error:  # counted, not raised: the figure is the count
                    errors.append(repr(error)[:200])
                times.append(time.perf_counter() - started)

    served_before = process_tree_cpu(server) if server is not None else None
    asked_before = time.process_time()
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for number in range(clients):
            group.start_soon(one_client, number)
    wall = time.perf_counter() - started
    asked = time.process_time() - asked_before
    served_after = process_tree_cpu(server) if server is not None else None
    served = (
        served_after - served_before
        if served_before is not None and served_after is not None
        else None
    )
    return {
        "clients": clients,
        "calls_each": calls_each,
        "errors": len(errors),
        "first_errors": errors[:3],
        "calls_per_s": round(len(times) / wall, 1),
        "server_cpu_ms_per_call": ms(served / len(times)) if served is not None else None,
        "client_cpu_ms_per_call": ms(asked / len(times)),
        **percentiles(times),
    }


def run(n: int, workdir: Path) -> dict[str, object]:
    info = synth_vault(workdir, f"mcp-{n}", SynthSpec(n=n, pins=30))
    with open(info.root / "memoryctl.toml", "a", encoding="utf-8") as handle:
        handle.write(PROFILE)
    fresh_cache(workdir, f"mcp-{n}")
    env = _env(workdir)

    with timer() as cold:
        vault = Vault(info.root)
        _ = vault.index
    log(f"cold index {cold[0]:.1f} s")
    with timer() as full_sync:
        vault.index.sync()
    vault.close()
    log(f"a full sync of the warm index (what syncing before each call costs) {full_sync[0]:.3f} s")

    params = _stdio(info.root, env)
    starts = [anyio.run(_first_call, params) for _ in range(STARTS)]
    log(f"stdio start to first call: {', '.join(f'{s:.2f}' for s in starts)} s")

    rng = random.Random(13)
    messages = message_queries(info, CALLS, rng)
    keywords = keyword_queries(info, CALLS, rng)
    stdio = anyio.run(_stdio_latencies, params, messages, keywords)
    log(
        f"get_context p95 {stdio['get_context']['p95_ms']} ms, "
        f"recall p95 {stdio['recall']['p95_ms']} ms"
    )

    agent = f"bench-{os.getpid()}"
    added = subprocess.run(
        [
            *MEMORYCTL,
            "agents",
            "add",
            agent,
            "--profile",
            "work",
            "--vault",
            str(info.root),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    token = json.loads(added.stdout)["token"]
    process, url = _start_http(info.root, env, workdir / f"mcp-{n}-http.log")
    try:
        load = anyio.run(
            _http_load, url, token, messages, keywords, CLIENTS, CALLS_PER_CLIENT, process.pid
        )
    finally:
        process.terminate()
        process.wait(timeout=30)
        subprocess.run(
            [*MEMORYCTL, "agents", "revoke", agent, "--vault", str(info.root)],
            env=env,
            capture_output=True,
        )
    log(f"HTTP {CLIENTS}x{CALLS_PER_CLIENT}: {load['errors']} errors, p95 {load['p95_ms']} ms")

    return {
        "benchmark": "mcp",
        "memories": n,
        "machine": machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "stdio_start_to_first_call_s": {
            "median": round(statistics.median(starts), 3),
            "max": round(max(starts), 3),
            "runs": len(starts),
        },
        "get_context_over_stdio": stdio["get_context"],
        "recall_over_stdio": stdio["recall"],
        "http_concurrent": load,
        "full_sync_before_a_call_ms": ms(full_sync[0]),
        "targets_at_100k": {
            "stdio_start_to_first_call_s": 1.5,
            "get_context_p95_ms": 100,
            "recall_p95_ms": 50,
            "http_errors": 0,
        },
    }


if __name__ == "__main__":
    bench_main(run, __doc__)
