"""The MCP server, end to end with the SDK's own client: over stdio and over HTTP.

One HTTP server runs for the whole module (started as `memoryctl serve --http --workers
2`); each test connects to it as an agent. Stdio tests launch `memoryctl serve` themselves.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from conftest import SAMPLE_VAULT
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memoryctl.actions import init_vault
from memoryctl.mcp.guidance import PROMPT_NAME, SYSTEM_PROMPT
from memoryctl.mcp.server import make_server
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = """
[corrections]
guard = 8

[mcp]
writes_per_minute = 1000
"""
# The sample vault's own `work` profile sees only the work namespace, up to private.
# A work note derived from a secret personal one: a work agent must never see it.
DERIVED_FROM_SECRET = """\
---
id: wsum000001
title: Travel checklist for the offsite
kind: summary
status: active
created: 2026-11-03T08:00:00Z
namespace: work
visibility: private
source:
  kind: inference
  ref: weekly consolidation
derived_from: [p99nr5r054]
---

For the offsite in Berlin: pack the levothyroxine and keep breakfast after it.
"""
PROBES = (
    "peanut allergy",
    "levothyroxine medication",
    "offsite Berlin checklist",
    "mangoes papayas",
    "Lisbon Porto moved",
    "dinner with Sam",
    "sister Ada",
    "road bike",
)


def make_vault(root: Path, settings: str = SETTINGS) -> Path:
    shutil.copytree(SAMPLE_VAULT, root)
    with open(root / "memoryctl.toml", "a", encoding="utf-8") as handle:
        handle.write(settings)
    (root / "memories" / "work" / "offsite.md").write_text(DERIVED_FROM_SECRET, encoding="utf-8")
    init_vault(root, every_file=True)
    return root


def hidden_ids(root: Path) -> set[str]:
    """Every memory a `work` agent must never see."""
    vault = Vault(root)
    try:
        memories = vault.index.list()
    finally:
        vault.close()
    return {m.id for m in memories if m.namespace != "work" or m.visibility == "secret"} | {
        "wsum000001"
    }


def env_for(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMORYCTL_VAULT"}
    env.update(
        MEMORYCTL_CACHE_DIR=str(base / "cache"),
        XDG_CONFIG_HOME=str(base / "config"),
        XDG_CACHE_HOME=str(base / "xdg-cache"),
        XDG_DATA_HOME=str(base / "data"),
        PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring",
        GIT_AUTHOR_NAME="Test Person",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test Person",
        GIT_COMMITTER_EMAIL="test@example.com",
    )
    return env


def memoryctl(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryctl", *args], env=env, capture_output=True, text=True
    )


def add_agent(env: dict[str, str], vault: Path, name: str, profile: str = "work") -> str:
    result = memoryctl(env, "agents", "add", name, "-p", profile, "--vault", str(vault), "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["token"]


def start_http(env: dict[str, str], log: Path, *args: str) -> tuple[subprocess.Popen, str]:
    with open(log, "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "memoryctl", "serve", "--http", "--port", "0", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace")
        for word in text.split():
            if word.startswith("http://") and word.endswith("/mcp"):
                return process, word
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {text}")
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the server did not start")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@dataclass
class Served:
    vault: Path
    url: str
    env: dict[str, str]
    token: str  # the `work` agent's
    hidden: set[str]
    process: subprocess.Popen


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("mcp-http")
    env = env_for(base)
    # The vault's sealing key goes to the server's keyring, never to another's.
    with pytest.MonkeyPatch.context() as patch:
        for key in ("MEMORYCTL_CACHE_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
            patch.setenv(key, env[key])
        vault = make_vault(base / "vault")
    token = add_agent(env, vault, "work-agent")
    # Two worker processes, so every HTTP test below holds whichever process answers.
    process, url = start_http(env, base / "server.log", "--vault", str(vault), "--workers", "2")
    yield Served(vault, url, env, token, hidden_ids(vault), process)
    stop(process)


@pytest.fixture
def served(http_server: Served, monkeypatch: pytest.MonkeyPatch) -> Served:
    """The module's server, with this process using the same config, keyring and index."""
    for key in ("MEMORYCTL_CACHE_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(key, http_server.env[key])
    assert http_server.process.poll() is None, "the server stopped"
    return http_server


@asynccontextmanager
async def connect(url: str, token: str, mode: str = "auto") -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


def stdio_params(vault: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memoryctl", "serve", "--vault", str(vault), *args],
        env=dict(os.environ),
    )


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def git(vault: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=vault, capture_output=True, text=True, check=True
    ).stdout


# --- stdio ------------------------------------------------------------------------------


async def test_get_context_over_stdio_is_byte_for_byte_the_preview(tmp_path, cli):
    vault = make_vault(tmp_path / "vault")
    message = "Where do I open the PR for the core, and what did we say about mangoes?"
    async with Client(stdio_params(vault, "--profile", "work")) as client:
        result = await client.call_tool("get_context", {"message": message})
        empty = await client.call_tool("get_context", {})
    preview = cli("preview", "--vault", str(vault), "--profile", "work", "-m", message)
    assert preview.code == 0, preview.err
    assert not result.is_error
    assert text_of(result) == preview.out
    assert result.structured_content["profile"] == "work"
    assert text_of(empty) == cli("preview", "--vault", str(vault), "--profile", "work").out


def _wording(report: dict[str, Any]) -> list[str]:
    """Each memory's text in a full bundle report, as JSON would quote it, where it is
    more than its title (which the agent's report keeps)."""
    entries = report["pinned"] + report["recalled"]
    texts = [e["text"] for e in entries if e["text"] != e["title"]]
    texts += [n["text"] for e in entries for n in e["now"] + e["newer"] if n["text"]]
    return [json.dumps(t, ensure_ascii=False)[1:-1] for t in texts]


async def test_an_agents_report_names_each_memory_without_repeating_the_text(tmp_path, cli):
    vault = make_vault(tmp_path / "vault")
    message = "Where do I open the PR for the core, and what did we say about the release?"
    # The preview first: its live checks file the proposals the bundle then shows.
    shown = cli("preview", "--vault", str(vault), "--profile", "work", "-m", message, "--json")
    full = json.loads(shown.out)
    async with Client(make_server(Vault(vault), "work", "tester")) as client:
        context = await client.call_tool("get_context", {"message": message})
        found = await client.call_tool("recall", {"query": "ufo core release", "limit": 20})
        pinned = await client.call_tool("pins", {})
    assert full["pinned"] and full["recalled"] and _wording(full)
    report = context.structured_content
    # What the person's preview reports, less the wording the text beside it holds.
    assert [e["id"] for e in report["pinned"]] == [e["id"] for e in full["pinned"]]
    assert [e["id"] for e in report["recalled"]] == [e["id"] for e in full["recalled"]]
    assert report["budget"] == full["budget"] and report["sections"] == full["sections"]
    assert {x["id"] for x in report["excluded"]} <= {x["id"] for x in full["excluded"]}
    assert "text" not in report and all("block" not in e for e in report["pinned"])
    dumped = json.dumps(report, ensure_ascii=False)
    assert not [t for t in _wording(full) if t in dumped]
    for shelf in (found, pinned):
        memories = shelf.structured_content["memories"]
        assert memories and all(f"[id {m['id']} · " in text_of(shelf) for m in memories)
        assert all("text" not in m and "block" not in m for m in memories)
    assert not [t for t in _wording(full) if t in json.dumps(pinned.structured_content)]


async def test_an_agent_write_over_stdio_is_a_commit_naming_the_agent_and_tool(tmp_path):
    vault = make_vault(tmp_path / "vault")
    body = "The UFO core moved from metalcraftai/ufo to ufo-ai/ufo; open PRs there."
    async with Client(stdio_params(vault, "--profile", "work", "--agent", "claude-code")) as c:
        stored = await c.call_tool(
            "remember", {"body": body, "deprecates": ["metalcraftai/ufo"], "source_ref": "chat"}
        )
    assert not stored.is_error, text_of(stored)
    data = stored.structured_content
    assert data["source"] == {"kind": "inference", "ref": "agent claude-code: chat"}
    assert data["reach"]["count"] >= 5
    # The commit that added the memory (the server's live checks may commit proposals
    # for the sample vault around it).
    path = next((vault / "memories" / "work").glob("*ufo-core-moved*.md"))
    message = git(vault, "log", "-1", "--format=%B", "--", str(path.relative_to(vault)))
    assert "Agent: claude-code" in message and "Tool: remember" in message
    assert git(vault, "status", "--porcelain") == ""
    assert path.read_text(encoding="utf-8").endswith(body + "\n")


async def test_an_agents_burst_of_remember_lists_in_the_order_it_was_written(tmp_path, cli):
    """Several memories remembered within a second or two: `memoryctl list` (the TUI's
    order too) shows them newest first in the order the agent wrote them, not by id."""
    vault = make_vault(tmp_path / "vault")
    async with Client(stdio_params(vault, "--profile", "work", "--agent", "claude-code")) as c:
        for n in range(8):
            stored = await c.call_tool("remember", {"body": f"Burst note number {n}"})
            assert not stored.is_error, text_of(stored)
    listed = cli("--vault", str(vault), "list", "--json")
    assert listed.code == 0, listed.err
    bodies = [m["body"].strip() for m in json.loads(listed.out) if "Burst note" in m["body"]]
    assert bodies == [f"Burst note number {n}" for n in range(7, -1, -1)]


async def test_a_client_disconnecting_mid_write_leaves_no_half_written_file(tmp_path):
    vault = make_vault(tmp_path / "vault")
    body = "A long note about the release pipeline. " * 1500  # about 60 KB
    for delay in (0.0, 0.05, 0.3):
        async with Client(stdio_params(vault, "--profile", "work")) as client:
            with anyio.move_on_after(delay):
                await client.call_tool("remember", {"body": body, "title": f"Cut at {delay}"})
        # The server has exited: whatever it wrote is whole, and committed.
        for folder, _, names in os.walk(vault):
            if ".git" in Path(folder).parts:
                continue
            assert not [n for n in names if n.endswith(".tmp")], folder
        for path in (vault / "memories").rglob("*.md"):
            note = notefile.parse_bytes(path.read_bytes())
            if note.data.get("title", "").startswith("Cut at"):
                assert note.body.strip("\n") == body.strip("\n")
        assert git(vault, "status", "--porcelain") == ""


async def test_an_agent_writing_while_the_cli_writes_gets_every_call_stored_once(tmp_path):
    vault = make_vault(tmp_path / "vault")
    cli_writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\n"
            "for n in range(12):\n"
            "    done = subprocess.run([sys.executable, '-m', 'memoryctl', '--vault', sys.argv[1],"
            " 'add', f'Script note {n}', '--namespace', 'work'], capture_output=True, text=True)\n"
            "    print(done.returncode, ' | '.join(done.stderr.split('\\n')), flush=True)",
            str(vault),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    answers = []
    async with Client(stdio_params(vault, "--profile", "work", "--agent", "claude-code")) as c:
        for n in range(12):
            answers.append(await c.call_tool("remember", {"body": f"Agent note {n}"}))
    cli_out, _ = cli_writer.communicate(timeout=300)
    assert [text_of(a) for a in answers if a.is_error] == []
    assert [line.split(" ", 1)[0] for line in cli_out.splitlines()] == ["0"] * 12
    assert "not committed" not in cli_out
    titles = [
        notefile.parse_bytes(p.read_bytes()).data.get("title")
        for p in (vault / "memories" / "work").glob("*.md")
    ]
    for n in range(12):
        assert titles.count(f"Agent note {n}") == 1
        assert titles.count(f"Script note {n}") == 1
    assert git(vault, "status", "--porcelain") == ""


# --- tokens over HTTP ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_valid_token_is_served_with_its_agents_profile(served, mode):
    # "legacy" is the initialize handshake most clients still use; "auto" the 2026 protocol.
    async with connect(served.url, served.token, mode) as client:
        result = await client.call_tool("get_context", {"message": "release checklist"})
        pins = await client.read_resource("memoryctl://pins")
    assert not result.is_error
    assert result.structured_content["profile"] == "work"
    assert "Dana Okafor" in pins.contents[0].text


async def test_the_index_follows_edits_made_while_the_server_runs(served):
    note = served.vault / "memories" / "work" / "edited-outside.md"
    note.write_text(
        "---\nid: outside0001\ntitle: Edited in an editor\nnamespace: work\n---\n\n"
        "The zanzibarite cluster is the new staging target.\n",
        encoding="utf-8",
    )
    try:
        async with connect(served.url, served.token) as client:
            # The server's watcher picks the file up; on a loaded machine that can take
            # seconds, so the wait is long and the test ends as soon as it is found.
            with anyio.move_on_after(30):
                while True:
                    found = await client.call_tool("recall", {"query": "zanzibarite"})
                    if found.structured_content["count"]:
                        break
                    await anyio.sleep(0.05)
        assert [m["id"] for m in found.structured_content["memories"]] == ["outside0001"]
    finally:
        git(served.vault, "add", "--", str(note))
        git(served.vault, "commit", "-q", "-m", "An edit made outside memoryctl")


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Basic d29yay1hZ2VudDp4"},
        {"Authorization": "Bearer " + "x" * 5000},
    ],
    ids=["missing", "bare", "wrong", "basic", "huge"],
)
def test_a_missing_malformed_or_wrong_token_gets_401_with_no_detail(served, headers):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx2.post(served.url, json=body, headers=headers, timeout=10)
    assert response.status_code == 401
    assert "work-agent" not in response.text and "work" not in response.text
    assert response.json() == {
        "error": "invalid_token",
        "error_description": "Authentication required",
    }


@asynccontextmanager
async def refused() -> AsyncIterator[None]:
    """The SDK reports an HTTP 401 as an MCPError (inside a task group's error group)."""
    with pytest.RaisesGroup(MCPError, allow_unwrapped=True, flatten_subgroups=True):
        yield


async def test_the_sdk_client_with_a_wrong_token_is_refused(served):
    async with refused(), connect(served.url, served.token[:-1] + "x") as client:
        await client.call_tool("pins", {})


async def test_a_revoked_token_fails_on_its_next_request_without_a_restart(served, cli):
    token = add_agent(served.env, served.vault, "short-lived")
    async with connect(served.url, token) as client:
        assert not (await client.call_tool("pins", {})).is_error
        revoked = cli("agents", "revoke", "short-lived", "--vault", str(served.vault))
        assert revoked.code == 0, revoked.err
        async with refused():
            await client.call_tool("pins", {})
    async with connect(served.url, served.token) as client:  # others carry on
        assert not (await client.call_tool("pins", {})).is_error


def worker_processes(server: subprocess.Popen) -> list[int]:
    """The server's worker processes (they start once its index is in step)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        workers = [
            int(pid)
            for pid in children
            if b"--worker-of" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]
        if workers:
            return workers
        time.sleep(0.1)
    raise AssertionError("no worker process started")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
async def test_many_agents_at_once_are_answered_by_the_servers_worker_processes(served):
    assert len(worker_processes(served.process)) == 1  # and the first process: two

    async def one_agent(results: list[Any]) -> None:
        # A client of its own each time: a new connection, to whichever process accepts it.
        async with connect(served.url, served.token) as client:
            results.append(await client.call_tool("get_context", {"message": "release"}))

    results: list[Any] = []
    async with anyio.create_task_group() as group:
        for _ in range(8):
            group.start_soon(one_agent, results)
    assert len(results) == 8 and not any(r.is_error for r in results)
    assert {r.structured_content["profile"] for r in results} == {"work"}
    assert len({text_of(r) for r in results}) == 1  # the same bundle, whoever answered


# --- the rules hold for agents -------------------------------------------------------------


def _ids_in(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "id" and isinstance(item, str):
                found.add(item)
            found |= _ids_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _ids_in(item)
    return found


async def test_a_work_agent_never_sees_personal_secret_or_derived_memories(served):
    hidden = served.hidden
    assert {"p99nr5r054", "zj1d2pyve2", "fyreg87wtj", "wsum000001"} <= hidden
    seen: list[Any] = []
    async with connect(served.url, served.token) as client:
        for probe in PROBES:
            seen.append(await client.call_tool("get_context", {"message": probe}))
            seen.append(await client.call_tool("recall", {"query": probe, "limit": 50}))
        seen.append(await client.call_tool("pins", {}))
        outside = await client.call_tool("recall", {"query": "mangoes", "namespace": "personal"})
        resources = [
            await client.read_resource(uri) for uri in ("memoryctl://pins", "memoryctl://context")
        ]
    for result in seen:
        assert not result.is_error, text_of(result)
        report = {k: v for k, v in result.structured_content.items() if k != "message"}
        assert not _ids_in(report) & hidden
        dumped = text_of(result) + json.dumps(report)
        for word in (
            "peanut",
            "levothyroxine",
            "hypothyroid",
            "mango",
            "papaya",
            "Berlin",
            "sister",
        ):
            assert word not in dumped, (word, dumped[:300])
    for resource in resources:
        text = resource.contents[0].text
        assert "peanut" not in text and "Dana Okafor" in text
    assert outside.structured_content["count"] == 0
    assert "outside the profile 'work'" in text_of(outside)


async def test_an_agents_memory_is_marked_as_its_inference_in_the_bundle(served):
    async with connect(served.url, served.token) as client:
        stored = await client.call_tool(
            "remember", {"body": "The staging bucket for UFO hosted is ufo-staging-eu."}
        )
        context = await client.call_tool("get_context", {"message": "staging bucket"})
    assert not stored.is_error, text_of(stored)
    assert stored.structured_content["namespace"] == "work"
    line = next(line for line in text_of(context).splitlines() if "ufo-staging-eu" in line)
    assert line.endswith("(agent inference; source: agent work-agent)")
    assert "Agent: work-agent\nTool: remember (MCP)" in git(
        served.vault, "log", "-1", "--format=%B"
    )


async def test_an_agent_recalls_what_it_just_remembered(served):
    async with connect(served.url, served.token) as client:
        before = await client.call_tool("recall", {"query": "quetzalcoatlite"})
        await client.call_tool(
            "remember", {"body": "The quetzalcoatlite runner pool is reserved for GA builds."}
        )
        after = await client.call_tool("recall", {"query": "quetzalcoatlite"})
    assert before.structured_content["count"] == 0
    assert after.structured_content["count"] == 1


async def test_an_agent_recalls_a_chinese_memory_by_a_word_inside_it(served):
    async with connect(served.url, served.token) as client:
        await client.call_tool("remember", {"body": "我们的发布流程在周四下午冻结代码。"})
        word = await client.call_tool("recall", {"query": "冻结"})
        question = await client.call_tool("recall", {"query": "什么时候冻结代码？"})
    for found in (word, question):
        assert found.structured_content["count"] == 1, text_of(found)
        assert "发布流程" in text_of(found)


async def test_an_agent_recalls_thai_lao_khmer_and_burmese_memories_by_a_word_inside(served):
    memories = {
        "ข้าวผัด": "ทีมของเราไปกินข้าวผัดกุ้งทุกวันศุกร์",
        "ເຂົ້າໜຽວ": "ທີມຂອງພວກເຮົາກິນເຂົ້າໜຽວທຸກວັນສຸກ",
        "បាយឆា": "ក្រុមរបស់យើងញ៉ាំបាយឆារៀងរាល់ថ្ងៃសុក្រ",
        "မန္တလေး": "ကျွန်တော်တို့အဖွဲ့ဟာမန္တလေးမှာရုံးရှိတယ်",
    }
    async with connect(served.url, served.token) as client:
        for body in memories.values():
            await client.call_tool("remember", {"body": body})
        for word, body in memories.items():
            found = await client.call_tool("recall", {"query": word})
            assert found.structured_content["count"] == 1, text_of(found)
            assert body in text_of(found)


async def test_an_agent_cannot_overwrite_a_memory_or_pick_its_file(served):
    identity = served.vault / "memories" / "work" / "identity.md"
    before = identity.read_bytes()
    async with connect(served.url, served.token) as client:
        stored = await client.call_tool(
            "remember", {"body": "I am someone else.", "title": "../../identity"}
        )
    assert not stored.is_error, text_of(stored)
    assert identity.read_bytes() == before
    added = git(served.vault, "show", "--name-only", "--format=", "HEAD").split()
    assert added == ["memories/work/identity-2.md"]


async def test_a_correction_that_reaches_too_far_is_refused_for_agents(served):
    async with connect(served.url, served.token) as client:
        refused = await client.call_tool(
            "remember", {"body": "UFO is now called Saucer.", "deprecates": ["UFO"]}
        )
        narrow = await client.call_tool(
            "remember",
            {"body": "PR 1705 was reverted on 2026-11-20.", "deprecates": ["pull/1705"]},
        )
    assert refused.is_error
    assert "memories, more than this vault allows (8)" in text_of(refused)
    assert "memoryctl correct --force" in text_of(refused)
    assert not narrow.is_error, text_of(narrow)
    assert narrow.structured_content["reach"]["count"] == 1


@pytest.mark.parametrize("word", ["the", "repo", "Meeting"])
async def test_a_common_word_is_never_deprecated_by_an_agent(served, word):
    before = git(served.vault, "rev-list", "--count", "HEAD")
    async with connect(served.url, served.token) as client:
        refused = await client.call_tool(
            "remember", {"body": f"The {word} moved.", "deprecates": [word]}
        )
    assert refused.is_error
    assert f"deprecates {word!r}, a common word" in text_of(refused)
    assert "Agents cannot deprecate a common word at all" in text_of(refused)
    assert git(served.vault, "rev-list", "--count", "HEAD") == before


BAD_INPUT = [
    ("remember", {"body": ""}, "body cannot be empty"),
    ("remember", {"body": "  \n "}, "body cannot be empty"),
    ("remember", {}, "Field required"),
    ("remember", {"body": 42}, "valid string"),
    ("remember", {"body": "é" * 40_000}, "the limit is 65536 bytes"),
    ("remember", {"body": "ok", "deprecates": [f"old-host-{i}" for i in range(21)]}, "limit is 20"),
    ("remember", {"body": "ok", "deprecates": "metalcraftai/ufo"}, "valid list"),
    ("remember", {"body": "ok", "deprecates": ["ab"]}, "shorter than 3 characters"),
    ("remember", {"body": "ok", "deprecates": [""]}, "cannot be empty"),
    ("remember", {"body": "ok", "derived_from": ["nosuchid00"]}, "names no memory this agent"),
    ("remember", {"body": "ok", "derived_from": ["p99nr5r054"]}, "names no memory this agent"),
    ("remember", {"body": "ok", "kind": "gossip"}, "is not one of"),
    ("remember", {"body": "ok", "title": "two\nlines"}, "one line"),
    ("remember", {"body": "ok", "tags": [f"t{i}" for i in range(21)]}, "limit is 20"),
    ("remember", {"body": "ok", "tags": [3]}, "valid string"),
    ("recall", {"query": ""}, "query must be some text"),
    ("recall", {}, "Field required"),
    ("recall", {"query": "ufo", "limit": 0}, "from 1 to 50"),
    ("recall", {"query": "ufo", "limit": "many"}, "valid integer"),
    ("recall", {"query": "q " * 1500}, "the limit is 2000"),
    ("get_context", {"message": "m" * (64 * 1024 + 1)}, "the limit is 65536 bytes"),
    ("get_context", {"message": ["a list"]}, "valid string"),
    ("propose", {"action": "delete", "target": "vvtwsb0afj", "reason": "x"}, "must be one of"),
    ("propose", {"action": "restore", "target": "vvtwsb0afj", "reason": "x"}, "only the user"),
    ("propose", {"action": "confirm", "target": "vvtwsb0afj", "reason": "x"}, "only the user"),
    ("propose", {"action": "retire", "target": "vvtwsb0afj", "reason": " "}, "reason cannot be"),
    ("propose", {"action": "retire", "target": "nosuchid00", "reason": "x"}, "names no memory"),
    ("propose", {"action": "retire", "target": "p99nr5r054", "reason": "x"}, "names no memory"),
    ("propose", {"action": "retire", "target": "", "reason": "x"}, "must be a memory id"),
    (
        "propose",
        {"action": "retire", "target": "vvtwsb0afj", "reason": "x", "body": "y"},
        "only for",
    ),
    ("propose", {"action": "replace", "target": "vvtwsb0afj", "reason": "x"}, "needs the new text"),
    ("propose", {"action": "retire", "target": "vvtwsb0afj"}, "Field required"),
    ("no_such_tool", {}, "Unknown tool"),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    BAD_INPUT,
    ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD_INPUT)],
)
async def test_bad_input_gets_a_clear_error_and_the_server_keeps_running(
    served, tool, arguments, expected
):
    async with connect(served.url, served.token) as client:
        result = await client.call_tool(tool, arguments)
        assert result.is_error
        assert expected in text_of(result), text_of(result)
        assert not (await client.call_tool("pins", {})).is_error
    assert served.process.poll() is None
    assert git(served.vault, "status", "--porcelain") == ""


async def test_a_request_too_big_for_the_transport_is_refused_and_the_server_carries_on(
    served,
):
    # Past 4 MB the SDK's HTTP transport answers 413 before any tool runs.
    async with connect(served.url, served.token) as client:
        with pytest.raises(MCPError):
            await client.call_tool("remember", {"body": "x" * (5 * 1024 * 1024)})
        assert not (await client.call_tool("pins", {})).is_error


async def test_an_agents_proposals_wait_in_memoryctl_review(served, cli):
    target = served.vault / "memories" / "work" / "preferences" / "editor-neovim.md"
    before = target.read_bytes()
    async with connect(served.url, served.token) as client:
        made = await client.call_tool(
            "propose",
            {"action": "retire", "target": "vvtwsb0afj", "reason": "Dana uses Helix now."},
        )
        again = await client.call_tool(
            "propose",
            {"action": "retire", "target": "vvtwsb0afj", "reason": "Dana uses Helix now."},
        )
        replace = await client.call_tool(
            "propose",
            {
                "action": "replace",
                "target": "vvtwsb0afj",
                "reason": "Say which editor holds now.",
                "body": "My editor is Helix; I used Neovim until October 2026.",
            },
        )
    assert not made.is_error, text_of(made)
    assert made.structured_content["origin"] == {"kind": "agent", "ref": "work-agent"}
    assert again.structured_content["new"] is False
    assert again.structured_content["id"] == made.structured_content["id"]
    assert not replace.is_error, text_of(replace)
    assert target.read_bytes() == before  # only the person decides
    assert "origin: agent work-agent" in git(served.vault, "log", "-1", "--format=%B")
    listed = cli("review", "--vault", str(served.vault), "--json")
    assert listed.code == 0, listed.err
    queued = {item["id"]: item for item in listed.json()["proposals"]}
    for result in (made, replace):
        item = queued[result.structured_content["id"]]
        assert item["origin"] == {"kind": "agent", "ref": "work-agent"}
        assert item["targets"][0]["id"] == "vvtwsb0afj"
    shown = cli("review", "--vault", str(served.vault))
    assert "work-agent" in shown.out


async def test_an_agents_proposal_commit_names_the_tool(served):
    async with connect(served.url, served.token) as client:
        made = await client.call_tool(
            "propose",
            {"action": "review", "target": "hq44kmnt7t", "reason": "Check the merge policy."},
        )
    assert not made.is_error, text_of(made)
    assert "Tool: propose (MCP)" in git(served.vault, "log", "-1", "--format=%B")


async def test_an_http_client_disconnecting_mid_write_leaves_the_server_and_vault_whole(served):
    body = "Notes from the release retro. " * 2000
    for delay in (0.0, 0.02, 0.2):
        async with connect(served.url, served.token) as client:
            with anyio.move_on_after(delay):
                await client.call_tool("remember", {"body": body, "title": f"Retro {delay}"})
    async with connect(served.url, served.token) as client:
        assert not (await client.call_tool("pins", {})).is_error
    await anyio.sleep(0.5)  # a write whose client left finishes on its own
    for path in (served.vault / "memories").rglob("*.md"):
        note = notefile.parse_bytes(path.read_bytes())
        if str(note.data.get("title", "")).startswith("Retro"):
            assert note.body.strip("\n") == body.strip("\n")
    assert not list(served.vault.rglob("*.tmp"))
    assert git(served.vault, "status", "--porcelain") == ""


def test_no_token_is_in_the_vault_or_index_after_agents_used_the_server(served):
    from test_agents import files_containing

    history = git(served.vault, "log", "--all", "-p")
    for folder in (served.vault, Path(served.env["MEMORYCTL_CACHE_DIR"])):
        assert files_containing(folder, served.token.encode()) == []
    assert served.token not in history
    log = (Path(served.env["XDG_CONFIG_HOME"]).parent / "server.log").read_text()
    assert served.token not in log


# --- serving ---------------------------------------------------------------------------------


def test_http_refuses_a_remote_address_without_the_flag(vault_dir, cli):
    refused = cli("serve", "--http", "--host", "0.0.0.0", "--vault", str(vault_dir))
    assert refused.code == 1 and "--allow-remote" in refused.err
    mixed = cli("serve", "--http", "--profile", "work", "--vault", str(vault_dir))
    assert mixed.code == 1 and "comes from its identity" in mixed.err
    assert cli("serve", "--port", "9", "--vault", str(vault_dir)).code == 1


def test_http_on_a_remote_address_warns(tmp_path, vault_dir):
    env = env_for(tmp_path)
    process, url = start_http(
        env,
        tmp_path / "remote.log",
        "--host",
        "0.0.0.0",
        "--allow-remote",
        "--vault",
        str(vault_dir),
    )
    stop(process)
    log = (tmp_path / "remote.log").read_text()
    assert url.startswith("http://0.0.0.0:")
    assert "WARNING: serving on 0.0.0.0" in log


async def test_the_guidance_is_the_prompt_the_instructions_and_in_the_docs(tmp_path):
    vault = make_vault(tmp_path / "vault")
    async with Client(make_server(Vault(vault), "work", "tester")) as client:
        prompt = await client.get_prompt(PROMPT_NAME)
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert prompt.messages[0].content.text == SYSTEM_PROMPT
    assert set(tools) >= {"get_context", "recall", "remember", "propose", "pins"}
    assert "deprecates" in tools["remember"].description
    assert "exact outdated strings" in json.dumps(tools["remember"].input_schema)
    assert tools["recall"].annotations.read_only_hint
    assert SYSTEM_PROMPT in (ROOT / "docs" / "MCP.md").read_text(encoding="utf-8")
    assert SYSTEM_PROMPT.rstrip("\n") in (ROOT / "README.md").read_text(encoding="utf-8")


# --- in-process: limits and settings -----------------------------------------------------


async def test_a_conflict_never_names_a_fact_from_outside_the_profile(tmp_path):
    vault = make_vault(tmp_path / "vault")
    (vault / "memories" / "work" / "lunch.md").write_text(
        "---\nid: lunch00001\ntitle: Team lunch\nnamespace: work\ncreated: 2026-11-28\n"
        "subject: user\npredicate: likes\nvalue: mangoes\n---\n\n"
        "For the team lunch order: I like mangoes.\n",
        encoding="utf-8",
    )
    async with Client(make_server(Vault(vault), "work", "tester")) as client:
        result = await client.call_tool("get_context", {"message": "team lunch mangoes"})
    assert "For the team lunch order" in text_of(result)
    # The personal "user dislikes mangoes" (wbhh9dh72s) would conflict, but is not visible.
    assert "wbhh9dh72s" not in text_of(result) + json.dumps(result.structured_content)
    assert result.structured_content["conflicts"] == []


async def test_an_agent_over_its_writes_a_minute_is_told_when_to_retry(tmp_path):
    vault = make_vault(tmp_path / "vault", SETTINGS.replace("= 1000", "= 2"))
    async with Client(make_server(Vault(vault), "work", "eager")) as client:
        results = [
            await client.call_tool("remember", {"body": f"Fact number {i}."}) for i in range(3)
        ]
    assert [r.is_error for r in results] == [False, False, True]
    assert "2 writes a minute" in text_of(results[2]) and "Try again in" in text_of(results[2])


async def test_an_agent_cannot_write_to_a_vault_that_does_not_commit(tmp_path):
    vault = make_vault(tmp_path / "vault")
    config = vault / "memoryctl.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("autocommit = true", "autocommit = false"), encoding="utf-8")
    async with Client(make_server(Vault(vault), "work", "tester")) as client:
        refused = await client.call_tool("remember", {"body": "Something."})
    assert refused.is_error and "autocommit = false" in text_of(refused)


async def test_a_profile_narrowed_in_memoryctl_toml_applies_without_a_restart(tmp_path):
    vault = make_vault(tmp_path / "vault")
    async with Client(make_server(Vault(vault), "work", "tester")) as client:
        before = await client.call_tool("recall", {"query": "release", "limit": 50})
        config = vault / "memoryctl.toml"
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace('"private"', '"public"'), encoding="utf-8")
        after = await client.call_tool("recall", {"query": "release", "limit": 50})
    assert before.structured_content["count"] > 0
    assert after.structured_content["count"] == 0


# --- answers given again ----------------------------------------------------------------------


async def test_an_agent_asking_again_is_told_of_a_proposal_that_arrived_since(tmp_path, cli):
    vault = make_vault(tmp_path / "vault")
    # The same vault on another machine, where the person files a proposal; it arrives
    # here as a new file under proposals/, as a pull brings it, and the index is unchanged.
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(vault, elsewhere)
    proposed = cli(
        "--vault", str(elsewhere), "propose", "review", "vvtwsb0afj", "--reason", "Still Neovim?"
    )
    assert proposed.code == 0, proposed.err
    ask = {"message": "Which editor should my config snippets be for?"}
    opened = Vault(vault)
    async with Client(make_server(opened, "work", "tester")) as client:
        before = await client.call_tool("get_context", ask)
        recalled = await client.call_tool("recall", {"query": "editor"})
        assert (await client.call_tool("get_context", ask)).content == before.content
        generation = opened.index.generation()
        for made in (elsewhere / "proposals").rglob("*.md"):
            if "Still Neovim?" in made.read_text(encoding="utf-8"):
                arrived = vault / made.relative_to(elsewhere)
                arrived.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(made, arrived)
        after = await client.call_tool("get_context", ask)
        recalled_after = await client.call_tool("recall", {"query": "editor"})
        assert opened.index.generation() == generation
    pending = "a proposal to hold this for review"
    assert pending not in text_of(before) + text_of(recalled)
    assert pending in text_of(after)
    assert pending in text_of(recalled_after)


async def test_an_agent_asking_again_is_answered_while_every_worker_thread_is_busy(tmp_path):
    # A first ask is made in one of the server's worker threads; one asked before is
    # given from the event loop, so agents repeating themselves never queue behind
    # twenty first asks of a message.
    vault = make_vault(tmp_path / "vault")
    ask = {"message": "Which editor should my config snippets be for?"}
    server = make_server(Vault(vault), "work", "tester")
    async with Client(server) as client:
        first = await client.call_tool("get_context", ask)
        recalled = await client.call_tool("recall", {"query": "editor"})
        pinned = await client.call_tool("pins", {})
        threads = server.memoryctl_state.first_asks()
        held = [object() for _ in range(int(threads.total_tokens))]
        for holder in held:
            await threads.acquire_on_behalf_of(holder)
        try:
            with anyio.fail_after(10):
                again = await client.call_tool("get_context", ask)
                recalled_again = await client.call_tool("recall", {"query": "editor"})
                pinned_again = await client.call_tool("pins", {})
                # A write never queues behind the first asks either.
                stored = await client.call_tool("remember", {"body": "My editor is Helix now."})
            with anyio.move_on_after(1) as waited:  # a first ask waits for a thread
                await client.call_tool("recall", {"query": "neovim"})
        finally:
            for holder in held:
                threads.release_on_behalf_of(holder)
    assert again.content == first.content
    assert recalled_again.content == recalled.content
    assert pinned_again.content == pinned.content
    assert not stored.is_error, stored
    assert waited.cancelled_caught


async def test_twenty_agents_first_asks_are_made_a_few_at_a_time(tmp_path):
    # Bundles made in twenty threads at once cost more than twice the CPU each of two at
    # a time (each SQLite step hands the interpreter lock to another thread); the others
    # wait their turn, and every one is answered.
    vault = make_vault(tmp_path / "vault")
    server = make_server(Vault(vault), "work", "tester")
    busy: list[int] = []
    queued: list[int] = []
    async with Client(server) as client:
        await client.call_tool("pins", {})
        threads = server.memoryctl_state.first_asks()

        async def ask(n: int) -> None:
            result = await client.call_tool("get_context", {"message": f"editor question {n}"})
            assert not result.is_error, result

        with anyio.fail_after(60):
            async with anyio.create_task_group() as asking:
                for n in range(20):
                    asking.start_soon(ask, n)
                for _ in range(10_000):
                    busy.append(int(threads.borrowed_tokens))
                    queued.append(threads.statistics().tasks_waiting)
                    if max(queued) and not threads.borrowed_tokens:
                        break
                    await anyio.sleep(0)
    assert threads.total_tokens <= 4
    assert max(busy) == threads.total_tokens  # as many as it may, and no more
    assert max(queued) > 0  # the others waited their turn


async def test_an_agent_recalling_again_finds_what_the_cli_added_since(tmp_path, cli):
    vault = make_vault(tmp_path / "vault")
    async with Client(make_server(Vault(vault), "work", "tester")) as client:
        first = await client.call_tool("recall", {"query": "quokkaserver"})
        added = cli(
            "--vault",
            str(vault),
            "add",
            "Deploys go through quokkaserver now.",
            "--namespace",
            "work",
        )
        assert added.code == 0, added.err
        again = await client.call_tool("recall", {"query": "quokkaserver"})
    assert first.structured_content["count"] == 0
    assert again.structured_content["count"] == 1


async def test_agents_of_two_profiles_asking_the_same_are_each_answered_through_their_own(
    served,
):
    home = add_agent(served.env, served.vault, "home-agent", "personal")
    ask = {"query": "mangoes", "limit": 50}
    async with connect(served.url, home) as personal, connect(served.url, served.token) as work:
        for _ in range(3):  # whichever worker answers, each has answered both before
            everything = await personal.call_tool("recall", ask)
            fenced = await work.call_tool("recall", ask)
            assert everything.structured_content["count"] > 0
            assert fenced.structured_content["count"] == 0
