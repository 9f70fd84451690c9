"""The one entry point every face uses to get an agent's context for its next turn."""

from __future__ import annotations

import datetime as dt
import weakref

from memoryctl.bundle import Bundle, Pending, build_bundle, contests_in
from memoryctl.contested import Contest
from memoryctl.memory import Memory
from memoryctl.proposals import PendingAbout, ProposalStore
from memoryctl.rules import folded_exclusions, load_registry
from memoryctl.storage.vault import Vault, VaultError

# One per open vault, so a process that builds a bundle for every message (the MCP
# server, the TUI's preview) lists the queue again only when it changed.
_PENDING: weakref.WeakKeyDictionary[Vault, PendingAbout] = weakref.WeakKeyDictionary()


def pending_about(vault: Vault) -> PendingAbout:
    """What finds the proposals waiting for the person's decision about given memories:
    each contests its targets."""
    found = _PENDING.get(vault)
    if found is None:
        found = _PENDING[vault] = PendingAbout(ProposalStore.of(vault))
    return found


def context_bundle(
    vault: Vault,
    *,
    profile: str | None = None,
    message: str | None = None,
    budget: int | None = None,
    now: dt.datetime | None = None,
    pending: Pending | None = None,
) -> Bundle:
    """The bundle for a profile and message. `pending` is what tells the pending
    proposals about given memories (by default the vault's own `pending_about`)."""
    chosen = vault.config.profile(profile)
    if budget is not None and budget < 1:
        raise VaultError(f"the budget must be at least 1 token (got {budget})")
    registry = load_registry(vault.config)
    return build_bundle(
        vault.index,
        vault.config,
        chosen,
        message,
        budget=budget,
        now=now,
        excludes=folded_exclusions(registry),
        registry=registry,
        pending=pending_about(vault) if pending is None else pending,
    )


def contests_of(
    vault: Vault, memories: list[Memory], pending: Pending | None = None
) -> dict[str, list[Contest]]:
    """What contests each of these memories, as the bundle shows it beneath them."""
    registry = load_registry(vault.config)
    told = pending_about(vault) if pending is None else pending
    return contests_in(vault.index, memories, registry, folded_exclusions(registry), told)
