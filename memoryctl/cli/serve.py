"""`memoryctl serve` (the MCP server) and `memoryctl agents` (who may use it over HTTP)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from memoryctl.cli.common import (
    UserError,
    emit_json,
    find_vault,
    note,
    port_value,
    say,
    subcommand_options,
)

DEFAULT_PORT = 8765


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _writes_note(vault) -> str | None:
    if not vault.is_git:
        return "this vault is not a git repository, so agents' writes will be refused"
    if not vault.config.autocommit:
        return "[git] autocommit is off in memoryctl.toml, so agents' writes will be refused"
    return None


MAX_WORKERS = 16


def worker_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes") from None
    if not 1 <= count <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{count} workers: give 1 to {MAX_WORKERS}")
    return count


def cmd_serve(args: argparse.Namespace) -> None:
    if args.http:
        if args.profile or args.agent:
            raise UserError(
                "over HTTP each agent's profile comes from its identity; drop --profile/--agent "
                "and add agents with `memoryctl agents add NAME --profile P`"
            )
        if not _is_loopback(args.host) and not args.allow_remote:
            raise UserError(
                f"--host {args.host} would serve the vault beyond this machine; add "
                "--allow-remote if you mean it"
            )
    elif args.host != "127.0.0.1" or args.port is not None or args.allow_remote:
        raise UserError("--host, --port and --allow-remote need --http")
    elif args.workers != 1:
        raise UserError("--workers needs --http: a stdio server has one client")

    from memoryctl.storage.vault import Vault

    vault = Vault(find_vault(args.vault))
    args.opened_vault = vault  # closed by main() when the command ends
    if args.listen_fd is not None:
        _serve_as_worker(args, vault)
        return
    # Bring the index up to date in a second process while this one imports the MCP SDK
    # (about 0.7 s each at 100,000 memories): the first call is answered that much sooner.
    presync = subprocess.Popen(
        [sys.executable, "-m", "memoryctl", "--vault", str(vault.root), "reindex"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    from memoryctl.mcp import agents
    from memoryctl.mcp import server as mcp_server

    profile = args.profile
    if not args.http and args.agent:
        agents.check_name(args.agent)
        identity = agents.get_agent(vault.root, args.agent)
        if identity is not None and profile is None:
            profile = identity.profile
    server = mcp_server.make_server(
        vault, profile, None if args.http else args.agent, http=args.http
    )
    warning = _writes_note(vault)
    if warning:
        note(f"memoryctl: warning: {warning}")
    # The index opens (and syncs) in the background while the client connects.
    watcher, stop = mcp_server.keep_current(server, note, presync=presync)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        if args.http:
            agents._keyring()  # a missing keyring is reported now, not on the first request
            if not agents.list_agents(vault.root):
                note("memoryctl: no agents yet; add one with `memoryctl agents add NAME -p P`")
            if not _is_loopback(args.host):
                note(
                    f"memoryctl: WARNING: serving on {args.host}: anyone who can reach this "
                    "address can try tokens, and traffic is not encrypted. Put it behind TLS."
                )
            port = DEFAULT_PORT if args.port is None else args.port
            try:
                sock = mcp_server.listening_socket(args.host, port)
            except OSError as error:
                raise UserError(f"cannot listen on {args.host}:{port}: {error.strerror}") from None
            if args.workers > 1:
                _start_workers(args, vault.root, sock, server, workers)
            url = mcp_server.http_url(args.host, sock)
            shown = f" ({args.workers} worker processes)" if args.workers > 1 else ""
            note(f"memoryctl: serving {vault.root} over MCP at {url}{shown}")
            mcp_server.serve_http(server, args.host, sock, stateless=args.workers > 1)
        else:
            shown = vault.config.profile(profile).name
            note(f"memoryctl: serving {vault.root} over MCP on stdio (profile {shown})")
            # A client stops a stdio server with SIGTERM after closing its input; exit
            # through the normal path so a write in flight finishes first.
            signal.signal(signal.SIGTERM, _interrupt)
            mcp_server.serve_stdio(server)
    finally:
        _stop_workers(workers)
        mcp_server.finish_writes(server)
        stop.set()
        watcher.join(timeout=2)


def _start_workers(
    args: argparse.Namespace,
    root: Path,
    sock: socket.socket,
    server,
    workers: list[subprocess.Popen[bytes]],
) -> None:
    """Start the other worker processes once this one's index is in step with the files.

    Each accepts on the same socket, with its own read-only view of the one index; this
    process alone watches the vault, syncs the index and runs the live checks, so the
    workers only read it (and write what their agents send, under the vault's lock)."""
    import threading

    state = server.memoryctl_state
    command = [
        sys.executable, "-m", "memoryctl", "--vault", str(root), "serve", "--http",
        "--host", args.host, "--listen-fd", str(sock.fileno()), "--worker-of", str(os.getpid()),
    ]  # fmt: skip

    def start() -> None:
        state.ready.wait()
        for _ in range(args.workers - 1):
            workers.append(
                subprocess.Popen(command, stdin=subprocess.DEVNULL, pass_fds=[sock.fileno()])
            )

    threading.Thread(target=start, name="memoryctl-workers", daemon=True).start()


def _stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def _serve_as_worker(args: argparse.Namespace, vault) -> None:
    """One of an HTTP server's worker processes (see `_start_workers`)."""
    import threading

    from memoryctl.mcp import server as mcp_server
    from memoryctl.storage.index import SyncReport

    vault.adopt_sync(SyncReport())  # the first process keeps the index in step
    server = mcp_server.make_server(vault, http=True)
    sock = socket.socket(fileno=args.listen_fd)

    def orphaned() -> None:  # the first process is gone: stop, as it would have asked
        while os.getppid() == args.worker_of:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=orphaned, name="memoryctl-parent", daemon=True).start()
    note(f"memoryctl: worker process {os.getpid()} serving")
    try:
        mcp_server.serve_http(server, args.host, sock, stateless=True)
    finally:
        mcp_server.finish_writes(server)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


# --- agents -------------------------------------------------------------------------------


def _vault_root(args: argparse.Namespace) -> Path:
    return find_vault(args.vault).resolve()


def cmd_agents_add(args: argparse.Namespace) -> None:
    from memoryctl.mcp import agents
    from memoryctl.storage.vault import Vault

    vault = Vault(find_vault(args.vault))
    profile = vault.config.profile(args.profile).name
    created = agents.add_agent(vault.root, args.name, profile)
    agent = created.agent
    if args.json:
        emit_json({**agent.as_json(), "token": created.token})
        return
    say(f"Added agent {agent.name} (profile {agent.profile}). Its token, shown only this once:")
    say()
    say(f"    {created.token}")
    say()
    say("memoryctl keeps it only in the OS keyring. Give it to the agent's MCP client as")
    say(f"the header `Authorization: Bearer <token>`; `memoryctl agents revoke {agent.name}`")
    say("stops it working.")
    warn_unsafe_keyring()


def warn_unsafe_keyring() -> None:
    """Say loudly, on stderr, when the keyring keeps tokens unencrypted."""
    from memoryctl.mcp.keyring_safety import unsafe_keyring, unsafe_warning

    unsafe = unsafe_keyring()
    if unsafe is not None:
        note(f"WARNING: {unsafe_warning(unsafe)}")


def cmd_agents_list(args: argparse.Namespace) -> None:
    from memoryctl.mcp import agents

    root = _vault_root(args)
    listed = agents.list_agents(root)
    rows = [{**a.as_json(), "token_in_keyring": agents.has_token(root, a.name)} for a in listed]
    if args.json:
        emit_json(rows)
        return
    if rows:
        warn_unsafe_keyring()
    else:
        note("No agents. Add one with `memoryctl agents add NAME --profile P`.")
    for row in rows:
        token = "token in keyring" if row["token_in_keyring"] else "NO TOKEN in keyring"
        say(f"{row['name']:<24} profile {row['profile']:<12} added {row['created'][:10]}  {token}")


def cmd_agents_revoke(args: argparse.Namespace) -> None:
    from memoryctl.mcp import agents

    agent = agents.revoke_agent(_vault_root(args), args.name)
    if args.json:
        emit_json({**agent.as_json(), "revoked": True})
        return
    say(f"Revoked {agent.name}: its token stops working on its next request.")


def register(command) -> None:
    p = command("serve", cmd_serve, "serve the vault to agents over MCP (stdio, or --http)")
    p.add_argument("--profile", "-p", help="stdio: the profile the agent reads through")
    p.add_argument("--agent", help="stdio: the agent's name in commits (default: the client's)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP, with agent tokens")
    p.add_argument(
        "--port", type=port_value, help=f"HTTP port (default {DEFAULT_PORT}; 0 picks one)"
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    p.add_argument(
        "--allow-remote", action="store_true", help="allow --host to be a non-loopback address"
    )
    p.add_argument(
        "--workers",
        type=worker_count,
        default=1,
        help="HTTP: processes that answer calls side by side (default 1)",
    )
    p.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)  # a worker's socket
    p.add_argument("--worker-of", type=int, help=argparse.SUPPRESS)  # a worker's first process

    p = command("agents", _agents_usage, "manage the agents that may use the HTTP server")
    sub = p.add_subparsers(dest="agents_command", metavar="ACTION", parser_class=type(p))
    common = subcommand_options()
    a = sub.add_parser("add", parents=[common], help="add an agent and print its token once")
    a.add_argument("name", metavar="NAME")
    a.add_argument("--profile", "-p", required=True, help="the profile the agent reads through")
    a.set_defaults(func=cmd_agents_add)
    a = sub.add_parser("list", parents=[common], help="list agents (never their tokens)")
    a.set_defaults(func=cmd_agents_list)
    a = sub.add_parser("revoke", parents=[common], help="revoke an agent and its token")
    a.add_argument("name", metavar="NAME")
    a.set_defaults(func=cmd_agents_revoke)


def _agents_usage(args: argparse.Namespace) -> None:
    raise UserError("name an action: memoryctl agents add|list|revoke")
