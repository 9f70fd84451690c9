"""Agent identities and their tokens.

An agent that reaches the vault over HTTP proves who it is with a random token. The
token lives only in the OS keyring (service `memoryctl`, user `<vault key>:<name>`);
it is printed once when the agent is added and written nowhere else: not in the
vault, not in the index, not in a log. What is not secret (the agent's name, its
profile, when it was added) is kept in `agents.json` in the user's config folder,
keyed by the vault's real path, so that the vault itself can be shared through git
without sharing who may write to it.

Tokens are checked on every request, so revoking an agent takes effect on its next
request without restarting the server. A server remembers a token it verified (by its
hash, for at most a minute) only while `agents.json` is unchanged, and a revoke always
rewrites that file first.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from memoryctl.moments import iso
from memoryctl.storage.atomic import ChangedOnDisk, current_sha, write_atomic
from memoryctl.storage.vault import VaultError

SERVICE = "memoryctl"
IDENTITIES_FILE = "agents.json"
NAME_RULE = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")
# A token is 43 characters; anything much longer is not one of ours and is not looked up.
MAX_TOKEN_LENGTH = 256

NO_KEYRING = """\
No usable OS keyring was found, and memoryctl keeps agent tokens only in a keyring.
Install or unlock one of these, then run the command again:
  - on a Linux desktop: the Secret Service (GNOME Keyring or KWallet), with the
    `secretstorage` Python package (`pip install secretstorage`);
  - on macOS and Windows: the system keychain works without extra packages;
  - on a headless server: `pip install keyrings.alt` and set
    PYTHON_KEYRING_BACKEND=keyrings.alt.file.PlaintextKeyring (tokens are then kept in
    a file that only your user can read, outside the vault).
`keyring --list-backends` shows what Python can use."""


class KeyringUnavailable(VaultError):
    """No keyring backend can hold a token; the message names what to install."""


@dataclass(frozen=True)
class Agent:
    name: str
    profile: str
    created: str

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "profile": self.profile, "created": self.created}


@dataclass(frozen=True)
class NewAgent:
    agent: Agent
    token: str  # shown to the person once, then only the keyring has it


def vault_key(root: Path) -> str:
    """A short, stable key for a vault: the hash of its real path."""
    real = os.path.realpath(root)
    return hashlib.sha256(real.encode("utf-8")).hexdigest()[:16]


def identities_path() -> Path:
    return Path(platformdirs.user_config_dir("memoryctl")) / IDENTITIES_FILE


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RULE.fullmatch(name):
        raise VaultError(
            f"agent name {name!r} must be 1 to 40 characters: lowercase letters, digits, "
            "'.', '_' or '-', starting with a letter or digit"
        )
    return name


# --- the keyring -------------------------------------------------------------------------


def _keyring():
    """The keyring backend, or a clear error that names the backends to install."""
    import keyring
    from keyring.backends import chainer, fail, null
    from keyring.errors import KeyringError

    try:
        backend = keyring.get_keyring()
    except KeyringError as error:
        raise KeyringUnavailable(f"{NO_KEYRING}\n({error})") from None
    unusable = isinstance(backend, fail.Keyring | null.Keyring) or (
        isinstance(backend, chainer.ChainerBackend) and not backend.backends
    )
    if unusable:
        raise KeyringUnavailable(NO_KEYRING)
    return backend


def keyring_problem() -> str | None:
    """What stops a keyring from holding tokens here (naming what to install), or None."""
    try:
        _keyring()
    except KeyringUnavailable as error:
        return str(error)
    return None


def _keyring_call(method: str, *args: str) -> Any:
    from keyring.errors import KeyringError, PasswordDeleteError

    backend = _keyring()
    try:
        return getattr(backend, method)(SERVICE, *args)
    except PasswordDeleteError:
        return None  # already gone: revoking twice is not an error
    except KeyringError as error:
        raise KeyringUnavailable(f"{NO_KEYRING}\n({type(error).__name__}: {error})") from None


def _account(root: Path, name: str) -> str:
    return f"{vault_key(root)}:{name}"


# --- identities ----------------------------------------------------------------------------


def _read_store(path: Path) -> tuple[dict[str, Any], str | None]:
    sha = current_sha(path)
    if sha is None:
        return {"version": 1, "vaults": {}}, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise VaultError(f"{path} cannot be read ({error}); fix or remove it") from None
    if not isinstance(data, dict) or not isinstance(data.get("vaults"), dict):
        raise VaultError(f"{path} is not a memoryctl agents file; fix or remove it")
    return data, sha


def _vault_entry(data: dict[str, Any], root: Path) -> dict[str, Any]:
    real = os.path.realpath(root)
    entry = data["vaults"].setdefault(real, {})
    entry.setdefault("agents", {})
    return entry


def _write_store(path: Path, data: dict[str, Any], sha: str | None) -> None:
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        write_atomic(path, text.encode("utf-8"), sha)
    except ChangedOnDisk:
        raise VaultError(
            f"{path} changed while memoryctl was updating it; run the command again"
        ) from None
    os.chmod(path, 0o600)


def list_agents(root: Path) -> list[Agent]:
    """The agents of this vault, by name."""
    data, _ = _read_store(identities_path())
    entry = data["vaults"].get(os.path.realpath(root), {})
    agents = []
    for name, info in sorted((entry.get("agents") or {}).items()):
        if isinstance(info, dict) and NAME_RULE.fullmatch(name):
            agents.append(
                Agent(name, str(info.get("profile", "default")), str(info.get("created")))
            )
    return agents


def get_agent(root: Path, name: str) -> Agent | None:
    return next((a for a in list_agents(root) if a.name == name), None)


def add_agent(root: Path, name: str, profile: str, *, now: dt.datetime | None = None) -> NewAgent:
    """Create an identity and its token. The caller shows the token once."""
    check_name(name)
    path = identities_path()
    data, sha = _read_store(path)
    entry = _vault_entry(data, root)
    if name in entry["agents"]:
        raise VaultError(
            f"an agent named {name!r} already exists; revoke it first or pick another name"
        )
    _keyring()  # fail before creating anything when no keyring can hold the token
    token = secrets.token_urlsafe(32)
    _keyring_call("set_password", _account(root, name), token)
    created = iso(now or dt.datetime.now(dt.UTC))
    entry["agents"][name] = {"profile": profile, "created": created}
    try:
        _write_store(path, data, sha)
    except BaseException:
        _keyring_call("delete_password", _account(root, name))
        raise
    return NewAgent(Agent(name, profile, created), token)


def revoke_agent(root: Path, name: str) -> Agent:
    """Forget an agent: its identity first, so a half-done revoke never leaves it valid."""
    path = identities_path()
    data, sha = _read_store(path)
    entry = data["vaults"].get(os.path.realpath(root), {})
    info = (entry.get("agents") or {}).get(name)
    if info is None:
        known = ", ".join(a.name for a in list_agents(root)) or "none"
        raise VaultError(f"no agent named {name!r} for this vault (agents: {known})")
    del entry["agents"][name]
    if not entry["agents"]:
        del data["vaults"][os.path.realpath(root)]
    _write_store(path, data, sha)
    _keyring_call("delete_password", _account(root, name))
    return Agent(name, str(info.get("profile", "default")), str(info.get("created")))


def has_token(root: Path, name: str) -> bool:
    return _keyring_call("get_password", _account(root, name)) is not None


def authenticate(root: Path, token: str) -> Agent | None:
    """The agent this token belongs to, or None. Reads the identities and keyring afresh.

    Every agent's token is compared, in constant time, whether or not an earlier one
    matched, so the time taken does not say which agent (if any) was close.
    """
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    offered = token.encode("utf-8", errors="replace")
    found: Agent | None = None
    for agent in list_agents(root):
        stored = _keyring_call("get_password", _account(root, agent.name))
        if stored is not None and hmac.compare_digest(stored.encode("utf-8"), offered):
            found = agent
    return found


# --- attribution ----------------------------------------------------------------------------

SOURCE_PREFIX = "agent "


def source_ref_for(agent: str, detail: str | None = None) -> str:
    """The `source.ref` of a memory an agent wrote: the agent first, then its own note."""
    return f"{SOURCE_PREFIX}{agent}" + (f": {detail}" if detail else "")


def agent_of(source_kind: str | None, source_ref: str | None) -> str | None:
    """Which agent wrote a memory, read back from its source (None for anything else)."""
    if source_kind != "inference" or not source_ref or not source_ref.startswith(SOURCE_PREFIX):
        return None
    name = source_ref[len(SOURCE_PREFIX) :].split(":", 1)[0].strip()
    return name if NAME_RULE.fullmatch(name) else None


def commit_trailer(agent: str, tool: str) -> str:
    """The lines every commit made for an agent ends with (git trailers)."""
    return f"Agent: {agent}\nTool: {tool} (MCP)"


class VerifiedTokens:
    """The tokens a server verified lately, so a busy agent's every request does not
    read the identities and the keyring again.

    A token is remembered by its SHA-256, with the agent it names, while `agents.json`
    keeps the size, modification time and inode it had when the token was checked, and
    for at most `TTL` seconds. Revoking an agent rewrites `agents.json` before it
    deletes the token, so a revoked token fails on its next request as before; a token
    taken out of the keyring some other way fails within the minute. A token that fails
    is never remembered."""

    TTL = 60.0
    MAX = 1024

    def __init__(self, root: Path) -> None:
        self.root = root
        # Where the identities are, worked out once: a request costs one `stat` of it.
        self.identities = identities_path()
        self._seen: dict[bytes, tuple[Agent, tuple[int, int, int] | None, float]] = {}
        self._lock = threading.Lock()

    def remembered(self, token: str) -> Agent | None:
        """The agent of a token verified lately and still good, without the keyring."""
        if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH:
            return None
        with self._lock:
            hit = self._seen.get(_digest(token))
        if hit is None or time.monotonic() - hit[2] > self.TTL:
            return None
        return hit[0] if hit[1] == _stamp(self.identities) else None

    def authenticate(self, token: str) -> Agent | None:
        """`authenticate`, remembered while it stays true (see the class)."""
        return self.remembered(token) or self.verify(token)

    def verify(self, token: str) -> Agent | None:
        """`authenticate` against the identities and the keyring, remembering a token
        that holds; for a caller that asked `remembered` already."""
        stamp = _stamp(self.identities)
        agent = authenticate(self.root, token)
        if agent is None:
            return None
        with self._lock:
            if len(self._seen) >= self.MAX:
                self._seen.clear()
            self._seen[_digest(token)] = (agent, stamp, time.monotonic())
        return agent


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", errors="replace")).digest()


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino
