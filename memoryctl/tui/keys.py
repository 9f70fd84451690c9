"""The registry of memoryctl's keys: every binding with a `memoryctl.` id. The help
screen and the command palette are both drawn from it."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen

BINDING_PREFIX = "memoryctl."


def registered_bindings(nodes: Iterable[DOMNode]) -> list[Binding]:
    """memoryctl's own bindings on these nodes, once each and one a key (a binding of
    "],ctrl+pagedown" gives two): the registry help is drawn from."""
    found: dict[tuple[str, str], Binding] = {}
    for node in nodes:
        for binding in node.BINDINGS:
            if isinstance(binding, Binding) and (binding.id or "").startswith(BINDING_PREFIX):
                for one in Binding.make_bindings([binding]):
                    found.setdefault((binding.id or "", one.key), one)
    return list(found.values())


def bound_actions(
    app: App[object], screen: Screen[object]
) -> list[tuple[Binding, partial[object]]]:
    """Each of memoryctl's keys on the app and this screen, with the call it makes: the
    command palette offers every one of them."""
    found: dict[str, tuple[Binding, partial[object]]] = {}
    for node in [app, screen, *screen.query("*")]:
        for binding in node.BINDINGS:
            if not isinstance(binding, Binding) or not (binding.id or "").startswith(
                BINDING_PREFIX
            ):
                continue
            if binding.id in PALETTE_SKIPS or binding.id in found:
                continue
            found[binding.id] = (binding, partial(run_or_say_why, app, binding.action, node))
    return list(found.values())


async def run_or_say_why(app: App[object], action: str, node: DOMNode) -> None:
    """Run an action chosen in the palette; one its screen turns off now says why, as
    its key does."""
    from memoryctl.tui.screens.base import why_it_is_off

    why = why_it_is_off(node, action)
    if why:
        app.notify(why, severity="warning")
        return
    await app.run_action(action, node)


# Moving a cursor is not something a person looks for in a palette.
PALETTE_SKIPS = frozenset(
    f"memoryctl.list.{key}" for key in ("up", "down", "page-up", "page-down", "first", "last")
) | {"memoryctl.help-alt", "memoryctl.filter.to-list"}
