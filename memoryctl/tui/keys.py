"""The registry of memoryctl's keys: every binding with a `memoryctl.` id. The help
screen and the command palette are both drawn from it."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual import events
from textual.actions import parse
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.keys import key_to_character
from textual.screen import Screen
from textual.widget import Widget

BINDING_PREFIX = "memoryctl."


def help_keys() -> list[Binding]:
    """f1 (and ?, not in the footer) show the keys: the app's, and every dialog's, as a
    dialog takes the app's keys."""
    what = "Show the keys and what they do"
    return [
        Binding("f1", "app.help", "Help", id="memoryctl.help", tooltip=what),
        Binding(
            "question_mark", "app.help", "Help", show=False, id="memoryctl.help-alt", tooltip=what
        ),
    ]


def own_bindings(node: DOMNode) -> list[Binding]:
    """memoryctl's bindings on one node, its class's first and then those it inherits
    (a dialog's f1), as Textual merges them: a class's key hides the same key below."""
    found: list[Binding] = []
    taken: set[str] = set()
    for cls in type(node).__mro__:
        if not issubclass(cls, DOMNode):
            continue
        declared = [b for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]
        keys = {one.key for one in Binding.make_bindings(declared)}
        found += [
            binding
            for binding in declared
            if (binding.id or "").startswith(BINDING_PREFIX)
            and not {one.key for one in Binding.make_bindings([binding])} <= taken
        ]
        taken |= keys
        if not cls._inherit_bindings:
            break
    return found


def keys_in_front(app: App[object], screen: Screen[object]) -> list[tuple[DOMNode, Binding]]:
    """memoryctl's bindings that can act on the screen in front, each with its node: the
    app's, the screen's and its widgets'. A dialog (a modal screen) takes every key but
    the app's priority ones (ctrl+q), as Textual sends keys, so the app's others (import,
    sync) are no key of a dialog's; nor are the screens' numbers, priority keys the app
    turns off in a dialog (`MemoryApp.screen_keys_work`)."""
    return [
        (node, binding)
        for node in [app, screen, *screen.query("*")]
        for binding in own_bindings(node)
        if node is not app or not screen.is_modal or (binding.priority and allowed(app, binding))
    ]


def allowed(node: DOMNode, binding: Binding) -> bool:
    """Whether `node` lets its binding act now (its `check_action`)."""
    _, name, parameters = parse(binding.action)
    return node.check_action(name, parameters) is not False


def registered_bindings(bindings: Iterable[Binding]) -> list[Binding]:
    """These bindings once each and one a key (a binding of "],ctrl+pagedown" gives two):
    the registry help is drawn from."""
    found: dict[tuple[str, str], Binding] = {}
    for binding in bindings:
        for one in Binding.make_bindings([binding]):
            found.setdefault((binding.id or "", one.key), one)
    return list(found.values())


def typed_where_focused(screen: Screen[object], node: DOMNode, key: str) -> bool:
    """Whether the widget with the focus (a text box) takes `key` as typing, before the
    binding of `node` sees it, as Textual has it: `1` or `?` in the filter, the editor
    or a dialog's answer types there."""
    focused = screen.focused
    if focused is None or node is focused or focused.loading:
        return False
    return focused.check_consume_key(key, key_to_character(key))


def box_for_letter(screen: Screen[object], key: events.Key) -> Widget | None:
    """The text box a key typed on `screen` goes to, if any: the one the screen names
    for letters (`letters_box`, Preview's message), when the key is printable and no key
    in front takes it (a number key, `?`)."""
    letters_box = getattr(screen, "letters_box", None)
    if letters_box is None or not key.is_printable:
        return None
    active = screen.active_bindings.get(key.key)
    if active is not None and active.enabled:
        return None
    box: Widget | None = letters_box()
    return box


def bound_actions(
    app: App[object], screen: Screen[object]
) -> list[tuple[Binding, partial[object]]]:
    """Each of memoryctl's keys on the app and this screen, with the call it makes: the
    command palette offers every one of them."""
    found: dict[str, tuple[Binding, partial[object]]] = {}
    for node, binding in keys_in_front(app, screen):
        if binding.id in PALETTE_SKIPS or binding.id in found:
            continue
        found[binding.id or ""] = (binding, partial(run_or_say_why, app, binding.action, node))
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
