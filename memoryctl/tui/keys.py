"""The registry of memoryctl's keys: every binding with a `memoryctl.` id. The help
screen and the command palette are both drawn from it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
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
    turns off in a dialog (`MemoryApp.check_action`)."""
    return [
        (node, binding)
        for node in [app, screen, *screen.query("*")]
        for binding in own_bindings(node)
        if node is not app or not screen.is_modal or (binding.priority and allowed(app, binding))
    ]


def allowed(node: DOMNode, binding: Binding, *, strictly: bool = False) -> bool:
    """Whether `node` lets its binding act now (its `check_action`); a binding shown but
    turned off (None: the footer dims it) counts as allowed unless `strictly`."""
    _, name, parameters = parse(binding.action)
    allows = node.check_action(name, parameters)
    return bool(allows) if strictly else allows is not False


def registered_bindings(bindings: Iterable[Binding]) -> list[Binding]:
    """These bindings once each and one a key (a binding of "],ctrl+pagedown" gives two):
    the registry help is drawn from."""
    found: dict[tuple[str, str], Binding] = {}
    for binding in bindings:
        for one in Binding.make_bindings([binding]):
            found.setdefault((binding.id or "", one.key), one)
    return list(found.values())


@dataclass(frozen=True)
class KeysNow:
    """The keys of the screen in front as they stand now, one binding a key: those that
    act, those that do nothing now with why (the reason their node gives, "" for none),
    and those the text box with the focus types."""

    acting: list[Binding]
    off: list[tuple[Binding, str]]
    typed: list[Binding]

    def why_off(self, key: str) -> str | None:
        return next((why for binding, why in self.off if binding.key == key), None)


def keys_now(app: App[object], screen: Screen[object]) -> KeysNow:
    """memoryctl's keys where the focus is, each key once, as Textual sends it: the app's
    priority keys first (from the app down to the focus), then from the widget with the
    focus up to the app. A key goes to the first binding that acts now; two bindings of
    one key (esc on the filters and on the screen) are one row, the one that acts. A key
    whose bindings are all off is off; one the text box with the focus takes is typed.
    Keys of widgets away from the focus (the filter's ↓ while the list has it) are not
    keys here."""
    from memoryctl.tui.screens.base import why_it_is_off

    focused = screen.focused
    chain = list(focused.ancestors_with_self) if focused and not focused.loading else []
    depth = {node: at for at, node in enumerate(reversed(chain or [screen, app]))}
    found: dict[str, list[tuple[DOMNode, Binding]]] = {}
    for node, binding in keys_in_front(app, screen):
        if node in depth:
            for one in registered_bindings([binding]):
                found.setdefault(one.key, []).append((node, one))
    acting: list[Binding] = []
    off: list[tuple[Binding, str]] = []
    typed: list[Binding] = []
    for key, bindings in found.items():
        in_order = sorted(
            bindings,
            key=lambda item: (0, depth[item[0]]) if item[1].priority else (1, -depth[item[0]]),
        )
        taking = [(n, b) for n, b in in_order if not typed_where_focused(screen, n, key)]
        on = [b for n, b in taking if allowed(n, b, strictly=True)]
        if on:
            acting.append(on[0])
        elif not taking:
            typed.append(in_order[0][1])
        else:
            whys = [why_it_is_off(n, b.action) or "" for n, b in taking]
            off.append((taking[0][1], next((why for why in whys if why), "")))
    return KeysNow(acting, off, typed)


def typed_where_focused(screen: Screen[object], node: DOMNode, key: str) -> bool:
    """Whether the widget with the focus (a text box) takes `key` as typing, before the
    binding of `node` sees it, as Textual has it: `1` or `?` in the filter, the editor
    or a dialog's answer types there."""
    focused = screen.focused
    if focused is None or node is focused or focused.loading:
        return False
    # Textual names `/` "slash", a name it does not turn back into the character.
    character = "/" if key == "slash" else key_to_character(key)
    return focused.check_consume_key(key, character)


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
