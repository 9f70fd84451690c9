"""The MCP face of memoryctl: the vault served to agents, over stdio or streamable HTTP.

Every tool is a thin call into the core: the bundle for `get_context` (the same bytes
as `memoryctl preview`), `agent_view` for what an agent may read, `agent_writes` for
what it may write, and the review queue for proposals. The server holds no memory
semantics; it resolves who is calling, turns the core's refusals into tool errors the
agent can act on, and keeps the index current while it runs.

Over stdio the agent runs as the user's own process: no token, and the profile comes
from the command line. Over HTTP each request carries an agent's token, verified per
request (against the OS keyring, or `agents.VerifiedTokens` while the identities are
unchanged, so a revoked token fails on its next request), and the agent's profile
comes from its identity.
"""

from __future__ import annotations

import datetime as dt
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from memoryctl import __version__
from memoryctl.bundle import Pending
from memoryctl.mcp import agents
from memoryctl.mcp import view as agent_view
from memoryctl.mcp import writes as agent_writes
from memoryctl.mcp.answers import RecentAnswers
from memoryctl.mcp.guidance import (
    DEPRECATES_FIELD,
    PROMPT_NAME,
    REMEMBER_DESCRIPTION,
    SYSTEM_PROMPT,
)
from memoryctl.mcp.view import Caller
from memoryctl.storage.config import CONFIG_NAME, ConfigError, load_config
from memoryctl.storage.gitrepo import GitError
from memoryctl.storage.vault import Vault, VaultBusy, VaultError

SERVER_NAME = "memoryctl"
PINS_URI = "memoryctl://pins"
CONTEXT_URI = "memoryctl://context"
STDIO_AGENT = "stdio"
WRITE_LEDGER = "agent-writes.sqlite3"
T = TypeVar("T")
READY_TIMEOUT = 300.0  # a cold index of 100,000 memories takes about 20 s
_REFUSALS = (VaultError, ConfigError, GitError)
# How many first asks one server process makes at once, each in a worker thread. The
# bundle is Python and SQLite under one interpreter lock: twenty at once cost more than
# twice the CPU each of two at once, as each SQLite step hands the lock to another
# thread (docs/ARCHITECTURE.md, "What a first ask costs"). More calls at once need more
# processes (`serve --workers`), not more threads.
FIRST_ASKS_AT_ONCE = 2


def agent_label(name: object) -> str | None:
    """A client's own name, made fit to be an agent's name (for stdio attribution)."""
    if not isinstance(name, str):
        return None
    label = re.sub(r"[^a-z0-9._-]+", "-", name.casefold()).strip("-._")[:40]
    return label or None


class AgentTokens:
    """The SDK's TokenVerifier: a bearer token is valid if it is an agent's, right now."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.verified = agents.VerifiedTokens(root)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            # A token verified lately is answered at once; any other reads the keyring
            # in a worker thread, off the event loop.
            agent = self.verified.remembered(token) or await anyio.to_thread.run_sync(
                self.verified.verify, token
            )
        except VaultError as error:
            # Never the token, and nothing about which agents exist: the client gets a 401.
            sys.stderr.write(f"memoryctl: could not check a token: {error}\n")
            return None
        if agent is None:
            return None
        return AccessToken(
            token="verified", client_id=agent.name, scopes=[], claims={"profile": agent.profile}
        )


@dataclass
class ServerState:
    """Who the server serves and how: the vault, the stdio defaults, the write gate."""

    vault: Vault
    http: bool
    profile: str | None = None
    agent: str | None = None
    gate: agent_writes.WriteGate = field(init=False)
    # The reads' answers, given again while nothing they were made from changed.
    answers: RecentAnswers[CallToolResult] = field(init=False, default_factory=RecentAnswers)
    # Set once the index is open and in step with the files; calls wait for it, so the
    # server can answer the client's handshake while the index is still syncing.
    ready: threading.Event = field(init=False, default_factory=threading.Event)
    failed: str | None = field(init=False, default=None)
    watching: threading.Event = field(init=False, default_factory=threading.Event)
    _config_stamp: tuple[int, int] | None = field(init=False, default=None)
    _config_lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _first_asks: anyio.CapacityLimiter | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.gate = agent_writes.WriteGate(
            agent_writes.writes_per_minute(self.vault.config), ledger=write_ledger(self.vault)
        )
        self._config_stamp = self._stamp()
        self.ready.set()  # until keep_current() says otherwise, the index opens on first use

    def wait_ready(self) -> None:
        if not self.ready.wait(timeout=READY_TIMEOUT):
            raise ToolError("memoryctl is still indexing the vault; try again in a minute")
        if self.failed:
            raise ToolError(self.failed)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = (self.vault.root / CONFIG_NAME).stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def refresh_config(self) -> None:
        """Re-read memoryctl.toml when the person edits it, so profile changes apply now."""
        stamp = self._stamp()
        if stamp == self._config_stamp:
            return
        with self._config_lock:
            config = load_config(self.vault.root)
            self.gate.per_minute = agent_writes.writes_per_minute(config)
            self.vault.config = config
            self._config_stamp = stamp

    async def read(
        self,
        ctx: Context,
        key: Callable[[Caller], Hashable],
        make: Callable[[Caller, Pending], CallToolResult],
    ) -> CallToolResult:
        """A read tool's answer for the caller: one remembered (see `RecentAnswers`) is
        given on the event loop at once; any other is made in a worker thread, as every
        write is, so no search or bundle ever holds up the other agents' calls, and no
        more than `FIRST_ASKS_AT_ONCE` of them at once (`first_asks`)."""
        if self.ready.is_set():  # naming the caller costs nothing but a `stat`
            hit = _refusing(lambda: self.answers.remembered(self.vault, key(self.caller(ctx))))
            if hit is not None:
                return hit

        def run() -> CallToolResult:
            caller = self.caller(ctx)
            return self.answers.answer(self.vault, key(caller), lambda asked: make(caller, asked))

        return await anyio.to_thread.run_sync(_refusing, run, limiter=self.first_asks())

    def first_asks(self) -> anyio.CapacityLimiter:
        """The worker threads that make first asks, made on the event loop's first one."""
        if self._first_asks is None:
            self._first_asks = anyio.CapacityLimiter(FIRST_ASKS_AT_ONCE)
        return self._first_asks

    def caller(self, ctx: Context | None = None) -> Caller:
        self.wait_ready()
        self.refresh_config()
        if self.http:
            token = get_access_token() or _request_token(ctx)
            if token is None:
                raise ToolError("not authenticated: send Authorization: Bearer TOKEN")
            profile = str((token.claims or {}).get("profile", "default"))
            try:
                chosen = self.vault.config.profile(profile)
            except ConfigError:
                raise ToolError(
                    f"agent {token.client_id!r} has profile {profile!r}, which memoryctl.toml no "
                    "longer defines; ask the user to fix the agent's profile"
                ) from None
            return Caller(token.client_id, chosen, "http")
        name = self.agent or _client_name(ctx) or STDIO_AGENT
        return Caller(name, self.vault.config.profile(self.profile), "stdio")


def write_ledger(vault: Vault) -> Path:
    """Where every server process of a vault counts its agents' recent writes: beside
    the index, outside the vault."""
    return vault.db_path.parent / WRITE_LEDGER


def _request_token(ctx: Context | None) -> AccessToken | None:
    request = ctx.request_context.request if ctx is not None else None
    user = request.scope.get("user") if request is not None else None
    return getattr(user, "access_token", None)


def _client_name(ctx: Context | None) -> str | None:
    try:
        params = ctx.session.client_params if ctx is not None else None
    except (ValueError, AttributeError):
        return None
    info = getattr(params, "client_info", None)
    return agent_label(getattr(info, "name", None))


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _refusing(run: Callable[[], T]) -> T:
    try:
        return run()
    except ToolError:
        raise
    except VaultBusy as busy:
        raise ToolError(
            f"the vault is busy (held by {busy.holder or 'another process'}); nothing was "
            "stored. Call the tool again in a few seconds"
        ) from None
    except _REFUSALS as error:
        raise ToolError(str(error)) from None


READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
ADDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def make_server(
    vault: Vault,
    profile: str | None = None,
    agent: str | None = None,
    *,
    http: bool = False,
    issuer_url: str = "http://127.0.0.1",
) -> MCPServer:
    """The MCP server over one vault.

    Over stdio (`http=False`) every call is made as `agent` (or the client's own name)
    through `profile`. Over HTTP each request's token names the agent and its profile.
    """
    if http and (profile is not None or agent is not None):
        raise VaultError("over HTTP the agent and its profile come from its token")
    vault.config.profile(profile)  # an unknown profile is reported before serving
    state = ServerState(vault, http, profile, agents.check_name(agent) if agent else None)
    auth: dict[str, Any] = {}
    if http:
        auth = {
            "token_verifier": AgentTokens(vault.root),
            "auth": AuthSettings(issuer_url=issuer_url, resource_server_url=None),
        }
    server = MCPServer(
        SERVER_NAME,
        title="memoryctl",
        description="The user's curated long-term memory: context, recall, remember, propose.",
        instructions=SYSTEM_PROMPT,
        version=__version__,
        log_level="WARNING",
        **auth,
    )
    server.memoryctl_state = state  # type: ignore[attr-defined]  # for tests and serve()

    @server.tool(
        description=(
            "Get the user's memory for this turn: every pinned memory, then the memories "
            "relevant to `message`, each with `now:` lines that show what holds today. Call "
            "it at the start of each turn with the user's latest message. The text is "
            "exactly what `memoryctl preview` shows the user; the structured report lists "
            "ids, sources and what was left out."
        ),
        annotations=READ_ONLY,
    )
    async def get_context(
        ctx: Context,
        message: Annotated[
            str | None, Field(description="The user's latest message (up to 64 KB).")
        ] = None,
    ) -> CallToolResult:
        def make(caller: Caller, pending: Pending) -> CallToolResult:
            bundle, report = agent_view.context_for(vault, caller, message, pending)
            return _result(bundle.text, report)

        return await state.read(ctx, lambda caller: ("get_context", caller.profile, message), make)

    @server.tool(
        description=(
            "Search the user's current memories (full text, best first). Each result shows "
            "its `now:` lines (corrections that hold today), its id, kind, status and source. "
            "Use ids from here with remember's derived_from and with propose."
        ),
        annotations=READ_ONLY,
    )
    async def recall(
        ctx: Context,
        query: Annotated[str, Field(description="A few keywords: a name, repo, topic.")],
        limit: Annotated[
            int | None, Field(description="How many memories, 1 to 50 (default 10).")
        ] = None,
        namespace: Annotated[
            str | None, Field(description="Only this namespace (default: all you can see).")
        ] = None,
    ) -> CallToolResult:
        def make(caller: Caller, pending: Pending) -> CallToolResult:
            shelf = agent_view.recall_for(vault, caller, query, limit, namespace, pending)
            return _result(shelf.text, shelf.as_json())

        def key(caller: Caller) -> Hashable:
            return ("recall", caller.profile, query, limit, namespace)

        return await state.read(ctx, key, make)

    @server.tool(description=REMEMBER_DESCRIPTION, annotations=ADDS)
    def remember(
        ctx: Context,
        body: Annotated[
            str, Field(description="The memory, as a sentence that stands alone (≤ 64 KB).")
        ],
        title: Annotated[str | None, Field(description="A short title (optional).")] = None,
        kind: Annotated[
            str | None,
            Field(
                description="fact, preference, constraint, plan, event, procedure, summary or "
                "correction (default: fact, or correction with deprecates)."
            ),
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Up to 20 tags.")] = None,
        deprecates: Annotated[list[str] | None, Field(description=DEPRECATES_FIELD)] = None,
        derived_from: Annotated[
            list[str] | None,
            Field(description="Ids of the memories this one was built from (a summary's sources)."),
        ] = None,
        source_ref: Annotated[
            str | None,
            Field(description="Where you learned it: a conversation, document or URL (one line)."),
        ] = None,
    ) -> CallToolResult:
        def run() -> CallToolResult:
            request = agent_writes.AgentMemory(
                body, title, kind, tags, deprecates, derived_from, source_ref
            )
            stored = agent_writes.remember(vault, state.caller(ctx), request, state.gate)
            return _result(stored.text, stored.as_json())

        return _refusing(run)

    @server.tool(
        description=(
            "Propose a change to a memory for the user to decide: 'retire' (no longer true "
            "or relevant), 'replace' (with the new text in `body`), or 'review' (hold it out "
            "of context until the user checks it). You cannot change a memory yourself. Give "
            "the target's id (from recall or get_context) and a reason the user can judge. "
            "For a fact that changed, prefer remember with `deprecates`."
        ),
        annotations=ADDS,
    )
    def propose(
        ctx: Context,
        action: Annotated[str, Field(description="retire, replace or review.")],
        target: Annotated[str, Field(description="The memory's id.")],
        reason: Annotated[str, Field(description="Why, in a sentence or two.")],
        body: Annotated[
            str | None, Field(description="For replace only: the memory's new text.")
        ] = None,
    ) -> CallToolResult:
        def run() -> CallToolResult:
            made = agent_writes.propose(
                vault, state.caller(ctx), action, target, reason, body, state.gate
            )
            return _result(made.text, made.as_json())

        return _refusing(run)

    @server.tool(
        description=(
            "List the user's pinned memories: the facts that are always in context, in the "
            "user's order."
        ),
        annotations=READ_ONLY,
    )
    async def pins(ctx: Context) -> CallToolResult:
        def make(caller: Caller, pending: Pending) -> CallToolResult:
            shelf = agent_view.pins_for(vault, caller, pending)
            return _result(shelf.text, shelf.as_json())

        return await state.read(ctx, lambda caller: ("pins", caller.profile), make)

    @server.resource(
        PINS_URI,
        name="pins",
        title="Pinned memories",
        description="The pinned memories this agent may see, in the user's order.",
        mime_type="text/markdown",
    )
    def pins_resource() -> str:
        try:
            return agent_view.pins_for(vault, state.caller()).text
        except (*_REFUSALS, ToolError) as error:
            raise ResourceError(str(error)) from None

    @server.resource(
        CONTEXT_URI,
        name="context",
        title="Current context bundle",
        description="The bundle with no message: the pins, as `memoryctl preview` shows them.",
        mime_type="text/markdown",
    )
    def context_resource() -> str:
        try:
            bundle, _ = agent_view.context_for(vault, state.caller(), None)
        except (*_REFUSALS, ToolError) as error:
            raise ResourceError(str(error)) from None
        return bundle.text

    @server.prompt(
        name=PROMPT_NAME,
        title="How to use memoryctl (for the system prompt)",
        description=(
            "Guidance for the system prompt: when to call each tool, and above all when to "
            "set `deprecates` on a correction."
        ),
    )
    def memory_guidance() -> str:
        return SYSTEM_PROMPT

    return server


# --- running ---------------------------------------------------------------------------------


def keep_current(
    server: MCPServer,
    notice: Callable[[str], None],
    presync: subprocess.Popen[bytes] | None = None,
) -> tuple[threading.Thread, threading.Event]:
    """Open the index in the background, then keep it current while the server runs.

    Opening brings the index in step with the files (at 100,000 memories about a second,
    which the client's handshake overlaps); calls wait until it has. Then the thread
    watches the vault and re-indexes what an editor or `git pull` changes. Syncing before
    every call instead would cost that second on each call (bench/mcp_bench.py).
    """
    from memoryctl.storage.watch import watch_vault

    state: ServerState = server.memoryctl_state  # type: ignore[attr-defined]
    vault = state.vault
    stop = threading.Event()
    state.ready.clear()

    def run() -> None:
        try:
            # A presync process that succeeded has just scanned the files; the watcher's
            # full catch-up sync below covers anything edited since.
            if presync is not None and presync.wait() == 0:
                from memoryctl.storage.index import SyncReport

                vault.adopt_sync(SyncReport())
            _ = vault.index
            for text in vault.notices:
                notice(f"memoryctl: {text}")
            vault.index.notices.clear()
        except Exception as error:
            state.failed = f"the vault's index could not be opened: {error}"
            notice(f"memoryctl: {state.failed}")
            return
        finally:
            state.ready.set()
        try:
            check_what_changed(state, notice)
            for _ in watch_vault(vault, stop, watching=state.watching):
                check_what_changed(state, notice)
        except Exception as error:  # the server keeps serving; it only stops noticing edits
            notice(f"memoryctl: stopped watching the vault: {error}")

    thread = threading.Thread(target=run, name="memoryctl-index", daemon=True)
    thread.start()
    return thread, stop


def check_what_changed(state: ServerState, notice: Callable[[str], None]) -> None:
    """The live checks over what the index just took in (an edit, a pull, an agent's
    write), one write at a time with the agents' own."""
    from memoryctl.live_checks import check_changes

    try:
        with state.gate.lock:
            report = check_changes(state.vault, now=dt.datetime.now(dt.UTC))
    except Exception as error:  # a failed check never stops the server; the next one retries
        notice(f"memoryctl: the checks on what changed could not run: {error}")
        return
    if report.proposed:
        notice(f"memoryctl: {len(report.proposed)} new proposal(s) for the person to review")
    if report.withdrawn:
        notice(
            f"memoryctl: {len(report.withdrawn)} proposal(s) withdrawn: what proposed them changed"
        )
    if report.reopened:
        notice(f"memoryctl: {len(report.reopened)} withdrawn proposal(s) pending again")


def finish_writes(server: MCPServer, timeout: float = 30.0) -> None:
    """Wait for a write in flight, so stopping the server never cuts one short."""
    state: ServerState = server.memoryctl_state  # type: ignore[attr-defined]
    if state.gate.lock.acquire(timeout=timeout):
        state.gate.lock.release()


def serve_stdio(server: MCPServer) -> None:
    server.run("stdio")


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (port 0 picks a free one), to serve on, and for the
    worker processes of the same server to share."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def http_url(host: str, sock: socket.socket) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{sock.getsockname()[1]}/mcp"


def serve_http(server: MCPServer, host: str, sock: socket.socket, *, stateless: bool) -> None:
    """Serve streamable HTTP on a bound socket until stopped.

    `stateless` when several processes accept on the same socket: a client's requests
    may reach any of them, so none may keep a session that only it knows. Each call is
    answered with one JSON response, not an event stream: no tool sends progress or
    asks the client anything mid-call, so a stream would only add its own frames and
    tasks to every call.
    """
    import uvicorn

    app = server.streamable_http_app(host=host, stateless_http=stateless, json_response=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
